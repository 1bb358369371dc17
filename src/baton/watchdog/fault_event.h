// FaultEvent: one detected fault (a hang, a device error, a slowdown) with what every
// engine was doing at that moment. Kept in memory by FaultLog; the ledger stores them.
// Thread-safety: a value.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/gpu/gpu_error.h"
#include "baton/turn/burst_observer.h"

namespace baton {

enum class FaultKind { hang, timeout, submissions_ignored, other, slowdown };

constexpr FaultKind fault_kind(GpuErrorClass error_class) {
  switch (error_class) {
    case GpuErrorClass::hang:
      return FaultKind::hang;
    case GpuErrorClass::timeout:
      return FaultKind::timeout;
    case GpuErrorClass::submissions_ignored:
      return FaultKind::submissions_ignored;
    case GpuErrorClass::other:
      return FaultKind::other;
  }
  return FaultKind::other;
}

constexpr std::string_view to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::hang:
      return "hang";
    case FaultKind::timeout:
      return "timeout";
    case FaultKind::submissions_ignored:
      return "submissions_ignored";
    case FaultKind::other:
      return "other";
    case FaultKind::slowdown:
      return "slowdown";
  }
  return "other";
}

struct FaultEvent {
  std::chrono::system_clock::time_point wall_time;
  TimePoint time{};  // when it was detected
  // For a hang: when the stream last made progress, i.e. when the hang began; for a
  // slowdown: when the slow burst got the turn.
  std::optional<TimePoint> onset;
  FaultKind kind = FaultKind::other;
  bool fatal = false;
  std::string engine;  // blamed; empty when nobody can be blamed
  std::string stream;
  std::size_t in_flight = 0;
  std::vector<EngineActivity> engines;  // every engine at that moment
  std::string detail;
  // For injected hangs: from the moment the stream stalled to detection.
  std::optional<double> detect_latency_ms;
};

}  // namespace baton
