// GpuPoll: what one look at the GPU's per-process utilisation found, for the ledger
// (table gpu_polls and gpu_process_samples) and from there the analysis of other GPU
// clients. Times are Unix seconds.
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton {

// One process's use of the GPU over a poll: the mean of the samples NVML gave for it.
struct GpuProcessUse {
  std::uint32_t pid = 0;
  // /proc/PID/comm; empty when the pid is not visible here (another container) or when
  // the pids are not this PID namespace's (GpuPoll::host_pids false).
  std::optional<std::string> process;
  bool own = false;  // baton's own process
  double sm_percent = 0.0;
  double mem_percent = 0.0;
};

struct GpuPoll {
  double start = 0.0;  // the previous poll's end (or the sampler's start)
  double end = 0.0;
  // NVML reports the host's pids. False when baton runs in a PID namespace of its own (a
  // container): then its own pid cannot be told, and no process is named or marked own.
  bool host_pids = true;
  // The processes that used the device in [start, end); none: the device was idle, or only
  // idle processes held it. Consecutive empty polls may be one.
  std::vector<GpuProcessUse> processes;
};

}  // namespace baton
