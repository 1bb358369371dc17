// make_runner_factory: where a host's model engines run their models, by the device's
// backend: the CPU forward pass, or the CUDA runner (each model's weights uploaded once and
// shared by every engine of the host that serves it).
// Thread-safety: the factory is called during the host's set-up only, from one thread.
#pragma once

#include "baton/engine/model_runner_factory.h"
#include "baton/gpu/device.h"

namespace baton {

// BackendUnavailable for a backend this build cannot run models on.
ModelRunnerFactory make_runner_factory(const Device& device);
// The CPU forward pass (model/cpu/), whatever the stream.
ModelRunnerFactory cpu_runner_factory();
// Bytes of one key or value number in that backend's runner (f32 on the CPU, bf16 on CUDA).
std::size_t kv_value_bytes(const Device& device);
// Threads for a step's grammar masks (LlmBatchOptions::mask_threads): 1 on the CPU, whose
// forward pass takes every core; beside a GPU's pass, up to 8 of the host's cores.
int mask_threads_for(const Device& device);

}  // namespace baton
