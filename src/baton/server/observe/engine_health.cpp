#include "baton/server/observe/engine_health.h"

namespace baton {

EngineHealth::EngineHealth(std::chrono::milliseconds hang_deadline, std::chrono::seconds settle)
    : hang_deadline_(hang_deadline), settle_(settle) {}

void EngineHealth::watch(const std::string& engine, const Stream* stream) {
  std::lock_guard lock(mu_);
  engines_[engine].stream = stream;
}

void EngineHealth::fault(const FaultEvent& event) {
  std::lock_guard lock(mu_);
  if (event.fatal && !fatal_) fatal_ = std::string(to_string(event.kind)) + ": " + event.detail;
  auto it = engines_.find(event.engine);
  if (it == engines_.end()) return;
  Engine& engine = it->second;
  ++engine.faults;
  engine.last_faults.push_back(event);
  if (engine.last_faults.size() > kLastFaultsKept)
    engine.last_faults.erase(engine.last_faults.begin());
  // A slowdown is reported, not a reason to turn clients away.
  if (event.kind == FaultKind::slowdown) return;
  engine.recovering_since = event.time;
  engine.last_fault = std::string(to_string(event.kind)) + " detected: " + event.detail;
}

void EngineHealth::burst_done(const BurstRecord& burst) {
  if (!burst.ok) return;
  std::lock_guard lock(mu_);
  auto it = engines_.find(burst.engine);
  // Only a burst that began after the fault shows the engine works again.
  if (it != engines_.end() && it->second.recovering_since &&
      burst.granted > *it->second.recovering_since) {
    it->second.recovering_since.reset();
  }
}

std::vector<EngineHealthState> EngineHealth::states(TimePoint now) const {
  std::lock_guard lock(mu_);
  std::vector<EngineHealthState> out;
  for (const auto& [name, engine] : engines_) {
    EngineHealthState s{.engine = name,
                        .state = "ok",
                        .reason = "",
                        .faults = engine.faults,
                        .last_faults = engine.last_faults};
    const double stuck_s = engine.stream != nullptr ? engine.stream->stats(now).no_progress_s : 0.0;
    if (fatal_) {
      s.state = "fatal";
      s.reason = "the device is in a fatal state (" + *fatal_ + "); the process must restart";
    } else if (stuck_s >= std::chrono::duration<double>(hang_deadline_).count()) {
      s.state = "hung";
      s.reason = "its stream has made no progress for " + std::to_string(stuck_s) + " s";
    } else if (engine.recovering_since && now - *engine.recovering_since < settle_) {
      s.state = "recovering";
      s.reason = engine.last_fault;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace baton
