// BurstTimes: every completed burst's length (asking for the turn to done, in ms) per
// engine, whatever the engine runs: what `baton repro` reports as each engine's steps.
// Thread-safety: burst_done() and of() are thread-safe (one mutex).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "baton/turn/burst_observer.h"

namespace baton {

class BurstTimes final : public BurstObserver {
 public:
  void burst_done(const BurstRecord& burst) override {
    if (!burst.ok) return;  // a failed burst is a fault, counted as one
    std::lock_guard lock(mu_);
    ms_[burst.engine].push_back(millis_between(burst.asked, burst.done));
  }
  std::vector<double> of(const std::string& engine) const {
    std::lock_guard lock(mu_);
    auto it = ms_.find(engine);
    return it != ms_.end() ? it->second : std::vector<double>{};
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<double>> ms_;  // guarded by mu_
};

}  // namespace baton
