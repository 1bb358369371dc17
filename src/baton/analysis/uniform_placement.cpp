#include "baton/analysis/uniform_placement.h"

#include <cmath>
#include <functional>

#include "baton/analysis/rate_statistics.h"
#include "baton/common/clock.h"

namespace baton {
namespace {

// The hangs the test is about: blamed on an engine, and in busy time (the hypothesis
// places hangs in busy time only).
std::vector<const HangPlacement*> tested(const std::vector<HangPlacement>& hangs) {
  std::vector<const HangPlacement*> out;
  for (const HangPlacement& h : hangs) {
    if (!h.hang.engine.empty() && h.busy_engines >= 1) out.push_back(&h);
  }
  return out;
}

// Counts groups of consecutive hangs (a new group starts where `starts_group` says) and
// the groups whose first hang fell in dual time.
std::pair<std::int64_t, std::int64_t> count_groups(
    const std::vector<const HangPlacement*>& hangs,
    const std::function<bool(const HangRecord& previous, const HangRecord& next)>& starts_group) {
  std::int64_t groups = 0;
  std::int64_t in_dual = 0;
  for (std::size_t i = 0; i < hangs.size(); ++i) {
    if (i == 0 || starts_group(hangs[i - 1]->hang, hangs[i]->hang)) {
      ++groups;
      if (hangs[i]->busy_engines >= 2) ++in_dual;
    }
  }
  return {groups, in_dual};
}

}  // namespace

UniformTest uniform_test(const std::vector<HangPlacement>& hangs, double dual_share) {
  const auto counted = tested(hangs);
  UniformTest test;
  test.n = static_cast<std::int64_t>(counted.size());
  for (const HangPlacement* h : counted) test.in_dual += h->busy_engines >= 2 ? 1 : 0;
  test.p = binomial_upper_tail(test.n, test.in_dual, dual_share);
  return test;
}

DependenceTest dependence_test(const std::vector<HangPlacement>& hangs, double dual_share,
                               double cluster_window_s) {
  const auto counted = tested(hangs);
  DependenceTest test;
  test.cluster_window_s = cluster_window_s;
  std::tie(test.clusters, test.clusters_in_dual) =
      count_groups(counted, [cluster_window_s](const HangRecord& previous, const HangRecord& next) {
        return next.time - previous.time > cluster_window_s;
      });
  test.p_clusters = binomial_upper_tail(test.clusters, test.clusters_in_dual, dual_share);
  std::tie(test.days, test.days_in_dual) =
      count_groups(counted, [](const HangRecord& previous, const HangRecord& next) {
        return std::floor(next.time / kSecondsPerDay) != std::floor(previous.time / kSecondsPerDay);
      });
  test.p_days = binomial_upper_tail(test.days, test.days_in_dual, dual_share);
  return test;
}

}  // namespace baton
