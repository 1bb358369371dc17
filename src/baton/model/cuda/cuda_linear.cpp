#include "baton/model/cuda/cuda_linear.h"

#include <algorithm>
#include <cstddef>

#include "baton/gpu/cuda/cublas_library.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/model/cuda/decode_gemm.h"
#include "baton/model/cuda/skinny_gemm.h"

namespace baton::cuda {

namespace {

void decode_product(const kernels::bf16* x, int rows, const kernels::bf16* w, int out, int in,
                    void* y, cudaDataType_t y_type, float beta, bool skinny, cudaStream_t stream) {
  if (y_type == CUDA_R_32F) {
    auto* f32 = static_cast<float*>(y);
    BATON_CUDA_CHECK(skinny ? kernels::skinny_gemm(x, rows, w, out, in, f32, beta, stream)
                            : kernels::decode_gemm(x, rows, w, out, in, f32, beta, stream));
  } else {
    auto* b16 = static_cast<kernels::bf16*>(y);
    BATON_CUDA_CHECK(skinny ? kernels::skinny_gemm(x, rows, w, out, in, b16, stream)
                            : kernels::decode_gemm(x, rows, w, out, in, b16, stream));
  }
}

}  // namespace

void linear(cublasHandle_t cublas, const kernels::bf16* x, int rows, const kernels::bf16* w,
            int out, int in, void* y, cudaDataType_t y_type, float beta, BatchedProducts batched) {
  if (rows == 0) return;
  cudaStream_t stream = nullptr;
  BATON_CUBLAS_CHECK(cublas_api().get_stream(cublas, &stream));
  if (batched == BatchedProducts::invariant && kernels::decode_gemm_fits(1, in)) {
    const std::size_t element = y_type == CUDA_R_32F ? sizeof(float) : sizeof(kernels::bf16);
    for (int first = 0; first < rows; first += kernels::kDecodeMaxRows) {
      const int count = std::min(kernels::kDecodeMaxRows, rows - first);
      decode_product(x + static_cast<std::size_t>(first) * in, count, w, out, in,
                     static_cast<char*>(y) + static_cast<std::size_t>(first) * out * element,
                     y_type, beta, false, stream);
    }
    return;
  }
  const bool one_row = kernels::skinny_fits(rows, in);
  if (one_row || (batched == BatchedProducts::decode_gemm && kernels::decode_gemm_fits(rows, in))) {
    decode_product(x, rows, w, out, in, y, y_type, beta, one_row, stream);
    return;
  }
  linear_columns(cublas, x, rows, w, out, in, 0, out, y, y_type, beta);
}

void linear_columns(cublasHandle_t cublas, const kernels::bf16* x, int rows, const kernels::bf16* w,
                    int out, int in, int first, int count, void* y, cudaDataType_t y_type,
                    float beta) {
  if (rows == 0 || count == 0) return;
  const float alpha = 1.0f;
  const std::size_t element = y_type == CUDA_R_32F ? sizeof(float) : sizeof(kernels::bf16);
  void* columns = static_cast<char*>(y) + static_cast<std::size_t>(first) * element;
  const kernels::bf16* w_rows = w + static_cast<std::size_t>(first) * in;
  BATON_CUBLAS_CHECK(cublas_api().gemm_ex(
      cublas, CUBLAS_OP_T, CUBLAS_OP_N, count, rows, in, &alpha, w_rows, CUDA_R_16BF, in, x,
      CUDA_R_16BF, in, &beta, columns, y_type, out, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void attention_scores(cublasHandle_t cublas, const kernels::bf16* q, long long q_stride,
                      const kernels::bf16* keys, int rows, int length, int kv_heads, int head_dim,
                      float scale, float* scores) {
  const float zero = 0.0f;
  const int kv_dim = kv_heads * head_dim;
  // Column-major scores^T [length x rows] = K_g [length x head_dim] q_g^T.
  BATON_CUBLAS_CHECK(cublas_api().gemm_strided_batched_ex(
      cublas, CUBLAS_OP_T, CUBLAS_OP_N, length, rows, head_dim, &scale, keys, CUDA_R_16BF, kv_dim,
      head_dim, q, CUDA_R_16BF, head_dim, q_stride, &zero, scores, CUDA_R_32F, length,
      static_cast<long long>(rows) * length, kv_heads, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void attention_values(cublasHandle_t cublas, const kernels::bf16* probabilities,
                      const kernels::bf16* values, int rows, int length, int kv_heads, int head_dim,
                      kernels::bf16* grouped) {
  const float one = 1.0f;
  const float zero = 0.0f;
  const int kv_dim = kv_heads * head_dim;
  // Column-major out^T [head_dim x rows] = V_g^T [head_dim x length] p^T [length x rows].
  BATON_CUBLAS_CHECK(cublas_api().gemm_strided_batched_ex(
      cublas, CUBLAS_OP_N, CUBLAS_OP_N, head_dim, rows, length, &one, values, CUDA_R_16BF, kv_dim,
      head_dim, probabilities, CUDA_R_16BF, length, static_cast<long long>(rows) * length, &zero,
      grouped, CUDA_R_16BF, head_dim, static_cast<long long>(rows) * head_dim, kv_heads,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace baton::cuda
