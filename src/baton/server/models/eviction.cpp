#include "baton/server/models/eviction.h"

#include <algorithm>
#include <numeric>

namespace baton {

EvictionPlan choose_evictions(std::span<const EvictionCandidate> candidates, std::uint64_t needed,
                              std::uint64_t budget, std::uint64_t used) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return candidates[a].last_used < candidates[b].last_used;  // never used (nullopt) first
  });
  EvictionPlan plan;
  std::uint64_t free = budget > used ? budget - used : 0;
  for (const std::size_t i : order) {
    plan.evictable += candidates[i].memory;
    if (free >= needed) continue;
    plan.evict.push_back(i);
    free += candidates[i].memory;
  }
  plan.fits = free >= needed;
  if (!plan.fits) plan.evict.clear();
  return plan;
}

}  // namespace baton
