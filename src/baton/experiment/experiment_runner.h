// ExperimentRunner: runs an ExperimentPlan on a live server (issue 51). On its own thread it
// switches the GPU turn between the plan's two arms in blocks of block_s, in the block
// schedule's order (analysis/block_schedule.h: permuted pairs, balanced over the day), feeds
// each ended block (its arm, exposure hours and hang times) to the sequential test
// (analysis/sequential_rate_test.h), and once the test names a winner or the planned hours run
// out, moves to the winner (or the plan's end_arm), says so through `ended` and stops switching.
//
// Block boundaries lie on a grid from the start (block k ends block_s * (k + 1) after it), so a
// block of the day keeps its clock time; a switch's duration is taken from the block after it.
// At a boundary: switch_to(next arm) (it waits for the bursts in flight), then the old block
// ends at that instant (its exposure: the growth of exposure_seconds since it began), the test
// takes it, and the next block starts. A hang counts in the block its time falls in; one whose
// time is before the current block's start arrives after that block was closed and counted
// (a race of microseconds when callers pass the detection time): it is counted as late_hangs
// and left out of the test (never silently).
//
// When block_s does not divide the day (BlockSchedule's condition), the order is permuted pairs
// from the same seed without the day balance (a schedule of one block a day), shown as
// day_balanced = false.
//
// Thread-safety: record_hang() and state() from any thread. The hooks are called from the
// runner's thread (and from the constructor's and destructor's), one at a time, never under
// the runner's lock: a hook may call record_hang() and state(). A hook that throws on the
// runner's thread ends the experiment as "failed" (the state keeps what it threw; `ended` is
// told) and the turn stays where it is.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "baton/analysis/block_schedule.h"
#include "baton/analysis/sequential_rate_test.h"
#include "baton/experiment/experiment_plan.h"

namespace baton {

struct BlockStart {
  std::size_t block = 0;
  std::size_t arm = 0;
  double start_unix = 0.0;
  double switch_ms = 0.0;  // how long the switch into this block held new bursts
};

struct BlockEnd {
  std::size_t block = 0;
  std::size_t arm = 0;
  double end_unix = 0.0;
  double exposure_hours = 0.0;
  std::int64_t hangs = 0;
};

struct ExperimentArmState {
  std::string name;
  std::string turn;  // describe(TurnOptions)
  // Over the ended blocks (what the test has taken).
  std::int64_t blocks = 0;
  double hours = 0.0;
  std::int64_t hangs = 0;
  std::int64_t clusters = 0;
};

struct ExperimentState {
  std::string plan;
  std::vector<ExperimentArmState> arms;
  bool day_balanced = true;  // false: permuted pairs only (block_s does not divide the day)
  std::size_t block = 0;     // the block running (once ended: the last one)
  std::size_t arm = 0;       // the arm the turn is on
  double block_start_unix = 0.0;
  std::int64_t block_hangs = 0;  // the running block's hangs so far
  // The sequential test's verdict over the ended blocks (SequentialVerdict's fields).
  double p_value = 1.0;
  std::optional<double> ratio;  // rate of arm 1 / rate of arm 0
  double ratio_low = 0.0;
  std::optional<double> ratio_high;
  SequentialVerdict::Decision decision = SequentialVerdict::Decision::continue_;
  std::optional<double> hours_still_needed;
  std::optional<double> planned_hours_left;
  double last_switch_ms = 0.0;
  double longest_switch_ms = 0.0;
  std::int64_t late_hangs = 0;       // reported after their block ended: not in the test
  std::int64_t hangs_after_end = 0;  // reported once the experiment ended
  bool ended = false;
  std::string ended_reason;  // "verdict", "plan ran out", "failed" (a hook threw), or ""
  std::optional<std::size_t> kept_arm;
  std::string error;  // what a hook threw, when ended_reason is "failed"
};

// /v1/experiment's body: arms by name, the decision as "continue", "a_better", "b_better" or
// "no_difference", absent values as null.
nlohmann::json to_json(const ExperimentState& state);

struct ExperimentHooks {
  std::function<double()> now_unix;  // wall clock
  // Grows monotonically: the exposure the test counts (dual-engine busy seconds).
  std::function<double()> exposure_seconds;
  // Moves the GPU turn; returns the ms its gate was closed.
  std::function<double(std::size_t arm)> switch_to;
  std::function<void(const BlockStart&)> block_started;  // the ledger starts a run for the block
  std::function<void(const BlockEnd&)> block_ended;
  std::function<void(const ExperimentState&)> ended;  // the verdict, or the plan ran out
};

class ExperimentRunner {
 public:
  // The first block starts at once (switch_to its arm, block_started) on the caller's thread.
  // Throws std::invalid_argument for a plan out of range (validate()) or a hook missing, and
  // whatever the first switch_to or block_started throws.
  ExperimentRunner(ExperimentPlan plan, ExperimentHooks hooks);
  // Stops the thread; a block in progress is ended (block_ended) so the ledger is complete.
  // A switch in progress is waited for (switch_to waits for the bursts in flight).
  ~ExperimentRunner();
  ExperimentRunner(const ExperimentRunner&) = delete;
  ExperimentRunner& operator=(const ExperimentRunner&) = delete;

  // From any thread: a hang the server saw at `unix_time` (counted in the block it falls in;
  // pass the detection time). Throws std::invalid_argument for a time that is not finite.
  void record_hang(double unix_time);
  // From any thread, cheap (a copy under a lock).
  ExperimentState state() const;

 private:
  // The running block; guarded by mu_.
  struct Block {
    bool open = false;
    std::size_t index = 0;
    std::size_t arm = 0;
    double start_unix = 0.0;
    double start_exposure_s = 0.0;
    std::vector<double> hang_times;
  };

  // An ended block: what the ledger and the test get.
  struct Closed {
    BlockEnd end;
    ExperimentBlock block;
  };

  void run(std::stop_token stop);
  bool boundary();  // ends the block; false once the experiment has ended
  // block_ (set up, not yet open) opens: the state shows it and block_started is told.
  void start_block(double switch_ms);
  // Ends block_ at `end_unix`; the next block (not yet open) starts where it ends and keeps
  // the hangs reported from then on.
  Closed close_block(double end_unix, double end_exposure_s, std::size_t next,
                     std::size_t next_arm);
  void finish(std::size_t keep, double switch_ms, std::string reason);
  void fail(const std::string& what);
  void note_switch(double switch_ms);
  void store_verdict(const SequentialVerdict& verdict);
  std::chrono::steady_clock::time_point deadline(std::size_t block) const;

  const ExperimentPlan plan_;
  const ExperimentHooks hooks_;
  const BlockSchedule schedule_;
  SequentialRateTest test_;  // the runner's thread only
  const std::chrono::steady_clock::time_point origin_;

  mutable std::mutex mu_;
  std::condition_variable_any wake_;  // only stop requests wake it
  Block block_;
  ExperimentState state_;
  std::jthread thread_;  // last: started once the rest exists
};

}  // namespace baton
