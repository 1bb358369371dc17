#include "baton/watchdog/fault_log.h"

namespace baton {

void FaultLog::record(FaultEvent event) {
  std::lock_guard lock(mu_);
  if (event.fatal) {
    if (fatal_) return;  // the device stays fatal: one event says it
    fatal_ = event;
    fatal_cv_.notify_all();
  }
  for (const Sink& sink : sinks_) sink(event);
  events_.push_back(std::move(event));
}

void FaultLog::count_recovered() {
  std::lock_guard lock(mu_);
  ++recovered_;
}

std::vector<FaultEvent> FaultLog::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

std::uint64_t FaultLog::recovered() const {
  std::lock_guard lock(mu_);
  return recovered_;
}

std::optional<FaultEvent> FaultLog::fatal() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

bool FaultLog::wait_fatal_for(std::chrono::duration<double> timeout) {
  std::unique_lock lock(mu_);
  return fatal_cv_.wait_for(lock, timeout, [this] { return fatal_.has_value(); });
}

}  // namespace baton
