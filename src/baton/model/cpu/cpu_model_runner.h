// CpuModelRunner: runs planned steps with the CPU forward pass. It owns the memory of the
// scheduler's KV blocks (KvMemory, as many blocks as the pool it is given accounts for).
// A CPU has no SMs to split, so the device share only is recorded (what tests and
// reports can read back); the work is the same at any share.
// Thread-safety: as ModelRunner; device_shares() from any thread.
#pragma once

#include <deque>
#include <mutex>
#include <vector>

#include "baton/model/cpu/forward_pass.h"
#include "baton/model/runner/model_runner.h"

namespace baton {

class CpuModelRunner final : public ModelRunner {
 public:
  // std::logic_error for a model whose host copies were released after an upload
  // (LlamaModel::host_copies_released): its first read would fault.
  CpuModelRunner(const LlamaModel& model, const KvBlockPool& pool);
  std::shared_ptr<ModelStep> begin(StepPlan plan, double device_share) override;

  struct ShareSeen {
    bool prefills = false;
    double share = 1.0;
  };
  // Every step's share as it began and at each set_device_share (the last 4096).
  std::vector<ShareSeen> device_shares() const;
  void record(bool prefills, double share);

 private:
  const LlamaModel& model_;
  KvMemory memory_;         // the engine thread's steps only, one at a time
  ForwardScratch scratch_;  // the buffers of every step's pass, one step at a time
  mutable std::mutex mu_;
  std::deque<ShareSeen> shares_;  // guarded by mu_
};

}  // namespace baton
