#include "baton/engine/llm/piece_clock.h"

#include <utility>

namespace baton {

PieceClock::PieceClock(const Stream& stream)
    : stream_(stream), device_ns_(stream.stats().device_ns) {}

void PieceClock::committed(std::vector<PieceSegment> piece) {
  // Buffers are numbered from 1 in commit order: the last committed is the count.
  queued_.push_back({.buffer = stream_.stats().committed, .piece = std::move(piece)});
}

PieceClock::Completed PieceClock::take_completed() {
  const StreamStats now = stream_.stats();  // completed and device_ns read together
  Completed done;
  while (!queued_.empty() && queued_.front().buffer <= now.completed) {
    std::vector<PieceSegment>& piece = queued_.front().piece;
    done.segments.insert(done.segments.end(), piece.begin(), piece.end());
    ++done.pieces;
    queued_.pop_front();
  }
  if (done.pieces == 0) return done;
  done.ms = static_cast<double>(now.device_ns - device_ns_) / 1e6;
  device_ns_ = now.device_ns;
  return done;
}

}  // namespace baton
