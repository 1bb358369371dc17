#include "baton/engine/model_runner_factory.h"

#include "baton/model/cpu/cpu_model_runner.h"

namespace baton {

ModelRunnerFactory cpu_runner_factory() {
  return [](const LlamaModel& model, const KvBlockPool& pool, Stream&) {
    return std::make_unique<CpuModelRunner>(model, pool);
  };
}

}  // namespace baton
