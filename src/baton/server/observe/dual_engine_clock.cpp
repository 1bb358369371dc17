#include "baton/server/observe/dual_engine_clock.h"

namespace baton {

void DualEngineClock::begin(const std::string& engine, TimePoint now) {
  std::lock_guard lock(mu_);
  if (in_progress_[engine]++ > 0) return;
  if (++busy_engines_ == 2) dual_since_ = now;
}

void DualEngineClock::end(const std::string& engine, TimePoint now) {
  std::lock_guard lock(mu_);
  auto it = in_progress_.find(engine);
  if (it == in_progress_.end() || it->second == 0 || --it->second > 0) return;
  if (busy_engines_-- == 2) closed_s_ += seconds_between(dual_since_, now);
}

double DualEngineClock::dual_seconds(TimePoint now) const {
  std::lock_guard lock(mu_);
  return closed_s_ + (busy_engines_ >= 2 ? seconds_between(dual_since_, now) : 0.0);
}

}  // namespace baton
