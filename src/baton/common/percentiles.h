// Order statistics of latency samples (nearest-rank percentiles).
// Thread-safety: pure functions.
#pragma once

#include <vector>

namespace baton {

struct LatencySummary {
  std::size_t count = 0;
  double p50 = 0.0;
  double p99 = 0.0;
  double max = 0.0;
  double mean = 0.0;
};

// Nearest-rank percentile, q in [0, 1]; 0 for an empty sample.
double percentile(std::vector<double> samples, double q);

LatencySummary summarize(const std::vector<double>& samples);

}  // namespace baton
