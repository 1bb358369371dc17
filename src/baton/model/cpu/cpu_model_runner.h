// CpuModelRunner: runs planned steps with the CPU forward pass, over the KV blocks of the
// engine's pool. A CPU has no SMs to split, so the device share only is recorded (what
// tests and reports can read back); the work is the same at any share.
// Thread-safety: as ModelRunner; device_shares() from any thread.
#pragma once

#include <deque>
#include <mutex>
#include <vector>

#include "baton/model/model_runner.h"

namespace baton {

class CpuModelRunner final : public ModelRunner {
 public:
  CpuModelRunner(const LlamaModel& model, KvBlockPool& pool) : model_(model), pool_(pool) {}
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
  KvBlockPool& pool_;
  mutable std::mutex mu_;
  std::deque<ShareSeen> shares_;  // guarded by mu_
};

}  // namespace baton
