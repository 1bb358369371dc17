#include "baton/turn/share_controller.h"

#include <algorithm>
#include <stdexcept>

namespace baton {
namespace {

double quantile(std::vector<double> values, double q) {
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(q * (values.size() - 1) + 0.5);
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

}  // namespace

ShareController::ShareController(Options options) : options_(options), share_(options.start) {
  if (!(options_.min_share > 0 && options_.min_share <= options_.start &&
        options_.start <= options_.max_share && options_.max_share <= 1.0 && options_.step > 0 &&
        options_.target_slowdown >= 1.0 && options_.window > 0 && options_.solo_needed > 0 &&
        options_.solo_needed <= options_.solo_kept)) {
    throw std::invalid_argument("ShareController: inconsistent options");
  }
}

void ShareController::record(TurnClientId decoder, double seconds, bool next_to_prefill,
                             double now_s) {
  Decoder& d = decoders_[decoder];
  d.seen_at_s = now_s;
  if (!next_to_prefill) {
    if (now_s - d.last_solo_at_s() > options_.solo_stale_s) d.solo_since_stale = 0;
    ++d.solo_since_stale;
    d.solo.push_back({now_s, seconds});
    // Kept: the last solo_kept of the last two stale periods (a cold start ages out).
    while (d.solo.size() > options_.solo_kept ||
           now_s - d.solo.front().at_s > 2 * options_.solo_stale_s) {
      d.solo.pop_front();
    }
    return;
  }
  if (d.solo.size() < options_.solo_needed) return;  // nothing to compare with yet
  d.shared.push_back(seconds);
  if (d.shared.size() >= options_.window) decide(now_s);
}

// Each decoder still decoding counts with its window so far when it holds at least half a
// window (decoders of different step times fill theirs at different paces), else with the
// slowdown of its last full one. Its reference is the lower quartile of its bursts alone:
// a burst alone can only be slowed (a kernel's first launch, a late host thread), never
// sped up, so the low end is the truer measure.
void ShareController::decide(double now_s) {
  double slowest = 0.0;
  for (auto& [id, d] : decoders_) {
    if (d.shared.size() * 2 >= options_.window) {
      std::vector<double> alone;
      for (const Decoder::Alone& a : d.solo) alone.push_back(a.seconds);
      d.slowdown = median(d.shared) / quantile(std::move(alone), 0.25);
    }
    if (now_s - d.seen_at_s < 1.0) slowest = std::max(slowest, d.slowdown);
  }
  last_slowdown_ = slowest;
  // A dead band below the target keeps the share from flapping between two steps.
  if (slowest > options_.target_slowdown) {
    share_ = std::max(options_.min_share, share_ - options_.step);
  } else if (slowest < options_.target_slowdown - 0.1) {
    share_ = std::min(options_.max_share, share_ + options_.step);
  }
  // Every window after a move is measured at the new share.
  for (auto& [id, d] : decoders_) d.shared.clear();
}

bool ShareController::wants_solo_bursts(double now_s, std::optional<TurnClientId> asking) const {
  return std::any_of(decoders_.begin(), decoders_.end(), [&](const auto& entry) {
    if (entry.first == asking) return false;
    const Decoder& d = entry.second;
    const bool recent = now_s - d.seen_at_s < 1.0;
    const bool fresh = now_s - d.last_solo_at_s() <= options_.solo_stale_s &&
                       d.solo_since_stale >= options_.solo_needed;
    return recent && !fresh;
  });
}

}  // namespace baton
