#include "baton/host/make_runner.h"

#include <map>
#include <string>

#include "baton/gpu/backend_unavailable.h"
#ifdef BATON_HAVE_CUDA
#include "baton/model/cuda/cuda_model_runner.h"
#endif

namespace baton {
namespace {

#ifdef BATON_HAVE_CUDA
ModelRunnerFactory cuda_runner_factory() {
  using Uploaded = std::map<const LlamaModel*, std::shared_ptr<const cuda::CudaModel>>;
  auto uploaded = std::make_shared<Uploaded>();
  return [uploaded](const LlamaModel& model, const KvBlockPool& pool,
                    Stream& stream) -> std::unique_ptr<ModelRunner> {
    std::shared_ptr<const cuda::CudaModel>& weights = (*uploaded)[&model];
    if (!weights) weights = std::make_shared<const cuda::CudaModel>(model);
    return std::make_unique<cuda::CudaModelRunner>(weights, pool,
                                                   dynamic_cast<cuda::CudaStream&>(stream));
  };
}
#endif

}  // namespace

ModelRunnerFactory make_runner_factory(const Device& device) {
  if (device.backend() == "cpu") return cpu_runner_factory();
#ifdef BATON_HAVE_CUDA
  if (device.backend() == "cuda") return cuda_runner_factory();
#endif
  throw BackendUnavailable("[make_runner_factory] models do not run on the " +
                           std::string(device.backend()) + " backend in this build");
}

std::size_t kv_value_bytes(const Device& device) {
  return device.backend() == "cuda" ? 2 : sizeof(float);
}

}  // namespace baton
