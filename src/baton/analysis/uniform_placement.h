// Do hangs fall in dual-engine time more often than chance? If hangs fell uniformly over
// busy time, each attributed hang would land in dual time with probability
// p = dual_share, so the count in dual time is Binomial(n, p) and the p-value is its upper
// tail. Retries make hangs cluster, which breaks independence, so the test is repeated
// with each cluster (hangs within a window of the previous one) and each UTC day counted
// once, by its first hang. The honest answer is the range of the three p-values.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/analysis/exposure.h"

namespace baton {

struct UniformTest {
  std::int64_t n = 0;        // attributed hangs that fell in busy time
  std::int64_t in_dual = 0;  // of those, in dual time
  double p = 1.0;            // P(X >= in_dual), X ~ Binomial(n, dual_share)
};

struct DependenceTest {
  double cluster_window_s = 0.0;
  std::int64_t clusters = 0;
  std::int64_t clusters_in_dual = 0;
  double p_clusters = 1.0;
  std::int64_t days = 0;
  std::int64_t days_in_dual = 0;
  double p_days = 1.0;
};

// `hangs` sorted by time, as Exposure holds them; dual_share in [0, 1].
UniformTest uniform_test(const std::vector<HangPlacement>& hangs, double dual_share);
DependenceTest dependence_test(const std::vector<HangPlacement>& hangs, double dual_share,
                               double cluster_window_s);

}  // namespace baton
