#include "baton/model/weights/q8_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "baton/model/weights/weight_buffer.h"

namespace baton {
namespace {

// Bytes of an array of `count` T: whole cache lines (64-byte aligned, a group's loads never
// straddle two; vector loads of a last partial line stay inside the allocation).
template <typename T>
std::size_t array_bytes(std::size_t count) {
  return (std::max<std::size_t>(count * sizeof(T), 1) + 63) / 64 * 64;
}

// `count` zeroed T (a mapped buffer is zeroed already: no pass over pages not yet touched).
template <typename T>
std::shared_ptr<std::byte> aligned_zeros(std::size_t count) {
  const std::size_t bytes = array_bytes<T>(count);
  std::shared_ptr<std::byte> buffer = allocate_weight_buffer(bytes);
  if (weight_buffer_mapped_bytes(buffer) == 0) std::memset(buffer.get(), 0, bytes);
  return buffer;
}

// Round to nearest (ties to even) for |v| <= 2^22: adding 1.5 * 2^23 leaves no fraction
// bits, so the FPU rounds the sum. Unlike std::round this vectorizes on the baseline
// x86-64 (SSE2 has no rounding instruction) and never calls into libm.
float round_small(float v) {
  constexpr float kMagic = 12582912.0f;
  return (v + kMagic) - kMagic;
}

}  // namespace

float quantize_group(const float* x, int count, std::int8_t* q) {
  float amax = 0.0f;
  float poison = 0.0f;  // x * 0 is NaN exactly for an infinite or NaN x (max skips NaNs)
  for (int i = 0; i < count; ++i) {
    amax = std::max(amax, std::abs(x[i]));
    poison += x[i] * 0.0f;
  }
  if (std::isnan(poison)) {  // no NaN may reach the int8 conversion (undefined)
    std::fill_n(q, Q8Matrix::kGroup, std::int8_t{0});
    return std::numeric_limits<float>::quiet_NaN();
  }
  const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int i = 0; i < count; ++i) {
    // |x * inverse| <= 127 but for rounding; the clamp keeps a rounding up in range.
    q[i] = static_cast<std::int8_t>(std::clamp(round_small(x[i] * inverse), -127.0f, 127.0f));
  }
  std::fill(q + count, q + Q8Matrix::kGroup, std::int8_t{0});
  return amax / 127.0f;
}

Q8Matrix::Q8Matrix(int rows, int cols)
    : rows_(rows), cols_(cols), groups_((cols + kGroup - 1) / kGroup) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("a q8 matrix of " + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  values_ = aligned_zeros<std::int8_t>(static_cast<std::size_t>(rows) * stride());
  scales_ = aligned_zeros<float>(static_cast<std::size_t>(rows) * groups_);
}

void Q8Matrix::quantize_rows(int first, int count, const float* source) {
  for (int r = 0; r < count; ++r) {
    const float* row = source + static_cast<std::size_t>(r) * cols_;
    std::int8_t* q = value_data() + static_cast<std::size_t>(first + r) * stride();
    float* scales = scale_data() + static_cast<std::size_t>(first + r) * groups_;
    for (int g = 0; g < groups_; ++g) {
      const int begin = g * kGroup;
      scales[g] = quantize_group(row + begin, std::min(kGroup, cols_ - begin), q + begin);
    }
  }
}

void Q8Matrix::set_row(int row, const std::int8_t* values, const float* scales) {
  std::copy_n(values, cols_, value_data() + static_cast<std::size_t>(row) * stride());
  std::copy_n(scales, groups_, scale_data() + static_cast<std::size_t>(row) * groups_);
}

void Q8Matrix::dequantize_rows(int first, int count, float* out) const {
  for (int r = 0; r < count; ++r) {
    const std::int8_t* q = row_values(first + r);
    const float* scales = row_scales(first + r);
    float* row = out + static_cast<std::size_t>(r) * cols_;
    for (int i = 0; i < cols_; ++i) row[i] = static_cast<float>(q[i]) * scales[i / kGroup];
  }
}

bool Q8Matrix::finite() const {
  const float* s = scale_data();
  return std::all_of(s, s + static_cast<std::size_t>(rows_) * groups_,
                     [](float v) { return std::isfinite(v); });
}

std::size_t Q8Matrix::bytes() const {
  return static_cast<std::size_t>(rows_) * (stride() + groups_ * sizeof(float));
}

std::size_t Q8Matrix::releasable_bytes() const {
  const auto rows = static_cast<std::size_t>(rows_);
  return (weight_buffer_mapped_bytes(values_) > 0 ? rows * stride() : 0) +
         (weight_buffer_mapped_bytes(scales_) > 0 ? rows * groups_ * sizeof(float) : 0);
}

std::size_t Q8Matrix::release_host_copy() {
  return release_weight_buffer(values_) + release_weight_buffer(scales_);
}

}  // namespace baton
