// simulated_experiment: thousands of simulated live A/B experiments with clustered hangs,
// to check the sequential verdict (analysis/sequential_rate_test.h) when it is looked at
// after every block: its false-positive rate under no difference, its power under a cut of
// the rate, and the hours it takes, beside fixed-sample tests and the fixed-horizon plan.
//
// The hang process, after the study (MISSION.md): clusters arrive at `base` per exposure
// hour (1 hang per dual-engine hour on average with the default branching), and every hang
// makes clients retry with long re-prefills, which raises the hazard by `branching` hangs
// spread over an exponential decay of `decay` minutes (a self-exciting, Hawkes process; the
// boost carries over a block switch). Arm B multiplies the whole hazard by 1/cut. Traffic
// follows the day: exposure hours per wall hour 0.7 + 0.3 cos(2 pi (h - 15) / 24), and the
// hazard per exposure hour itself swings by +-`swing` over the day (both arms alike). Arms
// follow BlockSchedule (permuted blocks balanced over the day).
//
// Usage: simulated_experiment [--experiments N (2000)] [--seed S (1)] [--block-hours 1]
//        [--planned-hours 200] [--alpha 0.05] [--cut 5] [--reduction 5]
//        [--cluster-window-min 45] [--base 0.5] [--branching 0.5] [--decay-min 15]
//        [--swing 0.3]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "baton/analysis/ab_plan.h"
#include "baton/analysis/block_schedule.h"
#include "baton/analysis/rate_statistics.h"
#include "baton/analysis/sequential_rate_test.h"

