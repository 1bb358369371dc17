// PieceClock: the device time of prefill pieces that run one behind another on an engine's
// stream. Each piece is one committed buffer; the engine queues the next piece before the
// one ahead has finished (so that the device never waits for the host between them), so a
// piece's time is not the host's wait for it but the stream's device time (Stream::
// device_ns: each buffer from the later of its commit and the previous completion).
// Thread-safety: none; the engine thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "baton/engine/llm/layer_pieces.h"
#include "baton/gpu/stream.h"

namespace baton {

class PieceClock {
 public:
  // `stream` must have nothing in flight: its device time from here on is the pieces'.
  explicit PieceClock(const Stream& stream);

  // The piece just committed to the stream as one buffer.
  void committed(std::vector<PieceSegment> piece);

  struct Completed {
    std::vector<PieceSegment> segments;  // the completed pieces' segments, in order
    std::size_t pieces = 0;
    double ms = 0.0;  // their device time together
  };
  // The pieces that completed since the last call (none: pieces == 0).
  Completed take_completed();
  // Pieces committed and not yet taken.
  std::size_t pending() const { return queued_.size(); }

 private:
  struct Queued {
    std::uint64_t buffer = 0;
    std::vector<PieceSegment> piece;
  };
  const Stream& stream_;
  std::deque<Queued> queued_;
  std::int64_t device_ns_ = 0;  // the stream's device time as of the last completed piece
};

}  // namespace baton
