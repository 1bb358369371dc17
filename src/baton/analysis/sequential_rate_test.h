// The live A/B experiment's verdict: is arm B's hang rate different from arm A's, asked
// after every block and still valid however often it is asked (continuous monitoring).
//
// Method: an always-valid p-value and confidence sequence from a mixture likelihood-ratio
// martingale (rate_ratio_mixture.h), not a group-sequential design with alpha spending.
// Why: the server looks at the data every minute and may stop at any time (planned hours
// reached, operator's decision); alpha spending needs the looks and the information at each
// fixed in advance, the martingale needs neither. And the conditional binomial is exact
// for the question: given the clusters in a pair of blocks, B's share is
// Binomial(m, R*hb / (R*hb + ha)) whatever the common baseline rate or the traffic.
//
// The unit is a cluster of hangs within one block: a hang within `cluster_window_s` of the
// previous hang of the same block joins its cluster (clusters chain, as `analyze
// --cluster-window`). Retries make one hang bring the next, so single hangs are not
// independent; cluster starts nearly are (in a self-exciting process the "immigrant"
// clusters are Poisson). Clusters stop at block boundaries so that pairs stay independent
// given their totals; whole blocks as units would throw away the counts.
//
// Pairing: blocks are taken in order, and each block of one arm is paired with the oldest
// unpaired block of the other (with the schedule's permuted blocks, each window of two).
// That rule looks at arms and hours only, never at counts, so the pairs are fixed before
// their outcomes. Blocks with zero hours are not paired (no exposure, nothing to compare);
// a block waiting for its partner is counted in the totals but not yet in the test.
//
// Thread-safety: SequentialRateTest is a value type (one per thread); the functions are pure.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "baton/analysis/rate_ratio_mixture.h"

namespace baton {

struct ExperimentBlock {
  int arm = 0;         // 0 = A (e.g. the baseline, `concurrent`), 1 = B (the candidate)
  double hours = 0.0;  // the block's exposure (dual-engine or busy hours: the same in all)
  // The block's hangs, in seconds from any origin (Unix time or from the experiment's
  // start); only gaps within the block count. Any order.
  std::vector<double> hang_times_s;
};

struct SequentialDesign {
  double alpha = 0.05;  // two-sided: the chance of ever naming a winner when there is none
  // Both arms' hours together after which no verdict means no difference; 0 = no limit.
  double planned_hours = 0.0;
  // The rate cut the design is sized for (> 1): the prior on log R has this log as its
  // standard deviation, and the hours still needed assume it.
  double reduction = 5.0;
  double cluster_window_s = 45.0 * 60.0;
};

struct SequentialVerdict {
  double hours_a = 0.0;
  double hours_b = 0.0;
  std::int64_t hangs_a = 0;
  std::int64_t hangs_b = 0;
  std::int64_t clusters_a = 0;
  std::int64_t clusters_b = 0;
  // Paired clusters, the ones the test has seen (blocks still waiting for a partner and
  // blocks without hours are left out).
  std::int64_t tested_clusters_a = 0;
  std::int64_t tested_clusters_b = 0;
  // Always valid: the smallest 1/M over the looks so far (never rises), capped at 1.
  double p_value = 1.0;
  // R = rate_B / rate_A (below 1: B hangs less), the conditional maximum-likelihood
  // estimate over the paired clusters; empty when A has no cluster (unbounded) or there is
  // none at all.
  std::optional<double> ratio;
  // The confidence sequence at 1 - alpha, now: valid at any time, whenever looked at.
  double ratio_low = 0.0;
  std::optional<double> ratio_high;  // empty when unbounded
  enum class Decision { continue_, a_better, b_better, no_difference };
  Decision decision = Decision::continue_;
  // More hours (both arms together, split evenly) until the test would decide if, from now
  // on, the arm with the higher cluster rate keeps it and the other runs at 1/reduction of
  // it. 0 once decided; empty without a cluster yet (no rate to project) or when no amount
  // up to a million hours suffices.
  std::optional<double> hours_still_needed;
  // planned_hours minus the hours run (at least 0); empty without a plan.
  std::optional<double> planned_hours_left;
};

// The number of clusters among `times_s`: a hang more than `window_s` after the previous
// one starts a new cluster (gaps of exactly the window join). Throws on non-finite times.
std::int64_t count_clusters(std::span<const double> times_s, double window_s);

// "continue", "a_better", "b_better", "no_difference": as /v1/experiment and the ledger say it.
std::string_view to_string(SequentialVerdict::Decision decision);

// The test fed one block at a time (what the server and the simulation do).
class SequentialRateTest {
 public:
  explicit SequentialRateTest(const SequentialDesign& design);

  // Throws std::invalid_argument naming the field: arm not 0 or 1, hours negative or not
  // finite, a hang time not finite.
  void add_block(const ExperimentBlock& block);

  // Cheap: the decision so far (continue_ until the p-value reaches alpha or the plan ends).
  SequentialVerdict::Decision decision() const;
  // Everything, with the confidence sequence and the projection (costlier: a few
  // thousand log-likelihood evaluations).
  SequentialVerdict verdict() const;

 private:
  struct Pending {
    double hours;
    std::int64_t clusters;
  };
  void test_pair(const Pending& a, const Pending& b);
  std::optional<double> project_hours() const;

  SequentialDesign design_;
  RateRatioMixture mixture_;
  std::deque<Pending> waiting_[2];  // unpaired blocks per arm, oldest first
  double hours_[2] = {0.0, 0.0};
  std::int64_t hangs_[2] = {0, 0};
  std::int64_t clusters_[2] = {0, 0};
  double best_log_e_value_ = 0.0;  // the largest log M at R = 1 so far
  SequentialVerdict::Decision crossed_ = SequentialVerdict::Decision::continue_;
  std::int64_t blocks_seen_ = 0;  // to name a bad block in errors
};

// The verdict over all blocks so far, in the order they ran.
SequentialVerdict sequential_verdict(std::span<const ExperimentBlock> blocks,
                                     const SequentialDesign& design);

}  // namespace baton
