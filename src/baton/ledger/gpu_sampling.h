// Sampling the GPU's per-process use into a ledger run (gpu/gpu_process_sampler.h): what
// `baton serve` and `baton repro` start on the cuda backend, so that `baton analyze` can
// say whether another GPU client was busy. NVML that is missing or unusable costs one line
// on the log and changes nothing else: the run goes on, unsampled.
// Thread-safety: call from the thread that owns the run; the sampler then records from its
// own thread (the Ledger only queues).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "baton/gpu/device.h"
#include "baton/gpu/gpu_process_sampler.h"
#include "baton/gpu/nvml_library.h"
#include "baton/ledger/ledger.h"

namespace baton {

struct GpuSamplingOptions {
  std::string library = kNvmlLibraryName;  // a path, for tests
  std::chrono::milliseconds period{1000};
  std::optional<bool> host_pids;  // whether NVML's pids are ours; nullopt: ask /proc
};

// A sampler of `device` (found in NVML by its PCI bus id) whose polls become rows of run
// `run_id`; null when NVML cannot be used, after "WHO: GPU clients not sampled: NVML
// unavailable: ..." on `log`. Destroy it before the run ends (Ledger::end_run), so that its
// last poll is in the run, and before the ledger.
std::unique_ptr<GpuProcessSampler> start_gpu_sampling(Ledger& ledger, std::int64_t run_id,
                                                      const Device& device, std::ostream& log,
                                                      const std::string& who,
                                                      const GpuSamplingOptions& options = {});

// Stops `sampler` (null: nothing), which takes its last poll, and says on `log` what
// error stopped it earlier, if one did: "WHO: GPU sampling stopped early: ...".
void stop_gpu_sampling(std::unique_ptr<GpuProcessSampler>& sampler, std::ostream& log,
                       const std::string& who);

}  // namespace baton
