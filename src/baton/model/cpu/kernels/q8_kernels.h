// The decode kernel of 8-bit weights (q8_matrix.h): y[r][o] = x[r] . w[o] for the few rows
// of a decode step (1 to 4), reading each weight once. The rows of x are quantized too, per
// group of 32 with one scale each (Q8Activations, once per matrix product), so a group's
// product is an exact int32 dot of int8 values, scaled by both scales and summed in f32:
//   AVX512-VNNI: vpdpbusd on 512-bit vectors, two groups per instruction;
//   AVX2 + FMA: vpmaddubsw + vpmaddwd, one group per 256-bit vector;
//   portable: plain loops, for any x86-64 (and any other CPU).
// The kernel is picked once, from what the CPU supports (q8_best_kernel); the variants
// differ only in the order of the f32 sums.
//
// Error against the dequantized weights times the exact x: rounding moves each x[i] by at
// most half its group's scale xs, so |y - w_deq . x| <= sum_i |w_deq[i]| * xs(i) / 2, plus
// the f32 rounding of the sums (the tests check this bound).
//
// Thread-safety: pure functions of their arguments; a Q8Activations is written by
// quantize_activations() and may then be read by any number of threads.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "baton/model/weights/q8_matrix.h"

namespace baton {

// The rows of x quantized per group of 32, laid out for the kernels.
struct Q8Activations {
  int rows = 0;
  int cols = 0;
  int groups = 0;  // per row: cols / 32 rounded up
  int stride() const { return groups * Q8Matrix::kGroup; }
  std::vector<std::int8_t> values;  // [rows x stride], zeros past cols
  std::vector<float> scales;        // [rows x groups]
  // [rows x stride / 4]: -128 times the sum of each 4 consecutive values. The VNNI kernel
  // multiplies unsigned by signed bytes, so it adds 128 to every weight; starting each
  // int32 lane (4 products) at this offset takes the 128 * sum(x) back out exactly.
  std::vector<std::int32_t> lane_offsets;
};

// Quantizes x [rows x cols] into `out`, reusing its storage.
void quantize_activations(const float* x, int rows, int cols, Q8Activations& out);

enum class Q8Kernel { portable, avx2, avx512_vnni };

std::string_view to_string(Q8Kernel kernel);
// Whether this CPU (and its OS, for the vector registers) can run `kernel`.
bool q8_supported(Q8Kernel kernel);
// The fastest kernel this CPU runs; decided on the first call.
Q8Kernel q8_best_kernel();

// y[r * w.rows() + o] = x[r] . w[o] for o in [first, first + count): y is row-major
// [x.rows x w.rows()], and a call fills the columns of one tile of the weight's rows.
// Any number of rows (blocks of 4 read the tile once each). std::invalid_argument when
// x.cols != w.cols(), std::out_of_range for rows outside w.
void q8_dot_rows(const Q8Activations& x, const Q8Matrix& w, int first, int count, float* y);
// The same with a chosen kernel (tests); std::invalid_argument if the CPU lacks it.
void q8_dot_rows(Q8Kernel kernel, const Q8Activations& x, const Q8Matrix& w, int first, int count,
                 float* y);

class WeightMatrix;
// The same from f32 rows x [rows x w.cols()] of a q8 WeightMatrix, quantizing x on every
// call (into per-thread scratch): simplest for one tile, but a product split into tiles
// should quantize once and call the overload above per tile.
void q8_dot_rows(const float* x, int rows, const WeightMatrix& w, int first, int count, float* y);

}  // namespace baton
