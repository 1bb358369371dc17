#include "baton/server/observe/device_probe.h"

#include <condition_variable>
#include <mutex>

#include "baton/gpu/gpu_error.h"

namespace baton {

DeviceProbe::DeviceProbe(GpuTurn& turn, Stream& stream, std::function<bool()> idle,
                         std::chrono::milliseconds interval)
    : turn_(turn),
      stream_(stream),
      client_(turn.register_client("device-probe", stream)),
      idle_(std::move(idle)),
      interval_(interval),
      thread_([this](std::stop_token stop) { run(stop); }) {}

DeviceProbe::~DeviceProbe() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void DeviceProbe::run(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable wake;
  const std::stop_callback on_stop(stop, [&] {
    std::lock_guard lock(mu);
    wake.notify_all();
  });
  for (;;) {
    {
      std::unique_lock lock(mu);
      if (wake.wait_for(lock, interval_, [&] { return stop.stop_requested(); })) return;
    }
    if (idle_()) probe_once();
  }
}

void DeviceProbe::probe_once() {
  try {
    TurnHold hold(turn_, client_, BurstKind::decode);
    stream_.encode(Op{.run = [] {}, .bytes = 0});
    stream_.synchronize();
    hold.release();
  } catch (const GpuError&) {
    // The watchdog has recorded it (buffer_failed): the fault log decides what follows.
  }
  probes_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace baton
