#include "baton/gpu/cpu/cpu_stream.h"

#include <exception>

namespace baton::cpu {

CpuStream::CpuStream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer)
    : Stream(id, std::move(name), limits, observer),
      executor_([this](std::stop_token stop) { execute_loop(stop); }) {}

CpuStream::~CpuStream() {
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
    std::optional<GpuError> error = execute(buffer);
    complete(buffer.id, std::move(error));
  }
}

std::optional<GpuError> CpuStream::execute(CommandBuffer& buffer) {
  if (failed()) return std::nullopt;  // skipped after an earlier error, still completed
  try {
    for (Op& op : buffer.ops) op.run();
  } catch (const GpuError& error) {
    return error;
  } catch (const std::exception& error) {
    return GpuError(GpuErrorClass::other, "cpu::Stream " + name(), error.what());
  }
  return std::nullopt;
}

}  // namespace baton::cpu
