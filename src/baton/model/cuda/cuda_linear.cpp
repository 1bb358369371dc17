#include "baton/model/cuda/cuda_linear.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "baton/gpu/cuda/cublas_library.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/model/cuda/decode_gemm.h"
#include "baton/model/cuda/fp8_weights.h"
#include "baton/model/cuda/q8_weights.h"
#include "baton/model/cuda/skinny_gemm.h"

namespace baton::cuda {

namespace {

std::size_t element_size(cudaDataType_t y_type) {
  return y_type == CUDA_R_32F ? sizeof(float) : sizeof(kernels::bf16);
}

// One launch of up to kernels::kDecodeMaxRows rows: skinny_gemm (one row) or decode_gemm,
// for w's format.
template <typename Out>
void decode_launch(const kernels::bf16* x, int rows, const DeviceMatrix& w, Out* y, float beta,
                   bool skinny, cudaStream_t stream) {
  // y's arguments: an f32 y and beta, or a bf16 y alone (beta 0).
  const auto run = [&](auto launch) {
    if constexpr (std::is_same_v<Out, float>) {
      BATON_CUDA_CHECK(launch(y, beta));
    } else {
      BATON_CUDA_CHECK(launch(y));
    }
  };
  using namespace kernels;
  switch (w.format) {
    case DeviceFormat::bf16:
      return run([&](auto... to) {
        return skinny ? skinny_gemm(x, rows, w.bf16_values(), w.out, w.in, to..., stream)
                      : decode_gemm(x, rows, w.bf16_values(), w.out, w.in, to..., stream);
      });
    case DeviceFormat::fp8_rows:
      return run([&](auto... to) {
        return skinny
                   ? skinny_gemm_fp8(x, rows, w.fp8_values(), w.scales, w.out, w.in, to..., stream)
                   : decode_gemm_fp8(x, rows, w.fp8_values(), w.scales, w.out, w.in, to..., stream);
      });
    case DeviceFormat::q8_groups:
      return run([&](auto... to) {
        return skinny
                   ? skinny_gemm_q8(x, rows, w.q8_values(), w.scales, w.out, w.in, to..., stream)
                   : decode_gemm_q8(x, rows, w.q8_values(), w.scales, w.out, w.in, to..., stream);
      });
  }
}

void decode_product(const kernels::bf16* x, int rows, const DeviceMatrix& w, void* y,
                    cudaDataType_t y_type, float beta, bool skinny, cudaStream_t stream) {
  if (y_type == CUDA_R_32F) {
    decode_launch(x, rows, w, static_cast<float*>(y), beta, skinny, stream);
  } else {
    decode_launch(x, rows, w, static_cast<kernels::bf16*>(y), beta, skinny, stream);
  }
}

// One row's product of its own RMSNorm, for w's format.
template <typename Out>
void normed_launch(const kernels::NormedRow& n, const DeviceMatrix& w, Out* y,
                   cudaStream_t stream) {
  using namespace kernels;
  switch (w.format) {
    case DeviceFormat::bf16:
      BATON_CUDA_CHECK(skinny_gemm_normed(n, w.bf16_values(), w.out, w.in, y, stream));
      return;
    case DeviceFormat::fp8_rows:
      BATON_CUDA_CHECK(skinny_gemm_normed_fp8(n, w.fp8_values(), w.scales, w.out, w.in, y, stream));
      return;
    case DeviceFormat::q8_groups:
      BATON_CUDA_CHECK(skinny_gemm_normed_q8(n, w.q8_values(), w.scales, w.out, w.in, y, stream));
      return;
  }
}

// One row's product of its own SwiGLU plus beta y, for w's format.
void activated_launch(const kernels::ActivatedRow& a, const DeviceMatrix& w, float* y, float beta,
                      cudaStream_t stream) {
  using namespace kernels;
  switch (w.format) {
    case DeviceFormat::bf16:
      BATON_CUDA_CHECK(skinny_gemm_activated(a, w.bf16_values(), w.out, w.in, y, beta, stream));
      return;
    case DeviceFormat::fp8_rows:
      BATON_CUDA_CHECK(
          skinny_gemm_activated_fp8(a, w.fp8_values(), w.scales, w.out, w.in, y, beta, stream));
      return;
    case DeviceFormat::q8_groups:
      BATON_CUDA_CHECK(
          skinny_gemm_activated_q8(a, w.q8_values(), w.scales, w.out, w.in, y, beta, stream));
      return;
  }
}

// skinny_gemm takes one row, 8-bit rows only of whole 16-byte loads; never in a
// batch-invariant step, whose rows all go through decode_gemm's order of sums.
bool takes_skinny(const Products& products, int rows, const DeviceMatrix& w) {
  return !invariant_products(products.batched) && kernels::skinny_fits(rows, w.in) &&
         (!w.eight_bit() || w.in % 16 == 0);
}

// w's rows [first, first + count) widened to bf16 into `to`.
void widen_rows(const DeviceMatrix& w, int first, int count, kernels::bf16* to,
                cudaStream_t stream) {
  const auto rows = static_cast<std::size_t>(first);
  if (w.fp8()) {
    BATON_CUDA_CHECK(kernels::dequantize_fp8_rows(w.fp8_values() + rows * w.in, w.scales + first,
                                                  count, w.in, to, stream));
  } else {
    const auto groups = static_cast<std::size_t>(kernels::q8_groups(w.in));
    BATON_CUDA_CHECK(kernels::dequantize_q8_rows(w.q8_values() + rows * kernels::q8_stride(w.in),
                                                 w.scales + rows * groups, count, w.in, to,
                                                 stream));
  }
}

// Any number of rows through decode_gemm, `slice` at a time.
void in_row_slices(const kernels::bf16* x, int rows, const DeviceMatrix& w, void* y,
                   cudaDataType_t y_type, float beta, int slice, cudaStream_t stream) {
  for (int first = 0; first < rows; first += slice) {
    const int count = std::min(slice, rows - first);
    decode_product(
        x + static_cast<std::size_t>(first) * w.in, count, w,
        static_cast<char*>(y) + static_cast<std::size_t>(first) * w.out * element_size(y_type),
        y_type, beta, false, stream);
  }
}

}  // namespace

void linear(const Products& products, const kernels::bf16* x, int rows, const DeviceMatrix& w,
            void* y, cudaDataType_t y_type, float beta) {
  if (rows == 0) return;
  cudaStream_t stream = nullptr;
  BATON_CUBLAS_CHECK(cublas_api().get_stream(products.cublas, &stream));
  const std::size_t elements = static_cast<std::size_t>(w.out) * w.in;
  if (w.eight_bit() && takes_skinny(products, rows, w)) {
    decode_product(x, rows, w, y, y_type, beta, true, stream);
    return;
  }
  const bool invariant = invariant_products(products.batched);
  // A batch-invariant step's rows go through decode_gemm in slices of its most rows (each
  // row's sums in one order whatever the slice), others within its measured rows.
  const int slice = invariant ? kernels::kDecodeMaxRows : kernels::kDecodeMeasuredRows;
  if (w.eight_bit()) {
    if (rows <= kernels::kDecodeMeasuredRows || invariant || elements > products.widened_elements) {
      in_row_slices(x, rows, w, y, y_type, beta, slice, stream);
    } else {
      linear_columns(products, x, rows, w, 0, w.out, y, y_type, beta);
    }
    return;
  }
  if (products.batched == BatchedProducts::invariant_cublas) {  // the caller's handle: no workspace
    linear_columns(products, x, rows, w, 0, w.out, y, y_type, beta);
    return;
  }
  if (invariant && kernels::decode_gemm_fits(1, w.in)) {
    in_row_slices(x, rows, w, y, y_type, beta, slice, stream);
    return;
  }
  const bool one_row = takes_skinny(products, rows, w);
  if (one_row || (products.batched == BatchedProducts::decode_gemm &&
                  rows <= kernels::kDecodeMeasuredRows && kernels::decode_gemm_fits(rows, w.in))) {
    decode_product(x, rows, w, y, y_type, beta, one_row, stream);
    return;
  }
  linear_columns(products, x, rows, w, 0, w.out, y, y_type, beta);
}

bool linear_normed(const Products& products, const kernels::NormedRow& normed,
                   const DeviceMatrix& w, void* y, cudaDataType_t y_type) {
  if (!takes_skinny(products, 1, w) || !kernels::normed_fits(w.in)) return false;
  cudaStream_t stream = nullptr;
  BATON_CUBLAS_CHECK(cublas_api().get_stream(products.cublas, &stream));
  if (y_type == CUDA_R_32F) {
    normed_launch(normed, w, static_cast<float*>(y), stream);
  } else {
    normed_launch(normed, w, static_cast<kernels::bf16*>(y), stream);
  }
  return true;
}

bool linear_activated(const Products& products, const kernels::ActivatedRow& activated,
                      const DeviceMatrix& w, float* y, float beta) {
  if (!takes_skinny(products, 1, w) || !kernels::activated_fits(w.in) ||
      reinterpret_cast<std::uintptr_t>(activated.gate_up) % 16 != 0) {
    return false;
  }
  cudaStream_t stream = nullptr;
  BATON_CUBLAS_CHECK(cublas_api().get_stream(products.cublas, &stream));
  activated_launch(activated, w, y, beta, stream);
  return true;
}

void linear_columns(const Products& products, const kernels::bf16* x, int rows,
                    const DeviceMatrix& w, int first, int count, void* y, cudaDataType_t y_type,
                    float beta) {
  if (rows == 0 || count == 0) return;
  // 8 bits: w's rows [first, first + count) widened into the slot first.
  const kernels::bf16* w_rows =
      w.eight_bit() ? products.widened : w.bf16_values() + static_cast<std::size_t>(first) * w.in;
  if (w.eight_bit()) {
    if (static_cast<std::size_t>(count) * w.in > products.widened_elements) {
      throw std::invalid_argument("linear_columns: an 8-bit slice of " + std::to_string(count) +
                                  " x " + std::to_string(w.in) + " outgrows the widened slot");
    }
    cudaStream_t stream = nullptr;
    BATON_CUBLAS_CHECK(cublas_api().get_stream(products.cublas, &stream));
    widen_rows(w, first, count, products.widened, stream);
  }
  const float alpha = 1.0f;
  void* columns = static_cast<char*>(y) + static_cast<std::size_t>(first) * element_size(y_type);
  BATON_CUBLAS_CHECK(cublas_api().gemm_ex(products.cublas, CUBLAS_OP_T, CUBLAS_OP_N, count, rows,
                                          w.in, &alpha, w_rows, CUDA_R_16BF, w.in, x, CUDA_R_16BF,
                                          w.in, &beta, columns, y_type, w.out, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT));
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
