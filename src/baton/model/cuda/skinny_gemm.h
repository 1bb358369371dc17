// skinny_gemm: y = x w^T for a few rows of x (decode steps), at the memory-bandwidth limit.
// cuBLAS's kernels for a product with 1 to 8 rows read the weights at about half the
// copy rate; here every warp streams whole rows of w with 16-byte loads (each weight read
// once per step) and multiplies each by every row of x (from the cache).
// Thread-safety: a reentrant launcher; the buffers belong to the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {

constexpr int kSkinnyMaxRows = 8;

// True when skinny_gemm takes this product: 1..kSkinnyMaxRows rows and `in` a multiple of 8.
constexpr bool skinny_fits(int rows, int in) {
  return rows >= 1 && rows <= kSkinnyMaxRows && in % 8 == 0;
}

// y [rows x out] = x [rows x in] w [out x in]^T + beta y (f32 y), or without beta (bf16 y).
cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, float* y,
                        float beta, cudaStream_t stream);
cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, bf16* y,
                        cudaStream_t stream);

}  // namespace baton::cuda::kernels
