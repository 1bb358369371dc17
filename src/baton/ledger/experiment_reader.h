// Reading a live experiment back from the ledger (`baton analyze --experiment`): its plan
// and verdict as the server wrote them (JSON), and its blocks in order, each with its arm,
// its run's times, the exposure the server counted and the hangs that began in it.
// Thread-safety: a pure function of the file (opened read-only).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace baton {

struct RecordedBlock {
  std::int64_t run_id = 0;
  std::int64_t block = 0;
  std::int64_t arm = 0;
  std::string arm_name;
  double start = 0.0;
  std::optional<double> stop;  // none: the block (and its run) never ended
  double switch_ms = 0.0;
  std::optional<double> exposure_hours;  // none: the block never ended
  std::vector<double> hang_times;        // Unix seconds: the hangs that began in the block
};

struct RecordedExperiment {
  std::int64_t id = 0;
  std::string name;
  double start = 0.0;
  std::optional<double> stop;
  std::string plan_json;
  std::string verdict_json;  // empty: no verdict recorded
  std::vector<RecordedBlock> blocks;
};

// Every experiment of the ledger, oldest first; none in a ledger older than schema 6.
// Throws as read_ledger does for a missing file or one that is not a ledger.
std::vector<RecordedExperiment> read_experiments(const std::filesystem::path& path);

}  // namespace baton
