// CpuStream: the CPU backend's Stream. Each stream has its own executor thread that runs
// committed buffers in order, so submission and completion are asynchronous as on a GPU.
// Thread-safety: as Stream. The executor thread is owned (RAII): the destructor releases
// a hung buffer, lets the executor finish what was committed, then joins it.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "baton/gpu/stream.h"

namespace baton::cpu {

class CpuStream final : public Stream {
 public:
  CpuStream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer,
            FaultHooks* faults);
  ~CpuStream() override;

 protected:
  void submit(CommandBuffer buffer) override;

 private:
  void execute_loop(std::stop_token stop);

  std::mutex queue_mu_;
  std::condition_variable_any queue_cv_;
  std::deque<CommandBuffer> queue_;  // guarded by queue_mu_
  std::jthread executor_;            // last: starts after, and stops before, the rest
};

}  // namespace baton::cpu
