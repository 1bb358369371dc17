#include "baton/model/cpu_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace baton {
namespace {

// Up to this many rows a bf16 product reads the weights directly (dot_bf16_rows).
constexpr int kDirectRows = 4;

// Weight rows per tile: about 256 KiB of f32, so a widened bf16 tile stays in L2.
int tile_rows(int cols) {
  constexpr int kTileFloats = 64 * 1024;
  return std::max(8, (kTileFloats / std::max(cols, 1)) / 8 * 8);
}

// Few rows (decode): y[r][first + i] = x[r] . w[first + i] straight from the bf16 rows,
// widening in registers. Streams each weight once, with no packing, which is what a
// memory-bound step needs; sgemm would first copy the tile twice. Compiled for AVX2+FMA
// as well as the baseline and picked at run time (GCC target_clones).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
[[gnu::target_clones("arch=x86-64-v3", "default")]]
#endif
void dot_bf16_rows(const float* x, int rows, int in, const std::byte* w, int first, int count,
                   int out, float* y) {
  constexpr int kLanes = 16;
  for (int o = first; o < first + count; ++o) {
    const std::byte* row = w + static_cast<std::size_t>(o) * in * sizeof(std::uint16_t);
    for (int r = 0; r < rows; ++r) {
      const float* xr = x + static_cast<std::size_t>(r) * in;
      float acc[kLanes] = {};
      int k = 0;
      for (; k + kLanes <= in; k += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          std::uint16_t bits;
          std::memcpy(&bits, row + (k + j) * sizeof bits, sizeof bits);
          acc[j] += xr[k + j] * std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
        }
      }
      float sum = 0.0f;
      for (const float a : acc) sum += a;
      for (; k < in; ++k) {
        std::uint16_t bits;
        std::memcpy(&bits, row + k * sizeof bits, sizeof bits);
        sum += xr[k] * std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
      }
      y[static_cast<std::size_t>(r) * out + o] = sum;
    }
  }
}

}  // namespace

void linear(ThreadPool& pool, const float* x, int rows, const WeightMatrix& w, const float* bias,
            float* y) {
  const int out = w.rows();
  const int in = w.cols();
  const int tile = tile_rows(in);
  const std::size_t tiles = static_cast<std::size_t>((out + tile - 1) / tile);
  pool.parallel_for(tiles, [&](std::size_t index) {
    const int first = static_cast<int>(index) * tile;
    const int count = std::min(tile, out - first);
    const float* weights = w.f32_data();
    if (weights == nullptr && rows <= kDirectRows) {
      dot_bf16_rows(x, rows, in, w.bf16_data(), first, count, out, y);
    } else if (weights != nullptr) {
      weights += static_cast<std::size_t>(first) * in;
    } else {
      // Per-thread scratch: kept across calls, since a step makes hundreds of them.
      thread_local std::vector<float> widened;
      widened.resize(static_cast<std::size_t>(count) * in);
      w.rows_to_float(first, count, widened.data());
      weights = widened.data();
    }
    if (weights != nullptr) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, count, in, 1.0f, x, in, weights,
                  in, 0.0f, y + first, out);
    }
    if (bias == nullptr) return;
    for (int r = 0; r < rows; ++r) {
      float* row = y + static_cast<std::size_t>(r) * out + first;
      for (int c = 0; c < count; ++c) row[c] += bias[first + c];
    }
  });
}

void rms_norm(const float* x, float* y, int rows, int width, const float* weight, double eps) {
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<std::size_t>(r) * width;
    float* out = y + static_cast<std::size_t>(r) * width;
    float sum = 0.0f;
    for (int i = 0; i < width; ++i) sum += in[i] * in[i];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(width) + static_cast<float>(eps));
    for (int i = 0; i < width; ++i) out[i] = weight[i] * (in[i] * scale);
  }
}

void silu_mul(float* gate, const float* up, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void use_single_threaded_blas() { openblas_set_num_threads(1); }

}  // namespace baton
