// CudaStream: the CUDA backend's Stream over one non-blocking cudaStream_t. At commit the
// buffer's ops are launched on the stream and an event is recorded after them; a
// completion thread polls the events (cudaEventQuery, never a blocking wait) and completes
// buffers in order, so a hung kernel never blocks anything but its own stream. Injected
// hangs are real: a kernel that spins on a host-mapped counter until reset() raises it.
// Slowdown injection is not applied on this backend.
// Thread-safety: as Stream; handle() is for ops that launch on the owner thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/gpu/cuda/green_partition.h"
#include "baton/gpu/stream.h"

namespace baton::cuda {

class CudaStream final : public Stream {
 public:
  // `partitions` (may be null: no green contexts) must outlive the stream's use of place().
  CudaStream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer,
             FaultHooks* faults, PartitionCache* partitions = nullptr);
  ~CudaStream() override;

  // Owner thread: the CUDA stream the next launch goes to.
  cudaStream_t handle() const { return current_; }
  // Owner thread, from inside an op: moves the following launches to `side` of `partition`
  // (null: the whole chip) and returns that stream. A move orders the new stream after the
  // old one (an event), so buffers still complete in order.
  cudaStream_t place(const std::shared_ptr<const GreenPartition>& partition, Side side);
  // Owner thread: the device's split with about `prefill_sms` on the prefill side; null
  // when the driver cannot make it.
  std::shared_ptr<const GreenPartition> partition(int prefill_sms) {
    return partitions_ != nullptr ? partitions_->get(prefill_sms) : nullptr;
  }

 protected:
  void submit(CommandBuffer buffer) override;
  void release_hang() override;

 private:
  struct Pending {
    std::uint64_t id;
    std::optional<Event> done;  // recorded after the buffer's last op; empty: nothing launched
    std::optional<GpuError> error;
  };

  std::optional<GpuError> launch(CommandBuffer& buffer);
  void start_hang();
  Event take_event();
  void complete_loop(std::stop_token stop);
  std::optional<GpuError> wait_for(const Event& event);

  PartitionCache* const partitions_;
  StreamHandle stream_;
  cudaStream_t current_;  // stream_ or one of placed_; owner thread
  struct Placed {
    std::shared_ptr<const GreenPartition> partition;  // outlives its stream
    Side side;
    StreamHandle stream;
  };
  std::vector<Placed> placed_;  // owner thread
  Event move_event_;
  MappedCounter releases_;  // raised by every reset: hung kernels launched before it return

  std::mutex queue_mu_;
  std::condition_variable_any queue_cv_;
  std::deque<Pending> pending_;      // guarded by queue_mu_
  std::vector<Event> spare_events_;  // guarded by queue_mu_
  std::jthread completer_;           // last: starts after, and stops before, the rest
};

}  // namespace baton::cuda
