// GpuProcessSampler: a thread that asks NVML, every period (1 s by default), which
// processes used the GPU since it last asked and how much (nvmlDeviceGetProcessUtilization),
// and hands each poll to a sink: the ledger, so that `baton analyze` can tell whether
// another GPU client was busy while baton's engines were. baton's own pid is marked.
// Polls that found no process are joined into one of up to a minute, so an idle GPU
// costs a row a minute.
// An NVML error or a sink that throws stops the sampling (never the server): the first
// such error is kept for error(), and what was polled before it stays recorded.
// Thread-safety: error() and polls() from any thread, stop() from the owner's; the sink is
// called on the sampler's thread only, one poll at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "baton/gpu/gpu_poll.h"
#include "baton/gpu/nvml_library.h"

namespace baton {

struct GpuSamplerOptions {
  std::chrono::milliseconds period{1000};
  std::uint32_t own_pid = 0;  // baton's pid (getpid())
  bool host_pids = true;      // in_host_pid_namespace(): pids can be named and compared
  // Empty polls are joined into one of at most this many seconds.
  double merge_empty_s = 60.0;
  // NVML samples stamped after this (µs) count; 0: after the newest NVML holds at the start.
  std::uint64_t since_us = 0;
  std::function<double()> now;  // Unix seconds; empty: the system clock
  std::function<std::optional<std::string>(std::uint32_t)> name;  // empty: process_name()
};

using GpuPollSink = std::function<void(GpuPoll)>;

// One poll from NVML's samples: a process per pid, its sm and mem the mean of its samples
// newer than `since_us`, capped at 100; processes whose means are both zero are left out.
GpuPoll poll_of(const std::vector<NvmlProcessSample>& samples, std::uint64_t since_us, double start,
                double end, const GpuSamplerOptions& options);

class GpuProcessSampler {
 public:
  // Starts polling `device` of `nvml` at once; `sink` gets every poll. Throws NvmlError
  // when NVML cannot say what it holds now (options.since_us 0).
  GpuProcessSampler(std::unique_ptr<NvmlLibrary> nvml, NvmlDevice device, GpuSamplerOptions options,
                    GpuPollSink sink);
  ~GpuProcessSampler();
  GpuProcessSampler(const GpuProcessSampler&) = delete;
  GpuProcessSampler& operator=(const GpuProcessSampler&) = delete;

  // Takes a last poll, hands over what is held, and joins the thread; then nothing more
  // reaches the sink. Idempotent; the destructor calls it.
  void stop();
  // The error that stopped the sampling; nullopt while it runs, or after a clean stop.
  std::optional<std::string> error() const;
  // Polls taken so far.
  std::uint64_t polls() const { return polls_.load(); }

 private:
  void run(std::stop_token stop);
  // One poll; false when it failed (the error is kept).
  bool poll_once();
  void emit(GpuPoll poll);  // joins empty polls into held_
  void hand_over(GpuPoll poll);
  void flush_held();  // hands over held_; an error is kept, not thrown
  void fail(const std::string& what);

  const std::unique_ptr<NvmlLibrary> nvml_;
  const NvmlDevice device_;
  const GpuSamplerOptions options_;
  const GpuPollSink sink_;
  // The sampler's thread's own state.
  std::uint64_t since_us_ = 0;
  double last_end_ = 0.0;
  std::optional<GpuPoll> held_;  // an empty stretch still growing

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::optional<std::string> error_;  // guarded by mu_
  std::atomic<std::uint64_t> polls_{0};
  std::jthread thread_;  // last: starts after the rest
};

using GpuSamplerStart = std::variant<std::unique_ptr<GpuProcessSampler>, NvmlUnavailable>;

// Opens NVML (`library`: a path or kNvmlLibraryName), finds the device at `pci_bus_id`
// (empty: NVML's device 0) and starts a sampler on it; or says why NVML cannot be used.
[[nodiscard]] GpuSamplerStart start_gpu_process_sampler(const std::string& library,
                                                        const std::string& pci_bus_id,
                                                        GpuSamplerOptions options,
                                                        GpuPollSink sink);

}  // namespace baton
