#include "baton/gpu/cuda/cuda_stream.h"

#include <algorithm>
#include <limits>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/hang_kernel.h"

namespace baton::cuda {
namespace {

// Spinning on the event for the first stretch keeps completion latency low for short
// bursts; after that the thread sleeps between queries.
constexpr int kSpinQueries = 2000;
constexpr auto kPollSleep = std::chrono::microseconds(20);

}  // namespace

CudaStream::CudaStream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer,
                       FaultHooks* faults, PartitionCache* partitions)
    : Stream(id, std::move(name), limits, observer, faults),
      partitions_(partitions),
      current_(stream_.get()),
      completer_([this](std::stop_token stop) { complete_loop(stop); }) {}

CudaStream::~CudaStream() {
  close();
  releases_.raise_to(std::numeric_limits<std::uint32_t>::max());  // no kernel spins on
  // Errors were reported with their buffers.
  (void)cudaStreamSynchronize(stream_.get());
  for (const Placed& p : placed_) (void)cudaStreamSynchronize(p.stream.get());
  completer_.request_stop();
  queue_cv_.notify_all();
  completer_.join();
}

void CudaStream::release_hang() { releases_.raise_to(releases_.value() + 1); }

void CudaStream::start_hang() {
  fault_hooks()->realized(id(), BufferFault::hang);
  note_stall_began();
  BATON_CUDA_CHECK(cuda::launch_hang(current_, releases_.device_alias(), releases_.value() + 1));
}

std::optional<GpuError> CudaStream::launch(CommandBuffer& buffer) {
  const std::string origin = "cuda stream " + name();
  switch (buffer.fault) {
    case BufferFault::none:
      break;
    case BufferFault::hang:
      start_hang();
      return std::nullopt;  // the reset puts its error on the stream
    case BufferFault::timeout:
      fault_hooks()->realized(id(), BufferFault::timeout);
      return GpuError(GpuErrorClass::timeout, origin,
                      "injected: buffer " + std::to_string(buffer.id) + " timed out");
    case BufferFault::submissions_ignored:
      fault_hooks()->realized(id(), BufferFault::submissions_ignored);
      return GpuError(GpuErrorClass::submissions_ignored, origin,
                      "injected: the device ignores submissions");
  }
  try {
    for (Op& op : buffer.ops) {
      if (fault_hooks() != nullptr && fault_hooks()->stall_now(id())) {
        start_hang();
        return std::nullopt;
      }
      op.run();
      const cudaError_t status = cudaGetLastError();
      if (status != cudaSuccess) return to_gpu_error(status, "a launch on " + origin);
    }
  } catch (const GpuError& error) {
    return error;
  } catch (const std::exception& error) {
    return GpuError(GpuErrorClass::other, origin, error.what());
  }
  return std::nullopt;
}

cudaStream_t CudaStream::place(const std::shared_ptr<const GreenPartition>& partition, Side side) {
  cudaStream_t next = stream_.get();
  if (partition != nullptr) {
    auto it = std::find_if(placed_.begin(), placed_.end(), [&](const Placed& p) {
      return p.partition == partition && p.side == side;
    });
    if (it == placed_.end()) {
      placed_.push_back({partition, side, StreamHandle::adopt(partition->make_stream(side))});
      it = std::prev(placed_.end());
    }
    next = it->stream.get();
  }
  if (next != current_) {
    BATON_CUDA_CHECK(cudaEventRecord(move_event_.get(), current_));
    BATON_CUDA_CHECK(cudaStreamWaitEvent(next, move_event_.get(), 0));
    current_ = next;
  }
  return current_;
}

Event CudaStream::take_event() {
  {
    std::lock_guard lock(queue_mu_);
    if (!spare_events_.empty()) {
      Event event = std::move(spare_events_.back());
      spare_events_.pop_back();
      return event;
    }
  }
  return Event();
}

void CudaStream::submit(CommandBuffer buffer) {
  Pending pending{buffer.id, std::nullopt, std::nullopt};
  if (!failed()) {
    pending.error = launch(buffer);
    try {
      pending.done = take_event();
      BATON_CUDA_CHECK(cudaEventRecord(pending.done->get(), current_));
    } catch (const GpuError& error) {
      if (!pending.error) pending.error = error;
      pending.done.reset();
    }
  }
  {
    std::lock_guard lock(queue_mu_);
    pending_.push_back(std::move(pending));
  }
  queue_cv_.notify_one();
}

std::optional<GpuError> CudaStream::wait_for(const Event& event) {
  for (int queries = 0;; ++queries) {
    const cudaError_t status = cudaEventQuery(event.get());
    if (status == cudaSuccess) return std::nullopt;
    if (status != cudaErrorNotReady) return to_gpu_error(status, "cuda stream " + name());
    if (queries < kSpinQueries) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kPollSleep);
    }
  }
}

void CudaStream::complete_loop(std::stop_token stop) {
  for (;;) {
    Pending pending;
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait(lock, stop, [this] { return !pending_.empty(); });
      if (pending_.empty()) return;  // stopped, and every committed buffer completed
      pending = std::move(pending_.front());
      pending_.pop_front();
    }
    std::optional<GpuError> error = std::move(pending.error);
    if (pending.done) {
      std::optional<GpuError> device_error = wait_for(*pending.done);
      if (!error) error = std::move(device_error);
      std::lock_guard lock(queue_mu_);
      spare_events_.push_back(std::move(*pending.done));
    }
    complete(pending.id, std::move(error));
  }
}

}  // namespace baton::cuda
