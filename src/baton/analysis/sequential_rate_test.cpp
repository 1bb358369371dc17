#include "baton/analysis/sequential_rate_test.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace baton {
namespace {

using Decision = SequentialVerdict::Decision;

// Projections beyond this many hours count as "never".
constexpr double kMaxProjectedHours = 1e6;

void check_design(const SequentialDesign& d) {
  if (!(d.alpha > 0.0 && d.alpha < 1.0)) {
    throw std::invalid_argument("SequentialDesign.alpha must be in (0, 1)");
  }
  if (!(d.planned_hours >= 0.0 && std::isfinite(d.planned_hours))) {
    throw std::invalid_argument("SequentialDesign.planned_hours must be finite and >= 0");
  }
  if (!(d.reduction > 1.0 && std::isfinite(d.reduction))) {
    throw std::invalid_argument("SequentialDesign.reduction must be finite and > 1");
  }
  if (!(d.cluster_window_s >= 0.0 && std::isfinite(d.cluster_window_s))) {
    throw std::invalid_argument("SequentialDesign.cluster_window_s must be finite and >= 0");
  }
}

void check_block(const ExperimentBlock& block, std::int64_t index) {
  const std::string where = "experiment block " + std::to_string(index) + ": ";
  if (block.arm != 0 && block.arm != 1) {
    throw std::invalid_argument(where + "arm must be 0 (A) or 1 (B)");
  }
  if (!(block.hours >= 0.0 && std::isfinite(block.hours))) {
    throw std::invalid_argument(where + "hours must be finite and >= 0");
  }
  for (double t : block.hang_times_s) {
    if (!std::isfinite(t)) throw std::invalid_argument(where + "hang_times_s must be finite");
  }
}

}  // namespace

std::string_view to_string(SequentialVerdict::Decision decision) {
  using Decision = SequentialVerdict::Decision;
  switch (decision) {
    case Decision::continue_:
      return "continue";
    case Decision::a_better:
      return "a_better";
    case Decision::b_better:
      return "b_better";
    case Decision::no_difference:
      return "no_difference";
  }
  return "continue";
}

std::int64_t count_clusters(std::span<const double> times_s, double window_s) {
  if (!(window_s >= 0.0 && std::isfinite(window_s))) {
    throw std::invalid_argument("cluster_window_s must be finite and >= 0");
  }
  std::vector<double> sorted(times_s.begin(), times_s.end());
  for (double t : sorted) {
    if (!std::isfinite(t)) throw std::invalid_argument("hang_times_s must be finite");
  }
  std::sort(sorted.begin(), sorted.end());
  std::int64_t clusters = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i == 0 || sorted[i] - sorted[i - 1] > window_s) ++clusters;
  }
  return clusters;
}

SequentialRateTest::SequentialRateTest(const SequentialDesign& design)
    : design_((check_design(design), design)), mixture_(std::log(design.reduction)) {}

void SequentialRateTest::add_block(const ExperimentBlock& block) {
  check_block(block, blocks_seen_);
  ++blocks_seen_;
  const auto arm = static_cast<std::size_t>(block.arm);
  const Pending mine{.hours = block.hours,
                     .clusters = count_clusters(block.hang_times_s, design_.cluster_window_s)};
  hours_[arm] += block.hours;
  hangs_[arm] += static_cast<std::int64_t>(block.hang_times_s.size());
  clusters_[arm] += mine.clusters;
  if (block.hours == 0.0) return;  // no exposure: counted, never paired
  auto& others = waiting_[1 - arm];
  if (others.empty()) {
    waiting_[arm].push_back(mine);
    return;
  }
  const Pending other = others.front();
  others.pop_front();
  arm == 0 ? test_pair(mine, other) : test_pair(other, mine);
}

void SequentialRateTest::test_pair(const Pending& a, const Pending& b) {
  if (a.clusters + b.clusters == 0) return;  // M unchanged
  mixture_.add_pair(a.hours, static_cast<double>(a.clusters), b.hours,
                    static_cast<double>(b.clusters));
  best_log_e_value_ = std::max(best_log_e_value_, mixture_.log_e_value(1.0));
  if (crossed_ == Decision::continue_ && best_log_e_value_ >= -std::log(design_.alpha)) {
    // The confidence sequence excludes 1 now and holds the estimate: its side names the arm.
    const std::optional<double> ratio = mixture_.estimate();
    crossed_ = ratio && *ratio < 1.0 ? Decision::b_better : Decision::a_better;
  }
}

Decision SequentialRateTest::decision() const {
  if (crossed_ != Decision::continue_) return crossed_;
  if (design_.planned_hours > 0.0 && hours_[0] + hours_[1] >= design_.planned_hours) {
    return Decision::no_difference;
  }
  return Decision::continue_;
}

// The smallest extra hours x (found by doubling, then bisection) at which one more pair of
// x/2 hours per arm, holding the projected clusters, brings M to 1/alpha.
std::optional<double> SequentialRateTest::project_hours() const {
  if (hours_[0] == 0.0 || hours_[1] == 0.0 || clusters_[0] + clusters_[1] == 0) return std::nullopt;
  const double rate_a = static_cast<double>(clusters_[0]) / hours_[0];
  const double rate_b = static_cast<double>(clusters_[1]) / hours_[1];
  const double worse = std::max(rate_a, rate_b);
  const double better = worse / design_.reduction;
  const double needed = -std::log(design_.alpha);
  const auto reaches = [&](double x) {
    const double half = x / 2.0;
    const double count_a = (rate_a >= rate_b ? worse : better) * half;
    const double count_b = (rate_a >= rate_b ? better : worse) * half;
    return mixture_.log_e_value_with(half, count_a, half, count_b) >= needed;
  };
  if (!reaches(kMaxProjectedHours)) return std::nullopt;
  double low = 0.0;
  double high = 0.25;
  while (!reaches(high)) {
    low = high;
    high *= 2.0;
  }
  while (high - low > 0.01) {
    const double mid = 0.5 * (low + high);
    (reaches(mid) ? high : low) = mid;
  }
  return high;
}

SequentialVerdict SequentialRateTest::verdict() const {
  SequentialVerdict v{
      .hours_a = hours_[0],
      .hours_b = hours_[1],
      .hangs_a = hangs_[0],
      .hangs_b = hangs_[1],
      .clusters_a = clusters_[0],
      .clusters_b = clusters_[1],
      .tested_clusters_a = static_cast<std::int64_t>(mixture_.count_a()),
      .tested_clusters_b = static_cast<std::int64_t>(mixture_.count_b()),
      .p_value = std::min(1.0, std::exp(-best_log_e_value_)),
      .ratio = mixture_.estimate(),
      .ratio_low = 0.0,
      .ratio_high = std::nullopt,
      .decision = decision(),
      .hours_still_needed = std::nullopt,
      .planned_hours_left = std::nullopt,
  };
  const RatioBounds bounds = mixture_.bounds(design_.alpha);
  v.ratio_low = bounds.low;
  v.ratio_high = bounds.high;
  v.hours_still_needed = v.decision == Decision::continue_ ? project_hours() : 0.0;
  if (design_.planned_hours > 0.0) {
    v.planned_hours_left = std::max(0.0, design_.planned_hours - hours_[0] - hours_[1]);
  }
  return v;
}

SequentialVerdict sequential_verdict(std::span<const ExperimentBlock> blocks,
                                     const SequentialDesign& design) {
  SequentialRateTest test(design);
  for (const ExperimentBlock& block : blocks) test.add_block(block);
  return test.verdict();
}

}  // namespace baton
