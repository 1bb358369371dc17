#include "baton/model/cpu/kernels/cpu_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "baton/model/cpu/kernels/q8_kernels.h"
#include "baton/model/cpu/kernels/simd_kernels.h"

namespace baton {
namespace {

// Up to this many rows (a decode batch) a bf16 or q8 product reads each tile of weights
// from memory once, in blocks of 4 rows, the later blocks finding the tile in L2; more
// rows (a prefill chunk) widen the tile to f32 for sgemm, unless the CPU multiplies bf16
// pairs: then every bf16 product, of any rows, takes x rounded to bf16 (dot_bf16x_rows),
// and two rows or more go to the tile unit where the CPU has AMX (dot_tiled_bf16x_rows).
constexpr int kDirectRows = 16;

// Weight rows per tile: 64K weights for a decode batch (128 KiB of bf16 stays in L2 for
// its blocks of 4 rows), but at least 32 rows, since the one-row kernel splits x again for
// every tile (8-row tiles of the 4864-wide down projection streamed at 27 GB/s, 32-row
// ones at 38-43); 256K (1 MiB widened to f32) for sgemm, which packs x again for every
// tile (with 64K a tile, packing took a fifth of a prefill; 512K were slower).
// On AMX tiles (`tiled`), a multiple of 32 rows: the tile unit takes weights 32 rows at a
// time, and the rows left over would go to the pair kernel, many times slower.
int tile_rows(int cols, int rows, bool bf16_pairs, bool tiled) {
  const int weights = rows > kDirectRows && !bf16_pairs ? 256 * 1024 : 64 * 1024;
  const int multiple = tiled ? 32 : 8;
  return std::max(32, (weights / std::max(cols, 1)) / multiple * multiple);
}

}  // namespace

void linear(ThreadPool& pool, const float* x, int rows, const WeightMatrix& w, const float* bias,
            float* y) {
  const LinearOutput output{.w = &w, .bias = bias, .y = y};
  linear(pool, x, rows, {&output, 1});
}

void linear(ThreadPool& pool, const float* x, int rows, std::span<const LinearOutput> outputs) {
  if (outputs.empty()) return;
  const int in = outputs.front().w->cols();
  const SimdKernels& simd = simd_kernels();
  const bool bf16_pairs = simd.dot_bf16x_rows != nullptr &&
                          std::all_of(outputs.begin(), outputs.end(), [](const LinearOutput& o) {
                            return o.w->bf16_data() != nullptr;
                          });
  // Two rows or more, on AMX: x laid out once for the tile unit, then tiles of weights
  // (faster than the pair kernel from 2 rows on: docs/benchmarks.md, "AMX tiles").
  const bool direct = rows <= kDirectRows;
  const bool tiled = bf16_pairs && rows >= 2 && simd.dot_tiled_bf16x_rows != nullptr;
  const int tile = tile_rows(in, rows, bf16_pairs, tiled);
  std::vector<std::size_t> tiles_before;  // per output: the tiles of the outputs before it
  std::size_t tiles = 0;
  bool any_q8 = false;
  for (const LinearOutput& o : outputs) {
    if (o.w->cols() != in) throw std::invalid_argument("linear: the matrices' widths differ");
    tiles_before.push_back(tiles);
    tiles += static_cast<std::size_t>((o.w->rows() + tile - 1) / tile);
    any_q8 = any_q8 || o.w->is_q8();
  }
  // 8-bit weights: x is quantized once for every tile (per-thread scratch, reused).
  thread_local Q8Activations quantized;
  if (direct && any_q8) quantize_activations(x, rows, in, quantized);
  const Q8Activations& x8 = quantized;
  thread_local std::vector<std::uint16_t> rounded;  // x in bf16, for bf16_pairs
  if (bf16_pairs) {
    rounded.resize(static_cast<std::size_t>(rows) * in);
    simd.round_to_bf16(x, rounded.size(), rounded.data());
  }
  const std::uint16_t* x16 = rounded.data();
  thread_local std::vector<std::uint16_t> tiled_x;
  if (tiled) {
    tiled_x.resize(simd.tiled_bf16x_size(rows, in));
    simd.tile_bf16x(x16, rows, in, tiled_x.data());
  }
  const std::uint16_t* x_tiles = tiled_x.data();
  pool.parallel_for(tiles, [&](std::size_t index) {
    const auto which =
        static_cast<std::size_t>(std::upper_bound(tiles_before.begin(), tiles_before.end(), index) -
                                 tiles_before.begin() - 1);
    const WeightMatrix& w = *outputs[which].w;
    float* y = outputs[which].y;
    const int out = w.rows();
    const int first = static_cast<int>(index - tiles_before[which]) * tile;
    const int count = std::min(tile, out - first);
    const float* weights = w.f32_data();
    if (direct && w.is_q8()) {
      q8_dot_rows(x8, w.q8(), first, count, y);  // 8-bit weights read once (q8_kernels.h)
    } else if (tiled) {
      simd.dot_tiled_bf16x_rows(x_tiles, x16, rows, in, w.bf16_data(), first, count, out, y);
    } else if (bf16_pairs) {
      simd.dot_bf16x_rows(x16, rows, in, w.bf16_data(), first, count, out, y);
    } else if (direct && weights == nullptr) {
      simd.dot_bf16_rows(x, rows, in, w.bf16_data(), first, count, out, y);
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
    const float* bias = outputs[which].bias;
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
    const float sum = simd_kernels().dot(in, in, width);
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(width) + static_cast<float>(eps));
    for (int i = 0; i < width; ++i) out[i] = weight[i] * (in[i] * scale);
  }
}

void silu_mul(float* gate, const float* up, std::size_t count) {
  simd_kernels().silu_mul(gate, up, count);
}

void use_single_threaded_blas() { openblas_set_num_threads(1); }

}  // namespace baton
