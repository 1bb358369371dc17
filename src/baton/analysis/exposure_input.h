// What the analysis reads, wherever it came from (a ledger, or CSV logs of another
// server): every engine's busy intervals, the fault events and, where the source has
// them, the streams' busy intervals and the GPU's per-process use. Times are seconds
// since the Unix epoch.
// Two exposures: an engine is busy while it has a request in progress, from asking for
// the GPU turn to completion (waiting for the turn included); a stream is busy while it
// has work in flight on the device (what `baton repro` meters as overlap).
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton {

struct BusyInterval {
  std::string engine;
  double start = 0.0;
  double end = 0.0;  // >= start
  std::optional<std::int64_t> context_tokens;
  std::string kind;  // prefill, decode, embed; empty when the source does not say (CSV)
  std::string policy;   // its run's GPU turn policy; empty when the source does not say
  std::string backend;  // its run's backend (cpu, cuda); likewise
  std::string driver;   // its run's GPU driver version; empty: none (the CPU) or not said
};

struct HangRecord {
  double time = 0.0;
  std::string engine;                // the blamed engine; empty: unattributed
  std::string error_class = "hang";  // hang, timeout, ... as in the ledger's events table
};

// A stretch during which a stream had work in flight.
struct StreamInterval {
  std::string stream;
  double start = 0.0;
  double end = 0.0;  // >= start
};

// One process's use of the GPU over a poll, as NVML reported it.
struct GpuProcessShare {
  std::int64_t pid = 0;
  std::string process;  // empty: not named (not visible to baton, or pids not comparable)
  bool own = false;     // the pid of the baton process that polled
  double sm_percent = 0.0;
  double mem_percent = 0.0;
};

// A poll of the GPU's per-process use over [start, end) by a baton run.
struct GpuUsePoll {
  std::int64_t run = 0;
  double start = 0.0;
  double end = 0.0;       // >= start
  bool host_pids = true;  // false: baton ran in a PID namespace of its own (gpu_poll.h)
  std::vector<GpuProcessShare> processes;
};

struct ExposureInput {
  std::vector<BusyInterval> intervals;
  std::vector<HangRecord> hangs;
  // Empty when the source did not record streams (CSV logs, runs of a ledger written
  // before schema version 3): unknown, which is not the same as none.
  std::optional<std::vector<StreamInterval>> stream_intervals;
  // Empty when nothing was polled (CSV logs, the CPU, runs before schema version 5, NVML
  // unavailable or sampling off): unknown, not idle.
  std::vector<GpuUsePoll> gpu_polls;
};

}  // namespace baton
