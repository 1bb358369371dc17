// Exposure: how long the LLM engines were busy, alone and together, and where each hang
// fell. The busy time of an engine is the union of its intervals (overlapping intervals
// of one engine, e.g. a batch of requests, count once); embedding intervals are not LLM
// work and are left out. Intervals are half-open [start, end).
// Thread-safety: ExposureTimeline is immutable after construction; functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/analysis/exposure_input.h"

namespace baton {

struct EngineExposure {
  std::string engine;
  double alone_hours = 0.0;        // this engine busy, no other LLM engine busy
  std::int64_t alone_hangs = 0;    // hangs blamed on it in that time
  double with_others_hours = 0.0;  // this engine and at least one other busy
  std::int64_t with_others_hangs = 0;
};

struct LongContextExposure {
  std::int64_t threshold = 0;
  double two_or_more_hours = 0.0;  // at least two engines each busy with a long request
  std::int64_t two_or_more_hangs = 0;
  double exactly_one_hours = 0.0;  // exactly one engine busy with a long request
  std::int64_t exactly_one_hangs = 0;
};

// Where one hang fell.
struct HangPlacement {
  HangRecord hang;
  int busy_engines = 0;      // LLM engines busy at that instant
  bool blamed_busy = false;  // the blamed engine itself was busy
};

struct Exposure {
  double busy_hours = 0.0;                // at least one LLM engine busy
  double dual_hours = 0.0;                // at least two busy
  std::vector<EngineExposure> by_engine;  // sorted by name
  LongContextExposure long_context;
  std::vector<HangPlacement> hangs;  // sorted by time
};

// `hangs` in `input` are taken as given; choose the classes to count before calling.
Exposure measure_exposure(const std::vector<BusyInterval>& intervals, std::vector<HangRecord> hangs,
                          std::int64_t long_context_threshold);
inline Exposure measure_exposure(const ExposureInput& input, std::int64_t long_context_threshold) {
  return measure_exposure(input.intervals, input.hangs, long_context_threshold);
}

}  // namespace baton
