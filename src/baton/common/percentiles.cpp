#include "baton/common/percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace baton {

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  // Nearest rank: the smallest value with at least q of the sample at or below it.
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
  std::size_t index = rank == 0 ? 0 : rank - 1;
  std::nth_element(samples.begin(), samples.begin() + static_cast<long>(index), samples.end());
  return samples[index];
}

LatencySummary summarize(const std::vector<double>& samples) {
  LatencySummary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  s.p50 = percentile(samples, 0.50);
  s.p99 = percentile(samples, 0.99);
  s.max = *std::max_element(samples.begin(), samples.end());
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  return s;
}

}  // namespace baton
