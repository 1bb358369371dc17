#include "baton/turn/serial_steps.h"

namespace baton {

std::optional<GpuError> drain_for_handover(Stream& own, Stream& default_stream, bool take_errors,
                                           std::chrono::nanoseconds spin) noexcept {
  // Under this policy only the holder encodes, so it may commit the default stream too.
  own.commit();
  default_stream.commit();
  own.wait_in_flight(0, spin);
  default_stream.wait_in_flight(0, spin);
  if (!take_errors) return std::nullopt;
  if (std::optional<GpuError> error = own.take_error()) return error;
  return default_stream.take_error();
}

std::optional<double> piece_budget(const TurnOptions& options, bool someone_waits,
                                   const ContentionClock& contention) {
  if (options.quantum != Quantum::op) return std::nullopt;
  if (someone_waits || contention.recent()) return options.max_hold_ms;
  return std::nullopt;
}

bool is_quantum_boundary(const TurnOptions& options, BurstKind holder_kind, Boundary boundary) {
  if (holder_kind != BurstKind::prefill) return false;
  return options.quantum == Quantum::op ||
         (options.quantum == Quantum::layer && boundary == Boundary::layer);
}

void end_quantum(Stream& stream, Boundary boundary, std::chrono::nanoseconds spin) {
  if (boundary == Boundary::queued_op) {
    stream.wait_in_flight(1, spin);
    return;
  }
  stream.commit();
  stream.wait_in_flight(0, spin);
  if (std::optional<GpuError> error = stream.take_error()) throw *error;
}

}  // namespace baton
