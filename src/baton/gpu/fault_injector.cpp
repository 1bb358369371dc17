#include "baton/gpu/fault_injector.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace baton {
namespace {

// `at` plus `seconds`, saturating at TimePoint::max(): an exponential draw at a tiny rate
// can be far beyond what the clock's 64-bit nanoseconds hold.
TimePoint add_seconds(TimePoint at, double seconds) {
  const double room = std::chrono::duration<double>(TimePoint::max() - at).count();
  if (!(seconds < room)) return TimePoint::max();
  return at + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

bool FaultPlan::any() const {
  return hang_rate > 0 || hang_probability > 0 || timeout_probability > 0 || slowdown_rate > 0 ||
         fatal_after_s > 0 || device_fault_after_s > 0;
}

FaultInjector::FaultInjector(FaultPlan plan) : plan_(plan), start_(Clock::now()), rng_(plan.seed) {
  std::lock_guard lock(mu_);
  next_hang_at_overlap_s_ = draw_exponential_locked(plan_.hang_rate);
  next_slowdown_at_ = add_seconds(start_, draw_exponential_locked(plan_.slowdown_rate));
  clocks_ = std::jthread([this](std::stop_token stop) { run_clocks(stop); });
}

FaultInjector::~FaultInjector() {
  clocks_.request_stop();
  if (clocks_.joinable()) clocks_.join();
}

double FaultInjector::draw_exponential_locked(double rate) {
  if (rate <= 0) return std::numeric_limits<double>::infinity();
  return std::exponential_distribution<double>(rate)(rng_);
}

bool FaultInjector::uniform_below_locked(double probability) {
  if (probability <= 0) return false;
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < probability;
}

void FaultInjector::only_on(std::vector<StreamId> streams) {
  std::lock_guard lock(mu_);
  targets_.emplace(streams.begin(), streams.end());
}

bool FaultInjector::targeted_locked(StreamId stream) const {
  return !targets_ || targets_->count(stream) != 0;
}

BufferFault FaultInjector::on_commit(StreamId stream) {
  std::lock_guard lock(mu_);
  if (ignoring_) return BufferFault::submissions_ignored;
  if (plan_.device_fault_after_s > 0 && !device_fault_done_ &&
      seconds_between(start_, Clock::now()) >= plan_.device_fault_after_s) {
    device_fault_done_ = true;
    return BufferFault::device_fault;
  }
  if (!targeted_locked(stream)) return BufferFault::none;
  if (uniform_below_locked(plan_.hang_probability)) return BufferFault::hang;
  if (uniform_below_locked(plan_.timeout_probability)) return BufferFault::timeout;
  return BufferFault::none;
}

bool FaultInjector::stall_now(StreamId stream) {
  if (hangs_pending_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard lock(mu_);
  // The hang arrived during this overlap; it lands on a stream that takes part in it.
  if (busy_.size() < 2 || busy_.count(stream) == 0) return false;
  // Changed only under mu_; the atomic is for the lock-free check above.
  const std::uint32_t pending = hangs_pending_.load(std::memory_order_relaxed);
  if (pending == 0) return false;
  hangs_pending_.store(pending - 1, std::memory_order_relaxed);
  return true;
}

double FaultInjector::slowdown(StreamId stream, TimePoint now) {
  if (!slowdowns_active_.load(std::memory_order_acquire)) return 1.0;
  std::lock_guard lock(mu_);
  auto it = slowed_.find(stream);
  if (it == slowed_.end()) return 1.0;
  if (now >= it->second.until) {
    slowed_.erase(it);
    slowdowns_active_.store(!slowed_.empty(), std::memory_order_release);
    return 1.0;
  }
  return it->second.factor;
}

void FaultInjector::realized(StreamId /*stream*/, BufferFault fault) {
  std::lock_guard lock(mu_);
  switch (fault) {
    case BufferFault::hang:
      ++counts_.hangs;
      break;
    case BufferFault::timeout:
      ++counts_.timeouts;
      break;
    case BufferFault::submissions_ignored:
      ++counts_.ignored_submissions;
      break;
    case BufferFault::device_fault:
      ++counts_.device_faults;
      break;
    case BufferFault::none:
      break;
  }
}

void FaultInjector::hang_not_landed(StreamId stream) {
  std::lock_guard lock(mu_);
  if (busy_.size() >= 2 && busy_.count(stream) != 0) {
    add_pending_locked(1);  // still this overlap: another stream may take it
  } else {
    ++counts_.hangs_dropped;
  }
}

void FaultInjector::add_pending_locked(std::uint64_t hangs) {
  // Each pending hang stalls a different stream of this overlap, so more than one per
  // busy stream can never land.
  const std::uint64_t pending = hangs_pending_.load(std::memory_order_relaxed);
  const std::uint64_t room = busy_.size() - std::min<std::uint64_t>(busy_.size(), pending);
  const std::uint64_t added = std::min(hangs, room);
  counts_.hangs_dropped += hangs - added;
  hangs_pending_.store(static_cast<std::uint32_t>(pending + added), std::memory_order_release);
}

void FaultInjector::stream_busy(StreamId stream, TimePoint at) {
  std::lock_guard lock(mu_);
  busy_.insert(stream);
  if (busy_.size() == 2) {
    overlap_since_ = at;
    ++overlap_starts_;
    wake_.notify_all();  // the overlap clock runs again
  }
}

void FaultInjector::stream_idle(StreamId stream, TimePoint at) {
  std::lock_guard lock(mu_);
  if (busy_.size() == 2 && busy_.count(stream) != 0) {
    overlap_closed_s_ += std::max(0.0, seconds_between(overlap_since_, at));
    // A hang belongs to the overlap it arrived in: one that found no op boundary to land
    // on before the overlap ended is dropped (it was never injected). One due in an
    // overlap shorter than the clock's tick is counted by the next overlap's first tick:
    // dropping those would inject nothing where overlaps are short.
    counts_.hangs_dropped += hangs_pending_.exchange(0, std::memory_order_acq_rel);
  }
  busy_.erase(stream);
}

double FaultInjector::overlap_s_locked(TimePoint now) const {
  double total = overlap_closed_s_;
  if (busy_.size() >= 2) total += std::max(0.0, seconds_between(overlap_since_, now));
  return total;
}

void FaultInjector::start_slowdown_locked(TimePoint now) {
  std::vector<StreamId> candidates;  // busy and targeted
  std::copy_if(busy_.begin(), busy_.end(), std::back_inserter(candidates),
               [this](StreamId s) { return targeted_locked(s); });
  if (!candidates.empty()) {
    const StreamId slowed =
        candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng_)];
    const TimePoint until = add_seconds(now, plan_.slowdown_seconds);
    slowed_[slowed] = Slowdown{.until = until, .factor = plan_.slowdown_factor};
    if (episodes_.size() < kMaxEpisodesKept)
      episodes_.push_back({.stream = slowed, .start = now, .until = until});
    slowdowns_active_.store(true, std::memory_order_release);
    ++counts_.slowdowns;
  }
  next_slowdown_at_ = add_seconds(now, draw_exponential_locked(plan_.slowdown_rate));
}

void FaultInjector::arrive_hangs_locked(double overlap_s) {
  if (overlap_s < next_hang_at_overlap_s_) return;
  // The arrival at next_hang_at_overlap_s_, and a Poisson count of those after it up to
  // now; the clock is memoryless, so the next one is a fresh draw from now. A constant
  // number of draws at any rate (one draw per arrival held the lock for seconds at 1e9).
  const double mean = plan_.hang_rate * (overlap_s - next_hang_at_overlap_s_);
  std::uint64_t arrived = 1;
  if (mean > 0) {
    arrived += std::poisson_distribution<std::uint64_t>(std::min(mean, 1e6))(rng_);
  }
  next_hang_at_overlap_s_ = overlap_s + draw_exponential_locked(plan_.hang_rate);
  counts_.hangs_arrived += arrived;
  add_pending_locked(arrived);
}

void FaultInjector::run_clocks(std::stop_token stop) {
  const TimePoint fatal_at =
      plan_.fatal_after_s > 0 ? add_seconds(start_, plan_.fatal_after_s) : TimePoint::max();
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    const TimePoint now = Clock::now();
    if (now >= fatal_at) ignoring_ = true;
    if (busy_.size() >= 2) arrive_hangs_locked(overlap_s_locked(now));
    if (now >= next_slowdown_at_) start_slowdown_locked(now);

    // Sleep until the next clock can fire; an overlap that begins wakes us early. The
    // clocks tick at most every kClockTickSeconds: hang arrivals in between are counted
    // together, and a slowdown rate past one a tick starts one a tick.
    TimePoint wake_at = std::min(std::max(next_slowdown_at_, add_seconds(now, kClockTickSeconds)),
                                 ignoring_ ? TimePoint::max() : fatal_at);
    if (busy_.size() >= 2 && plan_.hang_rate > 0) {
      const double to_next = next_hang_at_overlap_s_ - overlap_s_locked(now);
      wake_at = std::min(wake_at, add_seconds(now, std::max(to_next, kClockTickSeconds)));
    }
    const std::uint64_t seen = overlap_starts_;
    wake_.wait_until(lock, stop, std::min(wake_at, now + std::chrono::milliseconds(100)),
                     [&] { return overlap_starts_ != seen; });
  }
}

InjectedCounts FaultInjector::injected() const {
  std::lock_guard lock(mu_);
  return counts_;
}

std::vector<SlowdownEpisode> FaultInjector::slowdown_episodes() const {
  std::lock_guard lock(mu_);
  return episodes_;
}

}  // namespace baton
