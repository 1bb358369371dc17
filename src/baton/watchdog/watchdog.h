// Watchdog: watches every stream's oldest in-flight buffer from its own thread. A stream
// that makes no progress for longer than the deadline is hung: the hang is blamed on the
// engine that owns the stream (for the shared default stream, the engine running on it),
// recorded with what every engine was doing, and recovered in place by resetting the
// stream. Errors the device reports on a buffer become fault events too; a fatal one
// trips the FaultLog's latch.
//
// The watchdog never holds the GPU turn and never waits on a stream (it only reads
// stream stats and calls Stream::reset, which returns at once), so it cannot get stuck
// behind the hang it should see.
// Thread-safety: set_activity_probe() during set-up, before start(); everything else is
// thread-safe. Lock order: watched_mu_ -> a stream's lock -> owners_mu_ (buffer_failed
// runs under a stream's lock, so it only takes owners_mu_). The destructor joins.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "baton/gpu/stream.h"
#include "baton/watchdog/fault_log.h"

namespace baton {

struct WatchdogOptions {
  // No progress for this long is a hang. CPU default: no legitimate command buffer of the
  // synthetic or model workloads comes near 2 s on the CPU backend.
  std::chrono::milliseconds deadline{2000};
  double slowdown_factor = 5.0;  // a burst this many times its recent baseline is a slowdown
  // ... and at least this much longer than it. On the CPU, a busy thread of a VM loses
  // up to 100 ms when the host takes its vCPU away (bench/cpu_stalls on the CI machine
  // kind), which is noise; the slowdowns before real hangs were hundreds of ms per step
  // (0.75 s against a 53 ms median in MISSION.md). CUDA: 5 ms.
  std::chrono::milliseconds slowdown_min_excess{150};

  static WatchdogOptions for_backend(std::string_view backend);
  std::chrono::milliseconds poll_interval() const;
};

class Watchdog final : public StreamObserver {
 public:
  using ActivityProbe = std::function<std::vector<EngineActivity>()>;

  Watchdog(WatchdogOptions options, FaultLog& log);
  ~Watchdog() override;
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Watches `stream` (which must outlive the watchdog's thread, or unwatch()), blaming `owner`.
  void watch(Stream& stream, std::string owner);
  // Stops watching `stream`: once it returns the watchdog reads it no more, and it may go.
  void unwatch(const Stream& stream);
  void set_activity_probe(ActivityProbe probe);
  void start();
  // Joins the thread, then takes one last look at every stream (they must still exist).
  void stop();

  // StreamObserver: device-reported errors become fault events.
  void stream_busy(StreamId, TimePoint) override {}
  void stream_idle(StreamId, TimePoint) override {}
  void buffer_failed(StreamId stream, const GpuError& error, TimePoint at) override;

 private:
  struct Watched {
    Stream* stream;
    std::uint64_t flagged_buffer = 0;  // the hung buffer already reported; 0 for none
  };
  struct Owner {
    std::string stream;
    std::string engine;
  };

  void run(std::stop_token stop);
  bool join();  // false when the thread was not running
  void check(Watched& watched, TimePoint now);
  FaultEvent make_event(const Owner& owner, FaultKind kind, std::size_t in_flight) const;
  Owner owner_of(StreamId stream) const;

  const WatchdogOptions options_;
  FaultLog& log_;
  ActivityProbe probe_;  // set-up only
  std::mutex watched_mu_;
  std::vector<Watched> watched_;  // guarded by watched_mu_
  mutable std::mutex owners_mu_;
  std::unordered_map<StreamId, Owner> owners_;  // guarded by owners_mu_
  std::jthread thread_;
  std::mutex stop_mu_;  // one joiner at a time
};

}  // namespace baton
