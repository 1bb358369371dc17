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
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/gpu/stream.h"

namespace baton::cuda {

class CudaStream final : public Stream {
 public:
  CudaStream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer,
             FaultHooks* faults);
  ~CudaStream() override;

  cudaStream_t handle() const { return stream_.get(); }

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

  StreamHandle stream_;
  MappedCounter releases_;  // raised by every reset: hung kernels launched before it return

  std::mutex queue_mu_;
  std::condition_variable_any queue_cv_;
  std::deque<Pending> pending_;      // guarded by queue_mu_
  std::vector<Event> spare_events_;  // guarded by queue_mu_
  std::jthread completer_;           // last: starts after, and stops before, the rest
};

}  // namespace baton::cuda
