// Other GPU clients: how much of the GPU processes other than baton used while baton's LLM
// engines were busy, from the NVML polls a ledger holds (ExposureInput::gpu_polls), so that
// "another program was busy on the GPU" can be ruled in or out for the hang exposure.
// Each process of a poll is one of:
//   baton: the polling run's own pid, or a pid that another run of the source marked as its
//     own while it ran (two baton processes on one GPU are not each other's other client);
//   other: any other process, where the pids were the host's (named or not: an unnamed one
//     lives in another container);
//   unresolved: every process of a poll taken inside a PID namespace of its own (a
//     container), where NVML's host pids cannot be told from baton's own.
// A poll's "other" use is the sum of its other processes' sm percentages, capped at 100;
// "busy" means at least the threshold (10 % of SM time by default). Where polls of several
// runs overlap, the one with the most other use counts. Figures are time-weighted over the
// busy time that polls cover.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/analysis/exposure_input.h"

namespace baton {

inline constexpr double kDefaultOtherClientSmPercent = 10.0;

// A stretch covered by one poll (the one that counts there), with its three uses.
struct GpuUsePiece {
  double start = 0.0;
  double end = 0.0;
  std::size_t poll = 0;  // index into the polls given
  double baton_sm = 0.0;
  double other_sm = 0.0;       // capped at 100
  double unresolved_sm = 0.0;  // capped at 100
};

// The polls as sorted, non-overlapping pieces.
std::vector<GpuUsePiece> gpu_use_pieces(const std::vector<GpuUsePoll>& polls);

// A process other than baton, and its mean share over the sampled busy time.
struct OtherGpuProcess {
  std::int64_t pid = 0;
  std::string process;  // empty: not named
  double mean_sm_percent = 0.0;
};

struct GpuClients {
  double threshold_sm_percent = kDefaultOtherClientSmPercent;
  double busy_hours = 0.0;          // LLM engines busy (the engine exposure)
  double sampled_busy_hours = 0.0;  // of those, covered by a poll
  // Over the sampled busy time; zero when there is none.
  double baton_mean_sm = 0.0;
  double other_mean_sm = 0.0;
  double other_max_sm = 0.0;
  double other_busy_share = 0.0;  // with other use at or above the threshold
  bool unresolved = false;        // some poll's pids could not be told apart
  double unresolved_mean_sm = 0.0;
  double unresolved_max_sm = 0.0;
  double unresolved_busy_share = 0.0;
  std::vector<OtherGpuProcess> top_others;  // by mean, at most five
};

// nullopt when the input holds no poll.
std::optional<GpuClients> measure_gpu_clients(
    const ExposureInput& input, double threshold_sm_percent = kDefaultOtherClientSmPercent);

// "busy" (other use at or above the threshold), "unresolved" (not, but unresolved use is),
// or "idle": the state of a piece, for analyze --by other_gpu_client.
std::string other_client_state(const GpuUsePiece& piece, double threshold_sm_percent);

}  // namespace baton
