// FaultInjector: causes GPU faults on purpose, from a seeded random source, on any
// backend's streams (through FaultHooks), so that detection, recovery and analysis can be
// tested where the real fault is rare or absent.
//
// The main model follows MISSION.md: while two or more streams have work in flight at
// once, hangs arrive as a Poisson process with `hang_rate` per second of overlap; with no
// overlap, none. An arrived hang lands on the next op boundary of a stream in that overlap,
// which then stalls (its buffer never completes) until the stream is reset; one that finds
// no op boundary before the overlap ends is dropped, and so is one that finds every stream
// of the overlap already holding a pending hang (at most one each); both are counted. Also:
// a fixed hang or timeout probability per committed buffer, slowdown episodes (a busy
// stream runs `slowdown_factor` times slower for `slowdown_seconds`, Poisson in wall
// time; each is kept), a switch into the fatal submissions-ignored state after
// `fatal_after_s`, and one buffer that faults on the device after `device_fault_after_s`.
// only_on() narrows the per-buffer hang and timeout probabilities and the slowdowns to
// some streams (one engine's); the overlap hangs, the fatal switch and the device fault
// stay global.
//
// Thread-safety: all members are thread-safe (one mutex; a fast atomic path per op).
// The injector's own thread runs the Poisson clocks; the destructor joins it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "baton/gpu/fault_hooks.h"
#include "baton/gpu/stream_observer.h"

namespace baton {

struct FaultPlan {
  double hang_rate = 0.0;            // hangs per second of overlap
  double hang_probability = 0.0;     // per committed buffer, overlap or not
  double timeout_probability = 0.0;  // per committed buffer
  double slowdown_rate = 0.0;        // slowdown episodes per second
  double slowdown_factor = 10.0;
  double slowdown_seconds = 2.0;
  double fatal_after_s = 0.0;         // > 0: submissions are ignored from then on
  double device_fault_after_s = 0.0;  // > 0: the first buffer committed then faults
  std::uint64_t seed = 1;

  bool any() const;
};

struct InjectedCounts {
  std::uint64_t hangs = 0;  // realized: a stream stalled
  std::uint64_t timeouts = 0;
  std::uint64_t slowdowns = 0;
  std::uint64_t ignored_submissions = 0;
  std::uint64_t device_faults = 0;
  // Of the hang rate's Poisson clock: arrivals, and those that never landed (no op
  // boundary before their overlap ended, or no stream of it free to take them).
  std::uint64_t hangs_arrived = 0;
  std::uint64_t hangs_dropped = 0;
};

struct SlowdownEpisode {
  StreamId stream = 0;
  TimePoint start{};
  TimePoint until{};
};

class FaultInjector final : public FaultHooks, public StreamObserver {
 public:
  explicit FaultInjector(FaultPlan plan);
  ~FaultInjector() override;
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // FaultHooks
  BufferFault on_commit(StreamId stream) override;
  bool stall_now(StreamId stream) override;
  double slowdown(StreamId stream, TimePoint now) override;
  void realized(StreamId stream, BufferFault fault) override;
  bool hangs_at_op_boundaries() const override { return plan_.hang_rate > 0; }
  void hang_not_landed(StreamId stream) override;

  // StreamObserver: tracks which streams are busy, for the overlap clock.
  void stream_busy(StreamId stream, TimePoint at) override;
  void stream_idle(StreamId stream, TimePoint at) override;

  // Set-up only, before any buffer is committed: per-buffer hangs and timeouts and the
  // slowdown episodes then strike `streams` only.
  void only_on(std::vector<StreamId> streams);

  InjectedCounts injected() const;
  // The slowdown episodes started so far (the first kMaxEpisodesKept of them).
  std::vector<SlowdownEpisode> slowdown_episodes() const;
  static constexpr std::size_t kMaxEpisodesKept = 100000;

 private:
  struct Slowdown {
    TimePoint until;
    double factor;
  };

  // The hang clock's granularity: arrivals closer than this are counted in one tick.
  static constexpr double kClockTickSeconds = 0.001;

  void run_clocks(std::stop_token stop);
  void arrive_hangs_locked(double overlap_s);
  double overlap_s_locked(TimePoint now) const;
  double draw_exponential_locked(double rate);
  bool uniform_below_locked(double probability);
  void start_slowdown_locked(TimePoint now);
  void add_pending_locked(std::uint64_t hangs);
  bool targeted_locked(StreamId stream) const;

  const FaultPlan plan_;
  const TimePoint start_;

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::mt19937_64 rng_;                            // guarded by mu_
  std::set<StreamId> busy_;                        // guarded by mu_
  TimePoint overlap_since_{};                      // guarded by mu_; valid while busy_ >= 2
  double overlap_closed_s_ = 0.0;                  // guarded by mu_
  std::uint64_t overlap_starts_ = 0;               // guarded by mu_
  double next_hang_at_overlap_s_ = 0.0;            // guarded by mu_
  TimePoint next_slowdown_at_{};                   // guarded by mu_
  std::unordered_map<StreamId, Slowdown> slowed_;  // guarded by mu_
  std::optional<std::set<StreamId>> targets_;      // guarded by mu_; none: every stream
  bool ignoring_ = false;                          // guarded by mu_
  bool device_fault_done_ = false;                 // guarded by mu_
  std::vector<SlowdownEpisode> episodes_;          // guarded by mu_
  InjectedCounts counts_;                          // guarded by mu_
  std::atomic<std::uint32_t> hangs_pending_{0};    // arrived hangs waiting for an op boundary
  std::atomic<bool> slowdowns_active_{false};      // fast path: any stream slowed

  std::jthread clocks_;  // last: starts after the rest
};

}  // namespace baton
