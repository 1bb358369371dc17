// The CPU kernels of the forward pass: the matrix product of a torch Linear, split into
// tiles of the weight's rows over a ThreadPool (up to 16 rows, a decode batch, each tile
// is read from memory once by the kernel set's bf16 product or the q8 kernel; more rows
// go through OpenBLAS sgemm on tiles widened to f32), RMSNorm and SiLU-gated products.
// Thread-safety: pure functions of their arguments; `linear` uses the pool it is given.
#pragma once

#include <span>

#include "baton/common/thread_pool.h"
#include "baton/model/weights/weight_matrix.h"

namespace baton {

// y[rows x w.rows()] = x[rows x w.cols()] * w^T (+ bias, may be null).
void linear(ThreadPool& pool, const float* x, int rows, const WeightMatrix& w, const float* bias,
            float* y);

// One of several products of the same x (see below).
struct LinearOutput {
  const WeightMatrix* w;
  const float* bias;  // may be null
  float* y;           // [rows x w->rows()]
};
// Each output's y = x * w^T (+ bias), for matrices of one width (q/k/v, gate/up), in one
// loop over all their tiles: one hand-over to the pool, and small matrices (k, v) leave
// no thread idle. std::invalid_argument when the widths differ.
void linear(ThreadPool& pool, const float* x, int rows, std::span<const LinearOutput> outputs);

// RMSNorm of each `width` row of x into y (may alias x): x / sqrt(mean(x^2) + eps) * weight.
void rms_norm(const float* x, float* y, int rows, int width, const float* weight, double eps);

// gate[i] = SiLU(gate[i]) * up[i], the SwiGLU MLP's inner product.
void silu_mul(float* gate, const float* up, std::size_t count);

// Keeps OpenBLAS on the calling thread: the pool splits the work, and OpenBLAS threads
// inside each tile would only fight it for the cores. Process-wide; idempotent.
void use_single_threaded_blas();

}  // namespace baton
