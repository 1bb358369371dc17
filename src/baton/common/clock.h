// Monotonic time for every measurement in baton: one clock, one duration type.
// Thread-safety: stateless; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace baton {

inline constexpr double kSecondsPerHour = 3600.0;
inline constexpr double kSecondsPerDay = 86400.0;

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

inline double seconds_between(TimePoint from, TimePoint to) {
  return std::chrono::duration<double>(to - from).count();
}

inline double millis_between(TimePoint from, TimePoint to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// Wall-clock time as Unix seconds, for what is recorded or compared across processes and
// machines (ledger rows, Prometheus queries); never for measuring a duration.
inline double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Nanoseconds on the steady clock, for timestamps that travel through atomics.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace baton
