#include "baton/gpu/cpu/cpu_stream.h"

#include <exception>

namespace baton::cpu {

CpuStream::CpuStream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer,
                     FaultHooks* faults)
    : Stream(id, std::move(name), limits, observer, faults),
      executor_([this](std::stop_token stop) { execute_loop(stop); }) {}

CpuStream::~CpuStream() {
  close();  // a hung buffer must not keep the executor from joining
  executor_.request_stop();
  executor_.join();
}

void CpuStream::submit(CommandBuffer buffer) {
  {
    std::lock_guard lock(queue_mu_);
    queue_.push_back(std::move(buffer));
  }
  queue_cv_.notify_one();
}

void CpuStream::execute_loop(std::stop_token stop) {
  for (;;) {
    CommandBuffer buffer;
    {
      std::unique_lock lock(queue_mu_);
      // On stop, committed work still runs to completion: nobody waits forever on it.
      queue_cv_.wait(lock, stop, [this] { return !queue_.empty(); });
      if (queue_.empty()) return;
      buffer = std::move(queue_.front());
      queue_.pop_front();
    }
    std::optional<GpuError> error = failed() ? std::nullopt : run_ops(buffer);
    complete(buffer.id, std::move(error));
  }
}

}  // namespace baton::cpu
