#include "baton/turn/host_shared_state.h"

#include <algorithm>

namespace baton {

void add_busy_locked(HostSharedState& state, std::uint32_t count, std::int64_t at_ns) {
  if (count == 0) return;
  HostOverlapCounters& overlap = state.overlap;
  const std::uint32_t before = overlap.busy;
  overlap.busy += count;
  overlap.max_busy = std::max(overlap.max_busy, overlap.busy);
  for (HostProcess& p : state.processes) {
    if (p.in_use != 0) p.max_busy_seen = std::max(p.max_busy_seen, overlap.busy);
  }
  if (before < 2 && overlap.busy >= 2) {
    overlap.episode_start_ns = at_ns;
    ++overlap.episodes;
  }
}

void remove_busy_locked(HostSharedState& state, std::uint32_t count, std::int64_t at_ns) {
  HostOverlapCounters& overlap = state.overlap;
  count = std::min(count, overlap.busy);
  if (count == 0) return;
  if (overlap.busy >= 2 && overlap.busy - count < 2) {
    overlap.closed_ns += std::max<std::int64_t>(at_ns - overlap.episode_start_ns, 0);
  }
  overlap.busy -= count;
}

}  // namespace baton
