// CudaStream: the CUDA backend's Stream over one non-blocking cudaStream_t. At commit the
// buffer's ops are launched on the stream and an event is recorded after them; a
// completion thread polls the events (cudaEventQuery, never a blocking wait) and completes
// buffers in order, so a hung kernel never blocks anything but its own stream.
// Injected faults are real device work (fault_kernels.h): a hang spins until reset()
// releases it and counts from when it began on the device, not from its launch. Since ops
// run long after their launch, a hang that arrives in overlap time reaches them through
// gates: a tiny kernel before each op (only when the injector's hangs arrive at op
// boundaries) that hangs the stream once the completion thread has armed it. A slowed
// stream stretches each op on the device by the slowdown factor.
// Thread-safety: as Stream; handle() is for ops that launch on the owner thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/gpu/cuda/green_partition.h"
#include "baton/gpu/cuda/hang_signals.h"
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
  void launch_op(Op& op, std::uint64_t buffer_id, std::uint32_t release_at);
  Event take_event();
  void complete_loop(std::stop_token stop);
  std::optional<GpuError> wait_for(const Event& event);
  // Completion thread: counts a hang that began on the device; arms the gates when the
  // injector hands this stream a hang; gives back one no gate took before `completed`.
  void watch_hangs();
  void end_arm_if_passed(std::uint64_t completed);

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
  HangSignals hangs_;
  DeviceBuffer stamp_slot_{sizeof(unsigned long long)};  // an op's start, for its stretch
  const bool gates_;  // hangs arrive at op boundaries: a gate before each op
  std::atomic<std::uint64_t> launched_{0};  // the newest buffer whose ops are all launched
  std::uint64_t seen_started_ = 0;  // completion thread: the last hang ticket counted
  std::uint64_t armed_ = 0;         // completion thread: the gates' bound; 0 when unarmed

  std::mutex queue_mu_;
  std::condition_variable_any queue_cv_;
  std::deque<Pending> pending_;      // guarded by queue_mu_
  std::vector<Event> spare_events_;  // guarded by queue_mu_
  std::jthread completer_;           // last: starts after, and stops before, the rest
};

}  // namespace baton::cuda
