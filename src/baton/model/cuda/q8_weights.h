// Q8_0 weights on the device: a model the host holds in 8 bits (a GGUF file of Q8_0
// tensors, or `--weights q8`) is uploaded in the host's layout (q8_matrix.h: int8 rows of
// whole groups of 32, an f32 scale a group) and read as it is by decode_gemm_q8 and
// skinny_gemm_q8; a product of many rows (prefill) widens it to bf16 for cuBLAS first.
// Thread-safety: a reentrant launcher; the buffers belong to the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {

// Values a Q8_0 group holds, a row's groups, and its stride in values: whole groups.
inline constexpr int kQ8Group = 32;
__host__ __device__ constexpr int q8_groups(int cols) { return (cols + kQ8Group - 1) / kQ8Group; }
__host__ __device__ constexpr int q8_stride(int cols) { return q8_groups(cols) * kQ8Group; }

// w [rows x cols] bf16 = q [rows x q8_stride(cols)] times its group's scale (scales [rows x
// groups]), rounded to bf16.
cudaError_t dequantize_q8_rows(const std::int8_t* q, const float* scales, int rows, int cols,
                               bf16* w, cudaStream_t stream);

}  // namespace baton::cuda::kernels
