// decode_gemm: y = x w^T for the few rows of a decode step (1 to 64 sequences) on the
// tensor cores, reading each weight once for all rows. cuBLAS's GemmEx reaches 65 % of the
// copy rate at 8 rows and 46 % at 32 on the 8B shape (issue 50); this kernel keeps the
// weight stream wide whatever the rows: each warp loads 16 bytes of a weight row per lane
// and feeds them to mma.m16n8k16 directly (k permuted alike in w and x, so no shuffle or
// shared-memory staging), the block's 8 warps split the inner dimension, and their sums
// meet in shared memory in a fixed order.
// Each output's sum runs in the same order whatever the number of rows, so a row's result
// does not depend on what else is in the batch (tests/model/cuda/decode_gemm_test.cpp).
// Against cuBLAS (bench/decode_gemm_bench, H100): 0.88-1.18x at 1-8 rows, 0.53-0.80x at
// 16-32, so bf16 products take it only with BATON_CUDA_DECODE_GEMM=1 or `--deterministic`;
// 8-bit weights (fp8, Q8_0) always (cuda_linear.h).
// Thread-safety: a reentrant launcher; the buffers belong to the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {

constexpr int kDecodeMaxRows = 64;
// The rows decode_gemm was measured at on an H100 (bench/decode_gemm_bench): the most it
// takes outside batch-invariant steps, which take up to kDecodeMaxRows in one pass, so
// that each weight is read once for 64 streams.
constexpr int kDecodeMeasuredRows = 32;

// True when decode_gemm takes this product: 1 to kDecodeMaxRows rows, `in` a multiple of 8.
constexpr bool decode_gemm_fits(int rows, int in) {
  return rows >= 1 && rows <= kDecodeMaxRows && in % 8 == 0;
}

// y [rows x out] = x [rows x in] w [out x in]^T + beta y (f32 y), or without beta (bf16 y).
// x and w 16-byte aligned.
cudaError_t decode_gemm(const bf16* x, int rows, const bf16* w, int out, int in, float* y,
                        float beta, cudaStream_t stream);
cudaError_t decode_gemm(const bf16* x, int rows, const bf16* w, int out, int in, bf16* y,
                        cudaStream_t stream);
// The same with 8-bit weights (`--weights fp8`): w [out x in] E4M3 bytes (8-byte aligned),
// each feature's sum times scales[feature] (fp8_weights.h). Exact widening to bf16 in
// registers: the products are the bf16 kernel's, half the weight bytes read.
cudaError_t decode_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, float* y, float beta, cudaStream_t stream);
cudaError_t decode_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, bf16* y, cudaStream_t stream);
// The same with Q8_0 weights as the host holds them (q8_matrix.h): w [out x stride] int8
// (stride: `in` rounded up to whole groups of 32, padded with zeros), scales [out x
// groups] f32, one per group of 32. Each group's sums are multiplied by its scale; no
// weight is rounded.
cudaError_t decode_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, float* y, float beta, cudaStream_t stream);
cudaError_t decode_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, bf16* y, cudaStream_t stream);

}  // namespace baton::cuda::kernels
