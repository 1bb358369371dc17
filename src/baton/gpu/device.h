// Device: one accelerator as baton sees it: a factory of streams, the process-wide
// default stream, and the overlap meter every stream reports to.
// A backend (cpu/, cuda/, a future metal/) derives from it and its Stream.
// Thread-safety: create_stream() and the accessors are thread-safe; the default stream
// follows Stream's rules (its owner is whoever holds the GPU turn, or the embedding
// executor).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "baton/gpu/commit_limits.h"
#include "baton/gpu/fault_hooks.h"
#include "baton/gpu/overlap_meter.h"
#include "baton/gpu/stream.h"

namespace baton {

// The device's memory as its driver reports it, every process's use counted.
struct DeviceMemory {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
};

class Device {
 public:
  // `faults` (may be null) is handed to every stream, the default stream included.
  Device(CommitLimits limits, FaultHooks* faults) : limits_(limits), faults_(faults) {}
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual std::string_view backend() const = 0;
  // A GPU's memory now; none for the CPU, whose memory the models share with the host.
  virtual std::optional<DeviceMemory> memory() const { return std::nullopt; }
  // A GPU's PCI bus id ("0000:01:00.0"), which names it to tools that number devices their
  // own way (NVML); empty for the CPU.
  virtual std::string pci_bus_id() const { return {}; }
  // A new stream, owned by the caller, that reports to overlap(). Must not outlive the device.
  std::unique_ptr<Stream> create_stream(std::string name) {
    return make_stream(next_stream_id_.fetch_add(1), std::move(name));
  }
  Stream& default_stream() { return *default_stream_; }
  OverlapMeter& overlap() { return overlap_; }
  const CommitLimits& limits() const { return limits_; }
  // Set-up only, before any work is committed: one more observer of every stream.
  void add_observer(StreamObserver& observer) { observers_.add(observer); }

 protected:
  virtual std::unique_ptr<Stream> make_stream(StreamId id, std::string name) = 0;
  // Derived constructors call this once, after they can make streams.
  void create_default_stream() {
    observers_.add(overlap_);
    default_stream_ = create_stream("default");
  }

 protected:
  StreamObserver* observers() { return &observers_; }
  FaultHooks* faults() { return faults_; }

 private:
  const CommitLimits limits_;
  FaultHooks* const faults_;
  std::atomic<StreamId> next_stream_id_{0};
  OverlapMeter overlap_;                    // declared before any stream that reports to it
  ObserverList observers_;                  // the meter first, then what add_observer() adds
  std::unique_ptr<Stream> default_stream_;  // destroyed before the observers
};

}  // namespace baton
