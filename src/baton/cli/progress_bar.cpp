#include "baton/cli/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "baton/common/human_bytes.h"

namespace baton {

ProgressBar::ProgressBar(std::string label, std::uint64_t total, Unit unit)
    : label_(std::move(label)),
      total_(total),
      unit_(unit),
      enabled_(::isatty(STDERR_FILENO) == 1),
      start_(Clock::now()) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::update(std::uint64_t done) {
  if (!enabled_) return;
  const TimePoint now = Clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) && done < total_) return;
  last_draw_ = now;
  draw(done);
}

void ProgressBar::draw(std::uint64_t done) {
  constexpr int kWidth = 30;
  const double fraction =
      total_ > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
  const std::string amount =
      unit_ == Unit::bytes ? human_bytes(done) + " / " + human_bytes(total_)
                           : std::to_string(done) + " / " + std::to_string(total_) + " tokens";
  std::fprintf(stderr, "\r\033[K%s [%s] %3.0f%%  %s  %.1f s", label_.c_str(), bar.c_str(),
               fraction * 100.0, amount.c_str(), seconds_between(start_, Clock::now()));
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace baton