namespace {

using baton::SequentialVerdict;
using Decision = SequentialVerdict::Decision;

struct Options {
  int experiments = 2000;
  std::uint64_t seed = 1;
  double block_hours = 1.0;
  double planned_hours = 200.0;
  double alpha = 0.05;
  double cut = 5.0;
  double reduction = 5.0;
  double cluster_window_min = 45.0;
  double base = 0.5;
  double branching = 0.5;
  double decay_min = 15.0;
  double swing = 0.3;
};

Options parse(int argc, char** argv) {
  Options o;
  const std::map<std::string, double*> reals{{"--block-hours", &o.block_hours},
                                             {"--planned-hours", &o.planned_hours},
                                             {"--alpha", &o.alpha},
                                             {"--cut", &o.cut},
                                             {"--reduction", &o.reduction},
                                             {"--cluster-window-min", &o.cluster_window_min},
                                             {"--base", &o.base},
                                             {"--branching", &o.branching},
                                             {"--decay-min", &o.decay_min},
                                             {"--swing", &o.swing}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    if (name == "--experiments") {
      o.experiments = std::atoi(argv[i + 1]);
    } else if (name == "--seed") {
      o.seed = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (reals.count(name) != 0) {
      *reals.at(name) = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown option %s (see the file's head)\n", name.c_str());
      std::exit(2);
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "options come in pairs: --name value\n");
    std::exit(2);
  }
  return o;
}

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Exposure hours per wall hour at wall time t (hours from a midnight), and its integral.
double traffic(double t) { return 0.7 + 0.3 * std::cos(kTwoPi * (t - 15.0) / 24.0); }
double traffic_integral(double t0, double t1) {
  return 0.7 * (t1 - t0) +
         0.3 * 24.0 / kTwoPi *
             (std::sin(kTwoPi * (t1 - 15.0) / 24.0) - std::sin(kTwoPi * (t0 - 15.0) / 24.0));
}

struct Hazard {
  const Options& o;
  double time_of_day_factor(double t) const {
    return 1.0 + o.swing * std::sin(kTwoPi * (t - 9.0) / 24.0);
  }
};

// One experiment's hang process, block after block (Ogata's thinning; the retry boost
// only decays between hangs, so the hazard at the last hang bounds it until the next).
class HangProcess {
 public:
  HangProcess(const Options& o, std::mt19937_64& random) : o_(o), random_(random) {}

  // Hang times (seconds) in [t0, t1) hours under the arm's hazard multiplier.
  std::vector<double> run(double t0, double t1, double multiplier) {
    std::vector<double> hangs;
    const double decay_h = o_.decay_min / 60.0;
    const double peak = 1.0 * (1.0 + o_.swing);  // traffic <= 1, time-of-day factor <= 1 + swing
    double t = t0;
    std::exponential_distribution<double> unit(1.0);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    while (true) {
      const double bound = peak * multiplier * (o_.base + boost_);
      const double dt = unit(random_) / bound;
      const double next = std::min(t + dt, t1);
      boost_ *= std::exp(-(next - t) / decay_h);
      t = next;
      if (t >= t1) break;
      const double hazard = traffic(t) * (1.0 + o_.swing * std::sin(kTwoPi * (t - 9.0) / 24.0)) *
                            multiplier * (o_.base + boost_);
      if (uniform(random_) * bound < hazard) {
        hangs.push_back(t * 3600.0);
        boost_ += o_.branching / decay_h;
      }
    }
    return hangs;
  }

 private:
  const Options& o_;
  std::mt19937_64& random_;
  double boost_ = 0.0;  // hangs per exposure hour added by retries, decaying
};

constexpr double kFixedLooks[] = {25.0, 50.0, 100.0};

struct Outcome {
  Decision sequential = Decision::continue_;
  double sequential_hours = 0.0;  // both arms, at the verdict
  bool naive_clusters = false;    // compare_rates on clusters, p < alpha at some block
  bool naive_hangs = false;       // the same on single hangs
  // compare_rates on clusters once, when both arms' hours first reach each kFixedLooks (the
  // last one: the planned hours).
  std::vector<bool> fixed_clusters;
  double hangs_a = 0.0, clusters_a = 0.0, hours_a = 0.0;
};

Outcome run_experiment(const Options& o, double cut, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const baton::BlockSchedule schedule({.arms = 2, .block_hours = o.block_hours, .seed = seed});
  const baton::SequentialDesign design{.alpha = o.alpha,
                                       .planned_hours = o.planned_hours,
                                       .reduction = o.reduction,
                                       .cluster_window_s = o.cluster_window_min * 60.0};
  baton::SequentialRateTest test(design);
  HangProcess process(o, random);
  Outcome out;
  double hours[2] = {0, 0};
  std::int64_t hangs[2] = {0, 0};
  std::int64_t clusters[2] = {0, 0};
  const double start = std::uniform_real_distribution<double>(0.0, 24.0)(random);
  std::vector<double> looks;
  for (double h : kFixedLooks) {
    if (h < o.planned_hours) looks.push_back(h);
  }
  looks.push_back(o.planned_hours);
  std::size_t next_look = 0;
  for (std::int64_t k = 0; hours[0] + hours[1] < o.planned_hours; ++k) {
    const int arm = schedule.arm(k);
    const double t0 = start + static_cast<double>(k) * o.block_hours;
    const double t1 = t0 + o.block_hours;
    baton::ExperimentBlock block{.arm = arm,
                                 .hours = traffic_integral(t0, t1),
                                 .hang_times_s = process.run(t0, t1, arm == 1 ? 1.0 / cut : 1.0)};
    test.add_block(block);
    hours[arm] += block.hours;
    hangs[arm] += static_cast<std::int64_t>(block.hang_times_s.size());
    clusters[arm] += baton::count_clusters(block.hang_times_s, design.cluster_window_s);
    const auto significant = [&](const std::int64_t* counts) {
      return baton::compare_rates(counts[0], hours[0], counts[1], hours[1]).p_value < o.alpha;
    };
    if (!block.hang_times_s.empty()) {
      out.naive_clusters = out.naive_clusters || significant(clusters);
      out.naive_hangs = out.naive_hangs || significant(hangs);
    }
    while (next_look < looks.size() && hours[0] + hours[1] >= looks[next_look] - 1e-9) {
      out.fixed_clusters.push_back(significant(clusters));
      ++next_look;
    }
    if (out.sequential == Decision::continue_) {
      out.sequential = test.decision();
      out.sequential_hours = hours[0] + hours[1];
    }
  }
  out.hangs_a = static_cast<double>(hangs[0]);
  out.clusters_a = static_cast<double>(clusters[0]);
  out.hours_a = hours[0];
  return out;
}

// Nearest-rank percentile; NaN for none.
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

struct Summary {
  double sequential = 0, naive_clusters = 0, naive_hangs = 0;
  std::vector<double> looks;           // the fixed looks' hours
  std::vector<double> fixed_clusters;  // the share significant at each
  std::vector<double> hours;           // to a correct verdict (any verdict under the null)
  double hangs_per_hour_a = 0, clusters_per_hour_a = 0;
};

Summary run_scenario(const Options& o, double cut) {
  Summary s;
  double hangs = 0, clusters = 0, hours = 0;
  for (int i = 0; i < o.experiments; ++i) {
    const Outcome r = run_experiment(
        o, cut,
        o.seed * 1000003ULL + static_cast<std::uint64_t>(i) + (cut == 1.0 ? 0 : 500000000ULL));
    const bool named = r.sequential == Decision::a_better || r.sequential == Decision::b_better;
    const bool right = cut == 1.0 ? named : r.sequential == Decision::b_better;
    s.sequential += right ? 1 : 0;
    if (right) s.hours.push_back(r.sequential_hours);
    s.naive_clusters += r.naive_clusters ? 1 : 0;
    s.naive_hangs += r.naive_hangs ? 1 : 0;
    s.fixed_clusters.resize(r.fixed_clusters.size());
    for (std::size_t j = 0; j < r.fixed_clusters.size(); ++j) {
      s.fixed_clusters[j] += r.fixed_clusters[j] ? 1 : 0;
    }
    hangs += r.hangs_a;
    clusters += r.clusters_a;
    hours += r.hours_a;
  }
  const double n = o.experiments;
  s.sequential /= n;
  s.naive_clusters /= n;
  s.naive_hangs /= n;
  for (double& f : s.fixed_clusters) f /= n;
  for (double h : kFixedLooks) {
    if (h < o.planned_hours) s.looks.push_back(h);
  }
  s.looks.push_back(o.planned_hours);
  s.hangs_per_hour_a = hangs / hours;
  s.clusters_per_hour_a = clusters / hours;
  return s;
}

// The fixed-horizon planner's best case for this experiment: the least total hours T
// (half per arm) at which `baton plan`'s conditional test, with arm A's expected clusters
// in T/2 as its baseline, rejects at alpha by T/2 hang-free hours of B.
double planner_hours(double clusters_per_hour, double alpha, double reduction_tested) {
  for (double t = 0.5; t < 1e5; t += 0.5) {
    const auto events = static_cast<std::int64_t>(std::llround(clusters_per_hour * t / 2.0));
    if (events == 0) continue;
    const auto needed =
        baton::hours_needed({.events = events, .hours = t / 2.0}, alpha, reduction_tested);
    if (needed.conditional && *needed.conditional <= t / 2.0) return t;
  }
  return std::nan("");
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.experiments < 1 || !(o.cut >= 1.0) || !(o.planned_hours > 0.0)) {
    std::fprintf(stderr, "need --experiments >= 1, --cut >= 1, --planned-hours > 0\n");
    return 2;
  }
  const auto began = std::chrono::steady_clock::now();
  const Summary null = run_scenario(o, 1.0);
  const Summary alt = run_scenario(o, o.cut);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();

  std::printf(
      "%d experiments per scenario, seed %llu, %.3g h blocks, up to %.0f h (both arms), "
      "alpha %.3g, cluster window %.0f min\n",
      o.experiments, static_cast<unsigned long long>(o.seed), o.block_hours, o.planned_hours,
      o.alpha, o.cluster_window_min);
  std::printf(
      "arm A: %.2f hangs and %.2f clusters per exposure hour; B: the same (null) or "
      "1/%.3g of the hazard\n\n",
      null.hangs_per_hour_a, null.clusters_per_hour_a, o.cut);
  std::printf(
      "| test, looked at after every block unless said | false positives (no difference) "
      "| power (%.3gx cut) | hours to B's verdict, median | 90th pct |\n",
      o.cut);
  std::printf("|---|---|---|---|---|\n");
  std::printf("| sequential (mixture martingale, clusters) | %.4f | %.4f | %.1f | %.1f |\n",
              null.sequential, alt.sequential, percentile(alt.hours, 0.5),
              percentile(alt.hours, 0.9));
  std::printf("| compare_rates on clusters (not valid when peeking) | %.4f | %.4f | | |\n",
              null.naive_clusters, alt.naive_clusters);
  std::printf("| compare_rates on single hangs (not valid when peeking) | %.4f | %.4f | | |\n",
              null.naive_hangs, alt.naive_hangs);
  for (std::size_t j = 0; j < null.looks.size(); ++j) {
    std::printf(
        "| compare_rates on clusters, one look at %.0f h (fixed horizon) | %.4f | %.4f | "
        "%.0f | %.0f |\n",
        null.looks[j], null.fixed_clusters[j], alt.fixed_clusters[j], null.looks[j], null.looks[j]);
  }
  const double se = std::sqrt(o.alpha * (1 - o.alpha) / o.experiments);
  std::printf("\n(a rate of alpha = %.3g has a standard error of %.4f over %d experiments)\n",
              o.alpha, se, o.experiments);
  std::printf(
      "fixed-horizon planner (baton plan, conditional, B hang-free): %.1f h in all "
      "(half per arm) at this cluster rate\n",
      planner_hours(null.clusters_per_hour_a, o.alpha, 1.0));
  std::printf("%.1f s\n", seconds);
  return 0;
}
