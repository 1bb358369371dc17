// Stream exposure: how long one or more, and two or more, GPU streams had work in
// flight. It is the device-side exposure (what `baton repro` reports as overlap): under
// `serialize` no two streams ever have work in flight at once. The engine exposure
// (exposure.h) counts an engine busy from the moment it asks for the turn, so waiting
// for the turn counts there and not here. Every stream counts, the default stream too,
// as in the overlap meter. Intervals are half-open [start, end).
// Thread-safety: a pure function.
#pragma once

#include <optional>
#include <vector>

#include "baton/analysis/exposure_input.h"

namespace baton {

struct StreamExposure {
  double busy_hours = 0.0;           // at least one stream with work in flight
  double dual_hours = 0.0;           // at least two
  std::optional<double> dual_share;  // dual / busy; empty without busy time
};

StreamExposure measure_stream_exposure(const std::vector<StreamInterval>& intervals);

}  // namespace baton
