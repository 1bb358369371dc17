#include "baton/host/make_workload.h"

#include <string>

#include "baton/host/make_device.h"
#ifdef BATON_HAVE_CUDA
#include "baton/engine/synthetic/cuda/cuda_long_dispatch_workload.h"
#include "baton/engine/synthetic/cuda/cuda_synthetic_workload.h"
#endif

namespace baton {
namespace {

SyntheticShape cpu_shape(BurstKind kind, std::size_t tokens) {
  switch (kind) {
    case BurstKind::decode:
      return SyntheticShape::decode_default();
    case BurstKind::prefill:
      return SyntheticShape::prefill_default(tokens);
    case BurstKind::embed:
      return SyntheticShape::embed_default();
  }
  return SyntheticShape::decode_default();
}

}  // namespace

SyntheticShape default_shape(std::string_view backend, BurstKind kind, std::size_t tokens) {
#ifdef BATON_HAVE_CUDA
  if (backend == "cuda") return cuda::lab_shape(kind, tokens);
#endif
  (void)backend;
  return cpu_shape(kind, tokens);
}

std::unique_ptr<Workload> make_synthetic_workload(std::string_view backend,
                                                  const SyntheticShape& shape,
                                                  int sm_count_target) {
  if (backend == "cpu") return std::make_unique<SyntheticWorkload>(shape);
#ifdef BATON_HAVE_CUDA
  if (backend == "cuda")
    return std::make_unique<cuda::CudaSyntheticWorkload>(shape, sm_count_target);
#endif
  (void)sm_count_target;
  throw BackendUnavailable("[make_synthetic_workload] no workload for backend '" +
                           std::string(backend) + "' in this build");
}

AttentionShape default_attention_shape(std::string_view backend, std::size_t keys) {
  return backend == "cuda" ? AttentionShape::cuda_default(keys) : AttentionShape::cpu_default(keys);
}

std::unique_ptr<Workload> make_long_dispatch_workload(std::string_view backend,
                                                      const AttentionShape& shape) {
  if (backend == "cpu") return std::make_unique<LongDispatchWorkload>(shape);
#ifdef BATON_HAVE_CUDA
  if (backend == "cuda") return std::make_unique<cuda::CudaLongDispatchWorkload>(shape);
#endif
  throw BackendUnavailable("[make_long_dispatch_workload] no workload for backend '" +
                           std::string(backend) + "' in this build");
}

}  // namespace baton
