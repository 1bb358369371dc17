// 8-bit weights on the device (`--weights fp8`): each matrix row (an output feature) as
// E4M3 values (OCP FP8: 4 exponent bits, 3 mantissa bits, largest 448) times one f32
// scale, the row's largest magnitude / 448. Quantized on the device at upload from bf16,
// rounding to nearest (ties to even) and saturating; dequantized to bf16 where a product
// of many rows (prefill) goes through cuBLAS, which has no bf16-by-fp8 product.
// Thread-safety: reentrant launchers; the buffers belong to the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {

inline constexpr float kFp8E4m3Max = 448.0f;

// q [rows x cols] E4M3 and scales [rows] from w [rows x cols] bf16. An all-zero row has
// scale 1 (so that its products are 0, never NaN).
cudaError_t quantize_fp8_rows(const bf16* w, int rows, int cols, std::uint8_t* q, float* scales,
                              cudaStream_t stream);
// w [rows x cols] bf16 = q * scale of its row, rounded to bf16.
cudaError_t dequantize_fp8_rows(const std::uint8_t* q, const float* scales, int rows, int cols,
                                bf16* w, cudaStream_t stream);

}  // namespace baton::cuda::kernels
