// The portable kernel set: plain loops the compiler may vectorize for the baseline ISA.
// The 16 partial sums of each dot product keep the loops vectorizable without
// reassociating floating-point additions.
#include <bit>
#include <cmath>
#include <cstring>

#include "baton/model/cpu/kernels/simd_kernels.h"

namespace baton {
namespace {
// Named, so that in a unity build these do not meet baton::silu_mul and the like.
namespace scalar {

constexpr int kLanes = 16;

float bf16_at(const std::byte* row, int k) {
  std::uint16_t bits;
  std::memcpy(&bits, row + static_cast<std::size_t>(k) * sizeof bits, sizeof bits);
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

void dot_bf16_rows(const float* x, int rows, int in, const std::byte* w, int first, int count,
                   int out, float* y) {
  for (int o = first; o < first + count; ++o) {
    const std::byte* row = w + static_cast<std::size_t>(o) * in * sizeof(std::uint16_t);
    for (int r = 0; r < rows; ++r) {
      const float* xr = x + static_cast<std::size_t>(r) * in;
      float acc[kLanes] = {};
      int k = 0;
      for (; k + kLanes <= in; k += kLanes) {
        for (int j = 0; j < kLanes; ++j) acc[j] += xr[k + j] * bf16_at(row, k + j);
      }
      float sum = 0.0f;
      for (const float a : acc) sum += a;
      for (; k < in; ++k) sum += xr[k] * bf16_at(row, k);
      y[static_cast<std::size_t>(r) * out + o] = sum;
    }
  }
}

float dot(const float* a, const float* b, int n) {
  float acc[kLanes] = {};
  int k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += a[k + j] * b[k + j];
  }
  float sum = 0.0f;
  for (const float v : acc) sum += v;
  for (; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

void add_scaled(float a, const float* x, float* y, int n) {
  for (int k = 0; k < n; ++k) y[k] += a * x[k];
}

void dot_strided(const float* q, const float* k, std::size_t stride, int count, int n, float scale,
                 float* out) {
  for (int j = 0; j < count; ++j)
    out[j] = scale * dot(q, k + static_cast<std::size_t>(j) * stride, n);
}

void add_scaled_strided(const float* p, const float* v, std::size_t stride, int count, int n,
                        float* out) {
  for (int j = 0; j < count; ++j)
    add_scaled(p[j], v + static_cast<std::size_t>(j) * stride, out, n);
}

float exp_shifted(float* s, int n, float shift) {
  float total = 0.0f;
  for (int k = 0; k < n; ++k) total += (s[k] = std::exp(s[k] - shift));
  return total;
}

double sum_exp(const float* s, std::size_t n, float shift) {
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) total += std::exp(s[i] - shift);
  return total;
}

void silu_mul(float* gate, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace scalar
}  // namespace

const SimdKernels& scalar_simd_kernels() {
  static const SimdKernels kernels{.name = "scalar",
                                   .dot_bf16_rows = scalar::dot_bf16_rows,
                                   .dot = scalar::dot,
                                   .add_scaled = scalar::add_scaled,
                                   .dot_strided = scalar::dot_strided,
                                   .add_scaled_strided = scalar::add_scaled_strided,
                                   .exp_shifted = scalar::exp_shifted,
                                   .silu_mul = scalar::silu_mul,
                                   .sum_exp = scalar::sum_exp,
                                   .round_to_bf16 = nullptr,
                                   .dot_bf16x_rows = nullptr};
  return kernels;
}

}  // namespace baton
