// skinny_gemm: y = x w^T for one row of x (a decode step of one sequence): every warp
// streams two whole rows of w with 16-byte loads (each weight read once per step) and
// multiplies them by x (from the cache). On the H200 (docs/benchmarks.md) it beat
// cuBLAS's GemmEx at one row (8B shape, batch 1: 6.16 against 6.56 ms a step) and lost at
// eight (18.8 against 7.1 ms: per weight it issues a load, a conversion and 8 FMAs per
// row of x), so it takes one row only until it stages x in shared memory. With E4M3
// weights (`--weights fp8`) or Q8_0's int8 each 16-byte load holds 16 weights, widened
// exactly to floats.
// Thread-safety: a reentrant launcher; the buffers belong to the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {

constexpr int kSkinnyMaxRows = 1;

// An RMSNorm the product does itself (the default; BATON_CUDA_FUSED_NORM=0 turns it off): each
// block norms the f32 `residual` row times `weight` into bf16 x in shared memory, as rms_norm would
// (its sum in another order: the scale's last bit may differ), so the norm's own launch goes. For
// `in` a multiple of 4 up to kNormedMaxIn; x is then not read.
struct NormedRow {
  const float* residual = nullptr;
  const float* weight = nullptr;
  float eps = 0.0f;
};
constexpr int kNormedMaxIn = 8192;
constexpr bool normed_fits(int in) { return in % 4 == 0 && in <= kNormedMaxIn; }

// SwiGLU the product does itself (BATON_CUDA_FUSED_SWIGLU=1): each block stages x = silu(gate)
// * up of one row of `gate_up` (gate's `in` columns, then up's) in shared memory, by the
// formula and rounding of silu_mul, so the SwiGLU's own launch goes and y is bit for bit
// silu_mul's then skinny_gemm's. For `in` a multiple of 8 up to kActivatedMaxIn (32 KB of
// bf16: Llama-3.1-8B's 14336 fits); x is then not read.
struct ActivatedRow {
  const bf16* gate_up = nullptr;  // 16-byte aligned
};
constexpr int kActivatedMaxIn = 16384;
constexpr bool activated_fits(int in) { return in % 8 == 0 && in <= kActivatedMaxIn; }

// True when skinny_gemm takes this product: up to kSkinnyMaxRows rows, `in` a multiple of 8.
constexpr bool skinny_fits(int rows, int in) {
  return rows >= 1 && rows <= kSkinnyMaxRows && in % 8 == 0;
}

// y [rows x out] = x [rows x in] w [out x in]^T + beta y (f32 y), or without beta (bf16 y).
cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, float* y,
                        float beta, cudaStream_t stream);
cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, bf16* y,
                        cudaStream_t stream);
// The same with 8-bit weights: w [out x in] E4M3 bytes (16-byte aligned, in % 16 == 0),
// each feature's sum times scales[feature] (fp8_weights.h).
cudaError_t skinny_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, float* y, float beta, cudaStream_t stream);
cudaError_t skinny_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, bf16* y, cudaStream_t stream);
// The same with Q8_0 weights (decode_gemm.h's decode_gemm_q8 layout: rows of whole groups
// of 32, an f32 scale a group; in % 16 == 0).
cudaError_t skinny_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, float* y, float beta, cudaStream_t stream);
cudaError_t skinny_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, bf16* y, cudaStream_t stream);

// One row's product of its RMSNorm (`normed`; normed_fits(in)), y without beta, for each
// weight format above.
cudaError_t skinny_gemm_normed(const NormedRow& normed, const bf16* w, int out, int in, float* y,
                               cudaStream_t stream);
cudaError_t skinny_gemm_normed(const NormedRow& normed, const bf16* w, int out, int in, bf16* y,
                               cudaStream_t stream);
cudaError_t skinny_gemm_normed_fp8(const NormedRow& normed, const std::uint8_t* w,
                                   const float* scales, int out, int in, float* y,
                                   cudaStream_t stream);
cudaError_t skinny_gemm_normed_fp8(const NormedRow& normed, const std::uint8_t* w,
                                   const float* scales, int out, int in, bf16* y,
                                   cudaStream_t stream);
cudaError_t skinny_gemm_normed_q8(const NormedRow& normed, const std::int8_t* w,
                                  const float* scales, int out, int in, float* y,
                                  cudaStream_t stream);
cudaError_t skinny_gemm_normed_q8(const NormedRow& normed, const std::int8_t* w,
                                  const float* scales, int out, int in, bf16* y,
                                  cudaStream_t stream);

// One row's product of its SwiGLU (`activated`; activated_fits(in)), f32 y plus beta y
// (the down product adds into the residual), for each weight format above.
cudaError_t skinny_gemm_activated(const ActivatedRow& activated, const bf16* w, int out, int in,
                                  float* y, float beta, cudaStream_t stream);
cudaError_t skinny_gemm_activated_fp8(const ActivatedRow& activated, const std::uint8_t* w,
                                      const float* scales, int out, int in, float* y, float beta,
                                      cudaStream_t stream);
cudaError_t skinny_gemm_activated_q8(const ActivatedRow& activated, const std::int8_t* w,
                                     const float* scales, int out, int in, float* y, float beta,
                                     cudaStream_t stream);

}  // namespace baton::cuda::kernels
