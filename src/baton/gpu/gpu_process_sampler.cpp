#include "baton/gpu/gpu_process_sampler.h"

#include <algorithm>
#include <map>
#include <utility>

#include "baton/common/clock.h"
#include "baton/gpu/proc_process.h"

namespace baton {
namespace {

constexpr double kMaxPercent = 100.0;

// The newest sample NVML holds now: what came before the sampler is not its to count. Read
// from NVML rather than the clock, so that it holds whatever clock NVML stamps with.
std::uint64_t newest_sample(const NvmlLibrary& nvml, NvmlDevice device) {
  std::uint64_t newest = 0;
  for (const NvmlProcessSample& s : nvml.process_utilization(device, 0)) {
    newest = std::max(newest, s.time_us);
  }
  return newest;
}

GpuSamplerOptions with_defaults(GpuSamplerOptions options) {
  if (!options.now) options.now = unix_seconds_now;
  if (!options.name) options.name = process_name;
  return options;
}

}  // namespace

GpuPoll poll_of(const std::vector<NvmlProcessSample>& samples, std::uint64_t since_us, double start,
                double end, const GpuSamplerOptions& options) {
  struct Sum {
    double sm = 0.0, mem = 0.0;
    int count = 0;
  };
  std::map<std::uint32_t, Sum> by_pid;
  for (const NvmlProcessSample& s : samples) {
    if (s.time_us <= since_us) continue;  // NVML's buffer may hold older ones
    Sum& sum = by_pid[s.pid];
    sum.sm += std::min<double>(s.sm_percent, kMaxPercent);
    sum.mem += std::min<double>(s.mem_percent, kMaxPercent);
    ++sum.count;
  }
  GpuPoll poll{.start = start, .end = end, .host_pids = options.host_pids, .processes = {}};
  for (const auto& [pid, sum] : by_pid) {
    if (sum.sm == 0.0 && sum.mem == 0.0) continue;
    GpuProcessUse use{.pid = pid,
                      .process = std::nullopt,
                      .own = false,
                      .sm_percent = sum.sm / sum.count,
                      .mem_percent = sum.mem / sum.count};
    // Another namespace's pid names whatever process has that number here, if any.
    if (options.host_pids) {
      use.own = pid == options.own_pid;
      use.process = options.name ? options.name(pid) : process_name(pid);
    }
    poll.processes.push_back(std::move(use));
  }
  return poll;
}

GpuProcessSampler::GpuProcessSampler(std::unique_ptr<NvmlLibrary> nvml, NvmlDevice device,
                                     GpuSamplerOptions options, GpuPollSink sink)
    : nvml_(std::move(nvml)),
      device_(device),
      options_(with_defaults(std::move(options))),
      sink_(std::move(sink)) {
  since_us_ = options_.since_us != 0 ? options_.since_us : newest_sample(*nvml_, device_);
  last_end_ = options_.now();
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

GpuProcessSampler::~GpuProcessSampler() { stop(); }

void GpuProcessSampler::stop() {
  thread_.request_stop();
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<std::string> GpuProcessSampler::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void GpuProcessSampler::run(std::stop_token stop) {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      (void)wake_.wait_for(lock, stop, options_.period, [] { return false; });
    }
    // A stop still takes the poll: the last stretch of the run is recorded too.
    if (!poll_once()) return;
    if (stop.stop_requested()) break;
  }
  flush_held();
}

bool GpuProcessSampler::poll_once() {
  try {
    const std::vector<NvmlProcessSample> samples = nvml_->process_utilization(device_, since_us_);
    // A wall clock set back must not make a poll end before it starts.
    const double end = std::max(options_.now(), last_end_);
    GpuPoll poll = poll_of(samples, since_us_, last_end_, end, options_);
    for (const NvmlProcessSample& s : samples) since_us_ = std::max(since_us_, s.time_us);
    last_end_ = end;
    ++polls_;
    emit(std::move(poll));
    return true;
  } catch (const std::exception& e) {
    fail(e.what());
  }
  flush_held();  // what was held precedes the error: still good
  return false;
}

void GpuProcessSampler::flush_held() {
  if (!held_) return;
  try {
    hand_over(*std::exchange(held_, std::nullopt));
  } catch (const std::exception& e) {
    fail(e.what());  // kept only if it is the first
  }
}

void GpuProcessSampler::emit(GpuPoll poll) {
  if (poll.processes.empty()) {
    if (held_ && held_->host_pids == poll.host_pids &&
        poll.end - held_->start <= options_.merge_empty_s) {
      held_->end = poll.end;
      return;
    }
    if (held_) hand_over(*std::exchange(held_, std::nullopt));
    held_ = std::move(poll);
    return;
  }
  if (held_) hand_over(*std::exchange(held_, std::nullopt));
  hand_over(std::move(poll));
}

void GpuProcessSampler::hand_over(GpuPoll poll) {
  // A sink's exception is caught by poll_once() or flush_held(), never let out of the thread.
  sink_(std::move(poll));
}

void GpuProcessSampler::fail(const std::string& what) {
  std::lock_guard lock(mu_);
  if (!error_) error_ = what;
}

GpuSamplerStart start_gpu_process_sampler(const std::string& library, const std::string& pci_bus_id,
                                          GpuSamplerOptions options, GpuPollSink sink) {
  NvmlOpenResult opened = NvmlLibrary::open(library);
  if (auto* unavailable = std::get_if<NvmlUnavailable>(&opened)) return std::move(*unavailable);
  auto nvml = std::move(std::get<std::unique_ptr<NvmlLibrary>>(opened));
  try {
    const NvmlDevice device = nvml->device(pci_bus_id);
    return std::make_unique<GpuProcessSampler>(std::move(nvml), device, std::move(options),
                                               std::move(sink));
  } catch (const NvmlError& e) {
    return NvmlUnavailable{.reason = e.what()};
  }
}

}  // namespace baton
