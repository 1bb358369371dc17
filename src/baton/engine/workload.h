// Workload: what an engine encodes for one burst. The synthetic workloads here, a
// model's forward pass and (later) fault injectors all plug in behind this interface.
// Thread-safety: a workload belongs to one engine and is used by its thread only.
#pragma once

#include <functional>

#include "baton/gpu/stream.h"
#include "baton/turn/burst_kind.h"

namespace baton {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual BurstKind kind() const = 0;
  // Encodes one burst on `stream`, calling `between_layers` after each layer (the
  // turn's yield point). The caller synchronizes the stream afterwards.
  virtual void encode_burst(Stream& stream, const std::function<void()>& between_layers) = 0;
};

}  // namespace baton
