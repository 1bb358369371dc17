// ProgressBar: one line on stderr that a long step redraws (written / total, percent,
// seconds so far), only when stderr is a terminal: logs and pipes get the summary line
// the command prints anyway, not carriage returns.
// Thread-safety: one thread at a time (the command's).
#pragma once

#include <cstdint>
#include <string>

#include "baton/common/clock.h"

namespace baton {

class ProgressBar {
 public:
  enum class Unit { bytes, tokens };

  ProgressBar(std::string label, std::uint64_t total, Unit unit);
  ~ProgressBar();  // clears the line
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Redraws at most ten times a second.
  void update(std::uint64_t done);
  bool shown() const { return enabled_; }

 private:
  void draw(std::uint64_t done);

  const std::string label_;
  const std::uint64_t total_;
  const Unit unit_;
  const bool enabled_;
  const TimePoint start_;
  TimePoint last_draw_{};
  bool drawn_ = false;
};

}  // namespace baton
