// Which ready models to unload so that another fits the memory budget: the least recently
// used first (one never used before any used), until the model fits; none when even all
// of them would not make room. A pure function, apart from the registry's state machine.
// Thread-safety: reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "baton/common/clock.h"

namespace baton {

// A model the registry may unload: ready, not pinned, not the one being loaded.
struct EvictionCandidate {
  std::uint64_t memory = 0;
  std::optional<TimePoint> last_used;  // none: never used
};

struct EvictionPlan {
  bool fits = false;               // the model fits once `evict` are gone
  std::vector<std::size_t> evict;  // indices into the candidates, in the order to unload
  std::uint64_t evictable = 0;     // what all the candidates hold together
};

// For a model of `needed` bytes while `used` of `budget` bytes are taken (the candidates'
// among them).
EvictionPlan choose_evictions(std::span<const EvictionCandidate> candidates, std::uint64_t needed,
                              std::uint64_t budget, std::uint64_t used);

}  // namespace baton
