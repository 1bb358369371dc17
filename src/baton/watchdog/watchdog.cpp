#include "baton/watchdog/watchdog.h"

#include <algorithm>
#include <condition_variable>

namespace baton {

WatchdogOptions WatchdogOptions::for_backend(std::string_view backend) {
  WatchdogOptions options;
  // GPU bursts are milliseconds long and the device does not share a core with the OS
  // scheduler's noise, so a tenfold slowdown of a 2 ms decode step must count.
  if (backend == "cuda") options.slowdown_min_excess = std::chrono::milliseconds(5);
  return options;
}

std::chrono::milliseconds WatchdogOptions::poll_interval() const {
  return std::clamp(deadline / 20, std::chrono::milliseconds(1), std::chrono::milliseconds(50));
}

Watchdog::Watchdog(WatchdogOptions options, FaultLog& log) : options_(options), log_(log) {}

Watchdog::~Watchdog() { join(); }

void Watchdog::watch(Stream& stream, std::string owner) {
  {
    std::lock_guard lock(owners_mu_);
    owners_[stream.id()] = Owner{.stream = stream.name(), .engine = std::move(owner)};
  }
  std::lock_guard lock(watched_mu_);
  watched_.push_back({.stream = &stream});
}

void Watchdog::unwatch(const Stream& stream) {
  std::lock_guard lock(watched_mu_);  // the watchdog's pass over the streams holds it
  std::erase_if(watched_, [&](const Watched& w) { return w.stream == &stream; });
}

void Watchdog::set_activity_probe(ActivityProbe probe) { probe_ = std::move(probe); }

void Watchdog::start() {
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

bool Watchdog::join() {
  std::lock_guard lock(stop_mu_);
  if (!thread_.joinable()) return false;
  thread_.request_stop();
  thread_.join();
  return true;
}

void Watchdog::stop() {
  if (!join()) return;
  // One last look, so a recovery that completed after the last poll is counted.
  std::lock_guard watched_lock(watched_mu_);
  const TimePoint now = Clock::now();
  for (Watched& watched : watched_) check(watched, now);
}

void Watchdog::run(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  while (!stop.stop_requested()) {
    {
      std::lock_guard watched_lock(watched_mu_);
      const TimePoint now = Clock::now();
      for (Watched& watched : watched_) check(watched, now);
    }
    cv.wait_for(lock, stop, options_.poll_interval(), [] { return false; });
  }
}

void Watchdog::check(Watched& watched, TimePoint now) {
  const StreamStats stats = watched.stream->stats(now);
  if (watched.flagged_buffer != 0 && stats.completed >= watched.flagged_buffer) {
    watched.flagged_buffer = 0;  // the reset let the hung buffer complete: recovered
    log_.count_recovered();
  }
  const auto deadline_s = std::chrono::duration<double>(options_.deadline).count();
  if (stats.in_flight == 0 || stats.no_progress_s <= deadline_s ||
      stats.oldest_id == watched.flagged_buffer) {
    return;
  }
  FaultEvent event = make_event(owner_of(watched.stream->id()), FaultKind::hang, stats.in_flight);
  event.detail = "buffer " + std::to_string(stats.oldest_id) + " made no progress for " +
                 std::to_string(stats.no_progress_s) + " s (deadline " +
                 std::to_string(deadline_s) + " s)";
  event.onset = now - std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(stats.no_progress_s));
  if (stats.stalled_since) event.detect_latency_ms = millis_between(*stats.stalled_since, now);
  GpuError error(GpuErrorClass::hang, "watchdog", event.detail);
  // Only if the buffer is still stuck (it may have completed since the stats were read);
  // the event is recorded first, so whoever sees the error can already find it.
  if (watched.stream->reset_if_oldest(stats.oldest_id, std::move(error),
                                      [&] { log_.record(std::move(event)); })) {
    watched.flagged_buffer = stats.oldest_id;
  }
}

void Watchdog::buffer_failed(StreamId stream, const GpuError& error, TimePoint /*at*/) {
  FaultEvent event = make_event(owner_of(stream), fault_kind(error.error_class()), 0);
  event.fatal = error.fatal();
  event.detail = error.what();
  log_.record(std::move(event));
}

Watchdog::Owner Watchdog::owner_of(StreamId stream) const {
  std::lock_guard lock(owners_mu_);
  auto it = owners_.find(stream);
  return it != owners_.end() ? it->second
                             : Owner{.stream = "stream " + std::to_string(stream), .engine = ""};
}

FaultEvent Watchdog::make_event(const Owner& owner, FaultKind kind, std::size_t in_flight) const {
  FaultEvent event;
  event.wall_time = std::chrono::system_clock::now();
  event.time = Clock::now();
  event.kind = kind;
  event.stream = owner.stream;
  event.in_flight = in_flight;
  event.engine = owner.engine;
  if (probe_) event.engines = probe_();
  // On a shared stream the engine that was running on it is to blame, not the owner.
  for (const EngineActivity& e : event.engines) {
    if (e.stream == owner.stream && e.state == EngineState::running) event.engine = e.engine;
  }
  return event;
}

}  // namespace baton
