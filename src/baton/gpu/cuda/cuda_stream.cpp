#include "baton/gpu/cuda/cuda_stream.h"

#include <algorithm>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/fault_kernels.h"

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
      gates_(faults != nullptr && faults->hangs_at_op_boundaries()),
      completer_([this](std::stop_token stop) { complete_loop(stop); }) {}

CudaStream::~CudaStream() {
  close();
  hangs_.release_all();  // no kernel spins on
  // Errors were reported with their buffers.
  (void)cudaStreamSynchronize(stream_.get());
  for (const Placed& p : placed_) (void)cudaStreamSynchronize(p.stream.get());
  completer_.request_stop();
  queue_cv_.notify_all();
  completer_.join();
}

void CudaStream::release_hang() { hangs_.release(); }

std::optional<GpuError> CudaStream::launch(CommandBuffer& buffer) {
  const std::string origin = "cuda stream " + name();
  // Work launched now is failed by the next reset: its fault kernels return at once then.
  const std::uint32_t release_at = hangs_.releases() + 1;
  try {
    switch (buffer.fault) {
      case BufferFault::none:
        break;
      case BufferFault::hang:
        // Counted when it begins on the device (watch_hangs); the reset puts its error on.
        BATON_CUDA_CHECK(launch_hang(current_, hangs_.device(), kBufferHangTicket | buffer.id,
                                     release_at));
        return std::nullopt;
      case BufferFault::timeout:
        fault_hooks()->realized(id(), BufferFault::timeout);
        return GpuError(GpuErrorClass::timeout, origin,
                        "injected: buffer " + std::to_string(buffer.id) + " timed out");
      case BufferFault::submissions_ignored:
        fault_hooks()->realized(id(), BufferFault::submissions_ignored);
        return GpuError(GpuErrorClass::submissions_ignored, origin,
                        "injected: the device ignores submissions");
      case BufferFault::device_fault:
        // The device reports it on this buffer's event: a real sticky error.
        fault_hooks()->realized(id(), BufferFault::device_fault);
        BATON_CUDA_CHECK(launch_device_fault(current_));
        return std::nullopt;
    }
    for (Op& op : buffer.ops) launch_op(op, buffer.id, release_at);
  } catch (const GpuError& error) {
    return error;
  } catch (const std::exception& error) {
    return GpuError(GpuErrorClass::other, origin, error.what());
  }
  return std::nullopt;
}

void CudaStream::launch_op(Op& op, std::uint64_t buffer_id, std::uint32_t release_at) {
  if (gates_) BATON_CUDA_CHECK(launch_hang_gate(current_, hangs_.device(), buffer_id, release_at));
  const double factor =
      fault_hooks() != nullptr ? fault_hooks()->slowdown(id(), Clock::now()) : 1.0;
  auto* slot = static_cast<unsigned long long*>(stamp_slot_.get());
  if (factor > 1.0) BATON_CUDA_CHECK(launch_stamp(current_, slot));
  op.run();  // may move current_ to a partition's stream, ordered after the old one
  BATON_CUDA_CHECK(cudaGetLastError());
  if (factor > 1.0) {
    BATON_CUDA_CHECK(launch_stretch(current_, slot, factor - 1.0, hangs_.device(), release_at));
  }
}

cudaStream_t CudaStream::place(const std::shared_ptr<const GreenPartition>& partition, Side side) {
  cudaStream_t next = stream_.get();
  if (partition != nullptr) {
    auto it = std::find_if(placed_.begin(), placed_.end(), [&](const Placed& p) {
      return p.partition == partition && p.side == side;
    });
    if (it == placed_.end()) {
      placed_.push_back({.partition = partition,
                         .side = side,
                         .stream = StreamHandle::adopt(partition->make_stream(side))});
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
  Pending pending{.id = buffer.id, .done = std::nullopt, .error = std::nullopt};
  if (!failed()) {
    pending.error = launch(buffer);
    try {
      pending.done = take_event();
      BATON_CUDA_CHECK(cudaEventRecord(pending.done->get(), current_));
    } catch (const GpuError& error) {
      if (!pending.error) pending.error = error;
      pending.done.reset();
    }
    launched_.store(buffer.id, std::memory_order_release);
  }
  {
    std::lock_guard lock(queue_mu_);
    pending_.push_back(std::move(pending));
  }
  queue_cv_.notify_one();
}

void CudaStream::watch_hangs() {
  const std::uint64_t started = hangs_.started();
  if (started != seen_started_) {
    seen_started_ = started;
    if (started == armed_) {
      armed_ = 0;
      hangs_.disarm();
    }
    note_stall_began();
    fault_hooks()->realized(id(), BufferFault::hang);
  }
  if (gates_ && armed_ == 0 && accepts_hang() && fault_hooks()->stall_now(id())) {
    // Every buffer launched so far has gates that may take it; later ones may not, so a
    // hang never outlives the work that was in flight when it arrived.
    armed_ = launched_.load(std::memory_order_acquire);
    hangs_.arm(armed_);
  }
}

void CudaStream::end_arm_if_passed(std::uint64_t completed) {
  if (armed_ == 0 || completed < armed_) return;
  // Every gate that could take it has run without taking it.
  armed_ = 0;
  hangs_.disarm();
  fault_hooks()->hang_not_landed(id());
}

std::optional<GpuError> CudaStream::wait_for(const Event& event) {
  for (int queries = 0;; ++queries) {
    const cudaError_t status = cudaEventQuery(event.get());
    if (status == cudaSuccess) return std::nullopt;
    if (status != cudaErrorNotReady) return to_gpu_error(status, "cuda stream " + name());
    if (fault_hooks() != nullptr) watch_hangs();
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
    if (fault_hooks() != nullptr) {
      watch_hangs();  // a hang that began and ended between two looks counts too
      end_arm_if_passed(pending.id);
    }
    complete(pending.id, std::move(error));
  }
}

}  // namespace baton::cuda
