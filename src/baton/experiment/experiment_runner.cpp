#include "baton/experiment/experiment_runner.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

#include "baton/common/json_or_null.h"

namespace baton {
namespace {

using Decision = SequentialVerdict::Decision;

// The day-balanced schedule when block_s divides the day; otherwise none.
std::optional<BlockSchedule> day_schedule(const ExperimentPlan& plan) {
  try {
    return BlockSchedule({.arms = 2, .block_hours = plan.block_s / 3600.0, .seed = plan.seed});
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

// With one block a "day" the schedule is permuted pairs from the same seed: each cycle of two
// blocks runs both arms, in an order its shifts draw (block_schedule.h).
BlockSchedule schedule_for(const ExperimentPlan& plan) {
  if (auto schedule = day_schedule(plan)) return *schedule;
  return BlockSchedule({.arms = 2, .block_hours = 24.0, .seed = plan.seed});
}

const ExperimentPlan& checked(const ExperimentPlan& plan, const ExperimentHooks& hooks) {
  validate(plan);
  if (!hooks.now_unix || !hooks.exposure_seconds || !hooks.switch_to || !hooks.block_started ||
      !hooks.block_ended || !hooks.ended) {
    throw std::invalid_argument("ExperimentHooks: every hook must be set");
  }
  return plan;
}

SequentialDesign design_of(const ExperimentPlan& plan) {
  return {.alpha = plan.alpha,
          .planned_hours = plan.planned_hours,
          .reduction = plan.reduction,
          .cluster_window_s = plan.cluster_window_s};
}

ExperimentState initial_state(const ExperimentPlan& plan) {
  ExperimentState state{.plan = plan.name, .day_balanced = day_schedule(plan).has_value()};
  for (const ExperimentArm& arm : plan.arms) {
    state.arms.push_back({.name = arm.name, .turn = describe(arm.turn)});
  }
  return state;
}

}  // namespace

ExperimentRunner::ExperimentRunner(ExperimentPlan plan, ExperimentHooks hooks)
    : plan_(checked(plan, hooks)),
      hooks_(std::move(hooks)),
      schedule_(schedule_for(plan_)),
      test_(design_of(plan_)),
      origin_(std::chrono::steady_clock::now()),
      state_(initial_state(plan_)) {
  const auto arm = static_cast<std::size_t>(schedule_.arm(0));
  const double switch_ms = hooks_.switch_to(arm);
  block_ = {.open = false,
            .index = 0,
            .arm = arm,
            .start_unix = hooks_.now_unix(),
            .start_exposure_s = hooks_.exposure_seconds(),
            .hang_times = {}};
  start_block(switch_ms);
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

ExperimentRunner::~ExperimentRunner() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
  if (!block_.open) return;
  try {  // the ledger gets the block in progress; a hook that throws here has nobody to tell
    const double end = hooks_.now_unix();
    const Closed closed = close_block(end, hooks_.exposure_seconds(), block_.index + 1, 0);
    hooks_.block_ended(closed.end);
  } catch (...) {
  }
}

void ExperimentRunner::record_hang(double unix_time) {
  if (!std::isfinite(unix_time)) {
    throw std::invalid_argument("ExperimentRunner::record_hang: the time is not finite");
  }
  std::lock_guard lock(mu_);
  if (state_.ended) {
    ++state_.hangs_after_end;
  } else if (unix_time < block_.start_unix) {
    ++state_.late_hangs;
  } else {
    block_.hang_times.push_back(unix_time);
  }
}

ExperimentState ExperimentRunner::state() const {
  std::lock_guard lock(mu_);
  ExperimentState out = state_;
  out.block_hangs = block_.open ? static_cast<std::int64_t>(block_.hang_times.size()) : 0;
  return out;
}

std::chrono::steady_clock::time_point ExperimentRunner::deadline(std::size_t block) const {
  const std::chrono::duration<double> since_origin(plan_.block_s * static_cast<double>(block + 1));
  return origin_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(since_origin);
}

void ExperimentRunner::run(std::stop_token stop) {
  try {
    for (std::size_t block = 0;; ++block) {
      {
        std::unique_lock lock(mu_);
        wake_.wait_until(lock, stop, deadline(block), [] { return false; });
      }
      if (stop.stop_requested() || !boundary()) return;
    }
  } catch (const std::exception& e) {
    fail(e.what());
  } catch (...) {
    fail("unknown exception");
  }
}

bool ExperimentRunner::boundary() {
  const std::size_t next = block_.index + 1;  // only this thread writes block_.index
  const auto next_arm = static_cast<std::size_t>(schedule_.arm(static_cast<std::int64_t>(next)));
  const double switch_ms = hooks_.switch_to(next_arm);
  const double end = hooks_.now_unix();
  const Closed closed = close_block(end, hooks_.exposure_seconds(), next, next_arm);
  hooks_.block_ended(closed.end);
  test_.add_block(closed.block);
  const SequentialVerdict verdict = test_.verdict();
  store_verdict(verdict);
  if (verdict.decision == Decision::continue_) {
    start_block(switch_ms);
    return true;
  }
  const std::size_t keep = verdict.decision == Decision::a_better   ? 0
                           : verdict.decision == Decision::b_better ? 1
                                                                    : plan_.end_arm;
  const double last_switch_ms = keep == next_arm ? switch_ms : hooks_.switch_to(keep);
  finish(keep, last_switch_ms,
         verdict.decision == Decision::no_difference ? "plan ran out" : "verdict");
  return false;
}

ExperimentRunner::Closed ExperimentRunner::close_block(double end_unix, double end_exposure_s,
                                                       std::size_t next, std::size_t next_arm) {
  std::lock_guard lock(mu_);
  const double hours = std::max(0.0, end_exposure_s - block_.start_exposure_s) / 3600.0;
  Closed closed{.end = {.block = block_.index,
                        .arm = block_.arm,
                        .end_unix = end_unix,
                        .exposure_hours = hours,
                        .hangs = 0},
                .block = {.arm = static_cast<int>(block_.arm), .hours = hours, .hang_times_s = {}}};
  // Hangs from the end on belong to the next block, which starts where this one ends.
  std::vector<double> carried;
  for (const double t : block_.hang_times) {
    (t < end_unix ? closed.block.hang_times_s : carried).push_back(t);
  }
  closed.end.hangs = static_cast<std::int64_t>(closed.block.hang_times_s.size());
  ++state_.arms[block_.arm].blocks;
  block_ = {.open = false,
            .index = next,
            .arm = next_arm,
            .start_unix = end_unix,
            .start_exposure_s = end_exposure_s,
            .hang_times = std::move(carried)};
  return closed;
}

void ExperimentRunner::start_block(double switch_ms) {
  BlockStart start;
  {
    std::lock_guard lock(mu_);
    block_.open = true;
    state_.block = block_.index;
    state_.arm = block_.arm;
    state_.block_start_unix = block_.start_unix;
    note_switch(switch_ms);
    start = {.block = block_.index,
             .arm = block_.arm,
             .start_unix = block_.start_unix,
             .switch_ms = switch_ms};
  }
  hooks_.block_started(start);
}

void ExperimentRunner::finish(std::size_t keep, double switch_ms, std::string reason) {
  ExperimentState final_state;
  {
    std::lock_guard lock(mu_);
    note_switch(switch_ms);
    state_.ended = true;
    state_.ended_reason = std::move(reason);
    state_.kept_arm = keep;
    state_.arm = keep;
    // Hangs already past the last block's end came after the experiment.
    state_.hangs_after_end += static_cast<std::int64_t>(block_.hang_times.size());
    block_.hang_times.clear();
    final_state = state_;
  }
  hooks_.ended(final_state);
}

void ExperimentRunner::fail(const std::string& what) {
  ExperimentState final_state;
  {
    std::lock_guard lock(mu_);
    state_.ended = true;
    state_.ended_reason = "failed";
    state_.error = what;
    final_state = state_;
  }
  try {
    hooks_.ended(final_state);
  } catch (...) {  // the hook that reports the failure failed too: the state still says it
  }
}

void ExperimentRunner::note_switch(double switch_ms) {
  state_.last_switch_ms = switch_ms;
  state_.longest_switch_ms = std::max(state_.longest_switch_ms, switch_ms);
}

void ExperimentRunner::store_verdict(const SequentialVerdict& verdict) {
  std::lock_guard lock(mu_);
  ExperimentState& s = state_;
  s.arms[0].hours = verdict.hours_a;
  s.arms[1].hours = verdict.hours_b;
  s.arms[0].hangs = verdict.hangs_a;
  s.arms[1].hangs = verdict.hangs_b;
  s.arms[0].clusters = verdict.clusters_a;
  s.arms[1].clusters = verdict.clusters_b;
  s.p_value = verdict.p_value;
  s.ratio = verdict.ratio;
  s.ratio_low = verdict.ratio_low;
  s.ratio_high = verdict.ratio_high;
  s.decision = verdict.decision;
  s.hours_still_needed = verdict.hours_still_needed;
  s.planned_hours_left = verdict.planned_hours_left;
}

nlohmann::json to_json(const ExperimentState& state) {
  nlohmann::json arms = nlohmann::json::array();
  for (const ExperimentArmState& arm : state.arms) {
    arms.push_back({{"name", arm.name},
                    {"turn", arm.turn},
                    {"blocks", arm.blocks},
                    {"hours", arm.hours},
                    {"hangs", arm.hangs},
                    {"clusters", arm.clusters}});
  }
  const auto arm_name = [&](std::size_t arm) {
    return arm < state.arms.size() ? nlohmann::json(state.arms[arm].name) : nlohmann::json(nullptr);
  };
  return {{"plan", state.plan},
          {"arms", arms},
          {"day_balanced", state.day_balanced},
          {"block", state.block},
          {"arm", arm_name(state.arm)},
          {"block_start_unix", state.block_start_unix},
          {"block_hangs", state.block_hangs},
          {"p_value", state.p_value},
          {"ratio", json_or_null(state.ratio)},
          {"ratio_low", state.ratio_low},
          {"ratio_high", json_or_null(state.ratio_high)},
          {"decision", to_string(state.decision)},
          {"hours_still_needed", json_or_null(state.hours_still_needed)},
          {"planned_hours_left", json_or_null(state.planned_hours_left)},
          {"last_switch_ms", state.last_switch_ms},
          {"longest_switch_ms", state.longest_switch_ms},
          {"late_hangs", state.late_hangs},
          {"hangs_after_end", state.hangs_after_end},
          {"ended", state.ended},
          {"ended_reason", state.ended_reason},
          {"kept_arm", state.kept_arm ? arm_name(*state.kept_arm) : nlohmann::json(nullptr)},
          {"error", state.error}};
}

}  // namespace baton
