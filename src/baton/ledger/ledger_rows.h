// The rows of the ledger: busy intervals of engines and of streams, fault events, runs and
// the GPU's per-process use. Times are seconds since the Unix epoch (REAL), so ledgers from
// different processes and machines line up. Thread-safety: values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "baton/gpu/gpu_poll.h"

namespace baton {

struct IntervalRow {
  std::int64_t run_id = 0;
  std::string engine;
  std::string kind;  // prefill, decode or embed
  double start = 0.0;
  double end = 0.0;
  std::optional<std::int64_t> context_tokens;
  std::optional<std::int64_t> request_id;
  std::int64_t bursts = 1;  // consecutive bursts merged into this interval
};

// A stretch during which a stream had work in flight (the GPU-side exposure).
struct StreamIntervalRow {
  std::int64_t run_id = 0;
  std::string stream;  // the stream's name: its engine's, or "default"
  double start = 0.0;
  double end = 0.0;
};

struct EventRow {
  std::int64_t run_id = 0;
  double time = 0.0;
  std::string error_class;  // hang, timeout, submissions_ignored, other, slowdown
  std::string engine;       // empty: unattributed
  std::string stream;
  std::int64_t in_flight = 0;
  std::string detail;
};

// One poll of NVML (gpu_process_sampler.h): a row of gpu_polls and one of
// gpu_process_samples per process.
struct GpuPollRow {
  std::int64_t run_id = 0;
  GpuPoll poll;
};

struct RunStart {
  double start = 0.0;
  std::string version;
  std::string backend;
  std::string policy;
  bool streams_recorded = false;  // the run writes stream intervals
  std::string driver;             // the GPU driver's version; empty: none (the CPU)
};

// One block of a live experiment (issue 51): the run it is, its arm, and how long the GPU
// turn's gate was closed to switch to it. Its exposure is written when it ends.
struct ExperimentBlockRow {
  std::int64_t run_id = 0;
  std::int64_t experiment_id = 0;
  std::int64_t block = 0;
  std::int64_t arm = 0;
  std::string arm_name;
  double switch_ms = 0.0;
};

}  // namespace baton
