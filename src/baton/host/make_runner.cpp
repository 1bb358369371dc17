#include "baton/host/make_runner.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "baton/gpu/backend_unavailable.h"
#include "baton/model/cpu/cpu_model_runner.h"
#ifdef BATON_HAVE_CUDA
#include "baton/model/cuda/cuda_model_runner.h"
#endif

namespace baton {

ModelRunnerFactory cpu_runner_factory() {
  return [](const LlamaModel& model, const KvBlockPool& pool, Stream&) {
    return std::make_unique<CpuModelRunner>(model, pool);
  };
}

namespace {

#ifdef BATON_HAVE_CUDA
ModelRunnerFactory cuda_runner_factory() {
  // Weights are uploaded once per model and freed with the last runner that uses them
  // (an unloaded model's), so a model loaded again later is uploaded again.
  using Uploaded = std::map<const LlamaModel*, std::weak_ptr<const cuda::CudaModel>>;
  auto uploaded = std::make_shared<Uploaded>();
  auto mu = std::make_shared<std::mutex>();
  return [uploaded, mu](const LlamaModel& model, const KvBlockPool& pool,
                        Stream& stream) -> std::unique_ptr<ModelRunner> {
    std::shared_ptr<const cuda::CudaModel> weights;
    {
      std::lock_guard lock(*mu);
      weights = (*uploaded)[&model].lock();
      if (!weights) {
        weights = std::make_shared<const cuda::CudaModel>(model);
        (*uploaded)[&model] = weights;
      }
    }
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

int mask_threads_for(const Device& device) {
  if (device.backend() == "cpu") return 1;
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 2, 1, 8);
}

}  // namespace baton
