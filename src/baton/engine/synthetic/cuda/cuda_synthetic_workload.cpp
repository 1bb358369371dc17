#include "baton/engine/synthetic/cuda/cuda_synthetic_workload.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "baton/gpu/cuda/cublas_library.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_stream.h"
#include "baton/gpu/cuda/fill_kernel.h"

namespace baton::cuda {
namespace {

constexpr std::size_t kBf16 = 2;

void check_shape(const SyntheticShape& s) {
  if (s.layers == 0 || s.rows == 0 || s.k == 0 || s.n == 0 || s.ops_per_layer == 0 ||
      s.n % s.ops_per_layer != 0) {
    throw std::invalid_argument(
        "[CudaSyntheticWorkload] dimensions must be positive and ops_per_layer must divide n");
  }
}

}  // namespace

SyntheticShape lab_shape(BurstKind kind, std::size_t tokens) {
  switch (kind) {
    case BurstKind::decode:
      return {.kind = BurstKind::decode,
              .layers = 32,
              .rows = 8,
              .k = 4096,
              .n = 32768,
              .ops_per_layer = 1};
    case BurstKind::prefill:
      return {.kind = BurstKind::prefill,
              .layers = 32,
              .rows = tokens == 0 ? 8192 : tokens,
              .k = 4096,
              .n = 32768,
              .ops_per_layer = 1};
    case BurstKind::embed:
      return {.kind = BurstKind::embed,
              .layers = 4,
              .rows = 64,
              .k = 1024,
              .n = 1024,
              .ops_per_layer = 1};
  }
  throw std::invalid_argument("[lab_shape] unknown burst kind");
}

CudaSyntheticWorkload::CudaSyntheticWorkload(SyntheticShape shape, int sm_count_target)
    : shape_((check_shape(shape), shape)),
      placement_(sm_count_target),
      weights_(shape.layers * shape.k * shape.n * kBf16),
      input_(shape.rows * shape.k * kBf16),
      output_(shape.rows * shape.n * kBf16) {
  // Random values, never zeros (zeros run faster than real data); written once.
  BATON_CUDA_CHECK(
      launch_fill_bf16(nullptr, weights_.get(), shape.layers * shape.k * shape.n, 0x5eed));
  BATON_CUDA_CHECK(launch_fill_bf16(nullptr, input_.get(), shape.rows * shape.k, 0xdeca));
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaSyntheticWorkload::set_device_share(double share) {
  placement_.set_share(share, shape_.kind == BurstKind::prefill);
}

void CudaSyntheticWorkload::encode_burst(Stream& stream,
                                         const std::function<void(Boundary)>& yield_point) {
  auto& cuda_stream = dynamic_cast<CudaStream&>(stream);
  const int m = static_cast<int>(shape_.rows);
  const int k = static_cast<int>(shape_.k);
  const int n = static_cast<int>(shape_.n);
  const std::size_t block = shape_.n / shape_.ops_per_layer;
  const std::size_t op_bytes = (shape_.k * block + shape_.rows * (shape_.k + block)) * kBf16;
  const auto* weights = static_cast<const char*>(weights_.get());
  const void* a = input_.get();
  auto* out = static_cast<char*>(output_.get());
  cublasHandle_t handle = cublas_.get();
  const bool prefill = shape_.kind == BurstKind::prefill;
  for (std::size_t layer = 0; layer < shape_.layers; ++layer) {
    for (std::size_t part = 0; part < shape_.ops_per_layer; ++part) {
      // Row-major C[m x block] = A[m x k] * W[k x block] is column-major
      // C^T[block x m] = W^T[block x k] * A^T[k x m]: W as the first operand, ld = n.
      const void* w = weights + (layer * shape_.k * shape_.n + part * block) * kBf16;
      void* c = out + part * block * kBf16;
      const int cols = static_cast<int>(block);
      stream.encode(Op{.run =
                           [=, this, &cuda_stream] {
                             // The share may change at a yield point.
                             placement_.prepare(cuda_stream, prefill, handle);
                             const float alpha = 1.0f;
                             const float beta = 0.0f;
                             BATON_CUBLAS_CHECK(cublas_api().gemm_ex(
                                 handle, CUBLAS_OP_N, CUBLAS_OP_N, cols, m, k, &alpha, w,
                                 CUDA_R_16BF, n, a, CUDA_R_16BF, k, &beta, c, CUDA_R_16BF, n,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                           },
                       .bytes = op_bytes});
      if (part + 1 < shape_.ops_per_layer) yield_point(Boundary::op);
    }
    if (layer + 1 < shape_.layers) yield_point(Boundary::layer);
  }
}

}  // namespace baton::cuda

namespace baton::cuda {

CudaSyntheticWorkload::HostCopy CudaSyntheticWorkload::copy_back() const {
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  return {.weights = bf16_to_host_floats(weights_),
          .input = bf16_to_host_floats(input_),
          .output = bf16_to_host_floats(output_)};
}

}  // namespace baton::cuda
