// make_turn: builds the GpuTurn policy that TurnOptions names.
// Thread-safety: a pure factory.
#pragma once

#include <memory>

#include "baton/turn/gpu_turn.h"
#include "baton/turn/turn_options.h"

namespace baton {

// `default_stream` is drained at every hand-over by policies that serialize.
std::unique_ptr<GpuTurn> make_turn(const TurnOptions& options, Stream& default_stream);

}  // namespace baton
