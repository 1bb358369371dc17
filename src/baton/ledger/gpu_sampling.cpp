#include "baton/ledger/gpu_sampling.h"

#include <unistd.h>

#include <variant>

#include "baton/gpu/gpu_error.h"
#include "baton/gpu/proc_process.h"

namespace baton {

std::unique_ptr<GpuProcessSampler> start_gpu_sampling(Ledger& ledger, std::int64_t run_id,
                                                      const Device& device, std::ostream& log,
                                                      const std::string& who,
                                                      const GpuSamplingOptions& options) {
  std::string pci_bus_id;
  try {
    pci_bus_id = device.pci_bus_id();
  } catch (const GpuError& e) {
    // Device 0 of NVML need not be ours: better no polls than another GPU's.
    log << who << ": GPU clients not sampled: the device's PCI bus id is unknown (" << e.what()
        << ")\n";
    return nullptr;
  }
  GpuSamplerOptions sampler;
  sampler.period = options.period;
  sampler.own_pid = static_cast<std::uint32_t>(::getpid());
  sampler.host_pids = options.host_pids.value_or(in_host_pid_namespace());
  GpuSamplerStart started = start_gpu_process_sampler(
      options.library, pci_bus_id, std::move(sampler), [&ledger, run_id](GpuPoll poll) {
        ledger.record(GpuPollRow{.run_id = run_id, .poll = std::move(poll)});
      });
  if (auto* unavailable = std::get_if<NvmlUnavailable>(&started)) {
    log << who << ": GPU clients not sampled: " << unavailable->message() << "\n";
    return nullptr;
  }
  return std::move(std::get<std::unique_ptr<GpuProcessSampler>>(started));
}

void stop_gpu_sampling(std::unique_ptr<GpuProcessSampler>& sampler, std::ostream& log,
                       const std::string& who) {
  if (!sampler) return;
  sampler->stop();
  const std::optional<std::string> error = sampler->error();
  sampler.reset();
  if (error) log << who << ": GPU sampling stopped early: " << *error << "\n";
}

}  // namespace baton
