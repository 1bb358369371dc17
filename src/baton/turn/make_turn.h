// make_turn: builds the GpuTurn policy that TurnOptions names.
// Thread-safety: a pure factory.
#pragma once

#include <memory>

#include "baton/turn/gpu_turn.h"
#include "baton/turn/turn_options.h"

namespace baton {

class HostSegment;

// `default_stream` is drained at every hand-over by policies that serialize. Host scope:
// serialize is a HostTurn on `segment` (attached by name when null); concurrent stays
// ConcurrentTurn (only the overlap meter is host-wide); partition throws
// std::invalid_argument.
std::unique_ptr<GpuTurn> make_turn(const TurnOptions& options, Stream& default_stream,
                                   std::shared_ptr<HostSegment> segment = nullptr);

}  // namespace baton
