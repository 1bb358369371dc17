#include "baton/server/observe/exposure_counters.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/ledger/interval_merge.h"
#include "baton/ledger/ledger.h"
#include "baton/server/observe/metrics.h"

namespace baton {
namespace {

// Every class the ledger's events table holds: all of them are counted, by class.
const std::set<std::string> kAllClasses{"hang", "timeout", "submissions_ignored", "other",
                                        "slowdown"};

double seconds_of(TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// The state's own policy (the one its bursts ran under); `idle_policy` where none was busy.
std::string state_labels(const std::optional<StratumState>& s, const std::string& idle_policy,
                         const std::string& backend) {
  const auto yes_no = [](bool b) { return b ? "true" : "false"; };
  return fmt::format(
      R"(busy="{}",prefill_in_flight="{}",long_context="{}",policy="{}",backend="{}")",
      !s             ? "0"
      : s->busy >= 3 ? "3+"
                     : std::to_string(s->busy),
      yes_no(s && s->prefill_in_flight), yes_no(s && s->long_context),
      label_value(s ? s->policy : idle_policy), label_value(backend));
}

}  // namespace

ExposureCounters::ExposureCounters(Options options, TimePoint start)
    : options_(std::move(options)), policy_(options_.policy), settled_(seconds_of(start)) {
  std::vector<std::optional<StratumState>> states{std::nullopt};
  std::vector<std::string> policies = options_.other_policies;
  policies.insert(policies.begin(), options_.policy);
  for (const std::string& policy : policies) {
    for (const int busy : {1, 2, 3}) {
      for (const bool prefill : {false, true}) {
        for (const bool long_context : {false, true}) {
          const StratumState s{.busy = busy,
                               .prefill_in_flight = prefill,
                               .long_context = long_context,
                               .host = "",
                               .policy = policy,
                               .backend = options_.backend,
                               .driver = "",
                               .day = ""};
          seconds_[s] = 0.0;
          states.push_back(s);
        }
      }
    }
  }
  std::vector<std::string> engines = options_.engines;
  engines.push_back("");
  for (const std::string& error_class : kAllClasses) {
    for (const std::string& engine : engines) {
      for (const auto& state : states) faults_[{error_class, engine, state}] = 0;
    }
  }
}

void ExposureCounters::burst_done(const BurstRecord& burst) {
  // Busy from asking for the turn, as the ledger's intervals are.
  BusyInterval interval{.engine = burst.engine,
                        .start = seconds_of(burst.asked),
                        .end = seconds_of(burst.done),
                        .context_tokens = static_cast<std::int64_t>(burst.context_tokens),
                        .kind = std::string(to_string(burst.kind)),
                        .policy = "",
                        .backend = options_.backend};
  std::lock_guard lock(mu_);
  interval.policy = policy_;
  if (!(interval.end > settled_)) return;
  // The ledger's merge rule (interval_merge.h), so that both count the same busy time.
  const auto last = std::find_if(pending_.rbegin(), pending_.rend(), [&](const Pending& p) {
    return p.interval.engine == interval.engine;
  });
  const auto side = [](const BusyInterval& i, std::uint64_t request) {
    return MergeSide{.kind = i.kind,
                     .request_id = static_cast<std::int64_t>(request),
                     .context_tokens = i.context_tokens,
                     .start = i.start,
                     .end = i.end};
  };
  if (last != pending_.rend() &&
      extends_interval(side(last->interval, last->request),
                       side(interval, burst.request_id), Ledger::kMergeGapSeconds)) {
    last->interval.end = std::max(last->interval.end, interval.end);
    last->interval.context_tokens =
        std::max(*last->interval.context_tokens, *interval.context_tokens);
    return;
  }
  pending_.push_back({.interval = std::move(interval), .request = burst.request_id});
}

void ExposureCounters::set_policy(std::string policy) {
  std::lock_guard lock(mu_);
  policy_ = std::move(policy);
}

void ExposureCounters::fault(const FaultEvent& event) {
  // Placed where it began, as the ledger places it.
  const double at = seconds_of(event.onset.value_or(event.time));
  std::lock_guard lock(mu_);
  events_.push_back({std::max(at, settled_), event.engine, std::string(to_string(event.kind))});
}

void ExposureCounters::settle(double horizon) {
  ExposureInput window;
  {
    std::lock_guard lock(mu_);
    if (!(horizon > settled_)) return;
    for (const Pending& pending : pending_) {
      if (pending.interval.start >= horizon) continue;
      BusyInterval part = pending.interval;
      part.start = std::max(part.start, settled_);
      part.end = std::min(part.end, horizon);
      window.intervals.push_back(std::move(part));
    }
    std::erase_if(pending_, [&](const Pending& p) { return p.interval.end <= horizon; });
    for (const HangRecord& e : events_) {
      if (e.time < horizon) window.hangs.push_back(e);
    }
    std::erase_if(events_, [&](const HangRecord& e) { return e.time < horizon; });
    settled_ = horizon;
  }
  // The labels carry no day: a state's stretches of every day add up.
  const auto undated = [](std::optional<StratumState> s) {
    if (s) s->day.clear();
    return s;
  };
  const Strata strata = stratify(window, options_.long_context, kAllClasses, "");
  for (const Stratum& s : strata.strata) seconds_[*undated(s.state)] += s.hours * 3600.0;
  for (const PlacedEvent& placed : strata.events) {
    ++faults_[{placed.event.error_class, placed.event.engine, undated(placed.state)}];
  }
}

void ExposureCounters::render(std::string& out, TimePoint now) {
  std::lock_guard lock(settle_mu_);
  settle(seconds_of(now) - std::chrono::duration<double>(options_.settle_after).count());
  out +=
      "# HELP baton_process_start_time_seconds When this server started, Unix seconds.\n"
      "# TYPE baton_process_start_time_seconds gauge\n";
  out += fmt::format("baton_process_start_time_seconds {:.3f}\n", options_.start_unix);
  out +=
      "# HELP baton_exposure_seconds_total Seconds at least one LLM engine was busy, by how "
      "many were, whether a prefill was in flight and a long context open, under the turn "
      "policy and backend (settled up to a few seconds ago).\n"
      "# TYPE baton_exposure_seconds_total counter\n";
  for (const auto& [state, seconds] : seconds_) {
    out += fmt::format("baton_exposure_seconds_total{{{}}} {}\n",
                       state_labels(state, options_.policy, options_.backend), seconds);
  }
  out +=
      "# HELP baton_exposure_faults_total Fault events by class and blamed engine, with the "
      "engines' state where each began (busy=\"0\": no LLM engine busy).\n"
      "# TYPE baton_exposure_faults_total counter\n";
  for (const auto& [key, count] : faults_) {
    const auto& [error_class, engine, state] = key;
    out += fmt::format("baton_exposure_faults_total{{class=\"{}\",engine=\"{}\",{}}} {}\n",
                       label_value(error_class), label_value(engine),
                       state_labels(state, options_.policy, options_.backend), count);
  }
}

}  // namespace baton
