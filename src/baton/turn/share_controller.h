// ShareController: picks partition's prefill share from measured decode bursts
// (`--prefill-share auto`). A decoder's burst next to a prefill is compared with its burst
// alone, and the share moves a step at a time so that the slowest decoder stays within
// `target_slowdown` of alone: less for prefill while a decoder is slower than that, more
// while every decoder has room. A decoder's bursts are compared whatever their batch and
// context, so it suits a decoder of steady load (a serving batch that swings from 1 to 64
// rows is not yet told apart). A decode step is bandwidth-bound and needs few SMs, so the
// share settles where the decoder has just enough of the chip and prefill the rest.
// Thread-safety: none; PartitionTurn calls it under its mutex.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "baton/turn/turn_metrics.h"

namespace baton {

class ShareController {
 public:
  struct Options {
    double start = 0.5;
    double target_slowdown = 1.2;  // of a decode burst next to a prefill, to alone
    double step = 1.0 / 16;
    double min_share = 1.0 / 8;
    double max_share = 7.0 / 8;
    std::size_t window = 16;    // bursts next to a prefill per decision
    std::size_t solo_kept = 32;  // bursts alone kept as a decoder's reference
    std::size_t solo_needed = 3;
    double solo_stale_s = 10.0;  // a reference older than this is measured again
  };

  explicit ShareController(Options options);
  // A decode burst of `seconds` that ran alone or next to a prefill, ending at `now_s`.
  void record(TurnClientId decoder, double seconds, bool next_to_prefill, double now_s);
  double share() const { return share_; }
  // Whether a decoder other than `asking` (an engine that also prefills cannot decode while
  // it waits) seen in the last second lacks a fresh reference alone: prefill bursts should
  // hold back briefly so that it gets a few bursts of the chip to itself.
  bool wants_solo_bursts(double now_s, std::optional<TurnClientId> asking = {}) const;
  // The last decision's slowest decoder: its burst next to a prefill over alone (0: none).
  double last_slowdown() const { return last_slowdown_; }

 private:
  struct Decoder {
    struct Alone {
      double at_s;     // when it ended
      double seconds;  // how long it took
    };
    std::deque<Alone> solo;  // newest last
    std::size_t solo_since_stale = 0;
    double last_solo_at_s() const { return solo.empty() ? -1e300 : solo.back().at_s; }
    std::vector<double> shared;  // this window's bursts next to a prefill
    double slowdown = 0.0;       // of its last full window
    double seen_at_s = -1e300;
  };
  void decide(double now_s);

  const Options options_;
  double share_;
  double last_slowdown_ = 0.0;
  std::map<TurnClientId, Decoder> decoders_;
};

}  // namespace baton
