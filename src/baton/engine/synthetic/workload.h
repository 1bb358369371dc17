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
  // Tokens of context the next burst works on (for slowdown buckets and the ledger).
  virtual std::size_t context_tokens() const { return 0; }
  // Encodes one burst on `stream`, calling `yield_point` between ops and between layers
  // (the turn decides whether to hand over there). The caller synchronizes afterwards.
  virtual void encode_burst(Stream& stream, const std::function<void(Boundary)>& yield_point) = 0;
  // The fraction of the device the following work should size itself for (the turn's
  // partition); called before each burst and at each yield point. Default: ignored.
  virtual void set_device_share(double /*share*/) {}
};

}  // namespace baton
