// The matrix products of the CUDA forward pass, through cuBLAS (bf16 operands, f32
// accumulation), in row-major terms. cuBLAS is column-major: row-major Y = X W^T is
// column-major Y^T = W X^T, so W goes first, transposed.
// Thread-safety: as the cuBLAS handle (one stream's ops at a time).
#pragma once

#include <cublas_v2.h>

#include <cstddef>

#include "baton/model/cuda/device_matrix.h"
#include "baton/model/cuda/model_kernels.h"
#include "baton/model/cuda/skinny_gemm.h"

namespace baton::cuda {

// Which kernel takes bf16 products of 2 to 32 rows (batched decode): cuBLAS, or decode_gemm
// (BATON_CUDA_DECODE_GEMM=1; it trails cuBLAS at 16-32 rows, docs/benchmarks.md). And
// `invariant` (`--deterministic` decode steps): every row count through decode_gemm, more
// than 64 rows in slices of 64, so that no row's result depends on the others; or
// `invariant_cublas` (BATON_CUDA_INVARIANT_PRODUCTS=cublas, for comparison until measured):
// bf16 products through cuBLAS on a handle without a workspace, every row count (without
// split-K a row's bits were the same at every M that bench/gemm_row_position measured on
// the H100: 1, 8, 32, 64, 92, 128-2048), 8-bit ones as `invariant`.
enum class BatchedProducts { cublas, decode_gemm, invariant, invariant_cublas };

// Whether `batched` keeps each row's result independent of the others.
constexpr bool invariant_products(BatchedProducts batched) {
  return batched == BatchedProducts::invariant || batched == BatchedProducts::invariant_cublas;
}

// How a step's products run: its cuBLAS handle, its choice for batched rows, and where an
// 8-bit matrix (fp8 or q8) is widened to bf16 for cuBLAS (products of more than 32 rows,
// and every linear_columns piece), room for `widened_elements` values; a larger 8-bit
// matrix goes through decode_gemm in slices of 32 rows instead.
struct Products {
  cublasHandle_t cublas = nullptr;
  BatchedProducts batched = BatchedProducts::cublas;
  kernels::bf16* widened = nullptr;
  std::size_t widened_elements = 0;
};

// y [rows x w.out] = x [rows x w.in] * w^T + beta * y; y is f32 or bf16 (`y_type`; beta
// must be 0 for bf16). bf16 weights: one row (batch-1 decode) goes through skinny_gemm, up
// to 32 as `batched` says, more (prefill) through cuBLAS. 8-bit weights (fp8, q8): one row
// through skinny_gemm, up to 32 through decode_gemm, more widened and through cuBLAS.
void linear(const Products& products, const kernels::bf16* x, int rows, const DeviceMatrix& w,
            void* y, cudaDataType_t y_type, float beta = 0.0f);
// One row's product of its own RMSNorm (kernels::NormedRow, skinny_gemm.h), the norm done by
// the product's blocks; false, launching nothing, where skinny_gemm does not take the
// product (the caller norms, then calls linear()).
bool linear_normed(const Products& products, const kernels::NormedRow& normed,
                   const DeviceMatrix& w, void* y, cudaDataType_t y_type);
// One row's product of its own SwiGLU (kernels::ActivatedRow: silu(gate) * up of a
// gate_up row), f32 y plus beta y; false, launching nothing, where skinny_gemm does not
// take it (the caller runs silu_mul, then linear()).
bool linear_activated(const Products& products, const kernels::ActivatedRow& activated,
                      const DeviceMatrix& w, float* y, float beta);
// Output columns [first, first + count) of linear(): w's rows of them into y's columns of
// them (y keeps its row stride `w.out`), through cuBLAS whatever the rows: a piece of a
// product that reads its slice of the weights once for all rows.
void linear_columns(const Products& products, const kernels::bf16* x, int rows,
                    const DeviceMatrix& w, int first, int count, void* y, cudaDataType_t y_type,
                    float beta = 0.0f);

// The attention of one prefilling sequence over its `length` contiguous keys and values
// ([length x kv_heads x head_dim]), one product per kv head: scores [kv_heads x rows x
// length] f32 = scale * q_g k_g^T, where q_g is the sequence's grouped queries of kv head g
// ([rows x head_dim], rows = chunk x group; kv heads `q_stride` elements apart).
void attention_scores(cublasHandle_t cublas, const kernels::bf16* q, long long q_stride,
                      const kernels::bf16* keys, int rows, int length, int kv_heads, int head_dim,
                      float scale, float* scores);
// grouped [kv_heads x rows x head_dim] bf16 = probabilities [kv_heads x rows x length] * v_g.
void attention_values(cublasHandle_t cublas, const kernels::bf16* probabilities,
                      const kernels::bf16* values, int rows, int length, int kv_heads, int head_dim,
                      kernels::bf16* grouped);

}  // namespace baton::cuda
