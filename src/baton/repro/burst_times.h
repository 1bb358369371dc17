// BurstTimes: every completed burst's length (asking for the turn to done, in ms) per
// engine, whatever the engine runs: what `baton repro` reports as each engine's steps;
// and its decode bursts apart (an LLM engine's steps that prefill nothing), since a
// prefilling step of a decoding engine is no decode step.
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
    const double ms = millis_between(burst.asked, burst.done);
    std::lock_guard lock(mu_);
    all_[burst.engine].push_back(ms);
    if (burst.kind == BurstKind::decode) decode_[burst.engine].push_back(ms);
  }
  std::vector<double> of(const std::string& engine) const { return find(all_, engine); }
  std::vector<double> decode_of(const std::string& engine) const { return find(decode_, engine); }

 private:
  using Times = std::map<std::string, std::vector<double>>;
  std::vector<double> find(const Times& times, const std::string& engine) const {
    std::lock_guard lock(mu_);
    auto it = times.find(engine);
    return it != times.end() ? it->second : std::vector<double>{};
  }

  mutable std::mutex mu_;
  Times all_;     // guarded by mu_
  Times decode_;  // guarded by mu_
};

}  // namespace baton
