// ModelRunnerFactory: how an engine gets the runner of its model's steps, so that the
// engines do not know which backend runs the model: the host picks (host/make_runner.h).
// The runner executes on `stream` (the engine's) over the blocks `pool` accounts for.
// Thread-safety: a factory is called during an engine's construction, which may happen on
// several threads at once (models loaded while the server runs).
#pragma once

#include <functional>
#include <memory>

#include "baton/gpu/stream.h"
#include "baton/model/llama_model.h"
#include "baton/model/runner/kv_block_pool.h"
#include "baton/model/runner/model_runner.h"

namespace baton {

using ModelRunnerFactory = std::function<std::unique_ptr<ModelRunner>(
    const LlamaModel& model, const KvBlockPool& pool, Stream& stream)>;

}  // namespace baton
