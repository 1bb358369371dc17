// PieceClock: pieces queued one behind another on a real (CPU) stream, each timed by the
// stream's device time once its buffer completes; pieces that complete together are
// taken together with their time summed.
#include "baton/engine/llm/piece_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "baton/gpu/cpu/cpu_device.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

// An op that keeps the stream busy for `ms`.
Op busy_for(int ms) {
  return Op{.run = [ms] { std::this_thread::sleep_for(milliseconds(ms)); }, .bytes = 0};
}

std::vector<PieceSegment> piece_of(int first, int count) {
  return {{.part = 0, .kind = LayerPart::rows, .first = first, .count = count}};
}

TEST(PieceClock, APieceQueuedBehindAnotherIsTimedFromTheOneBeforeItsEnd) {
  cpu::CpuDevice device{CommitLimits{}};
  const std::unique_ptr<Stream> stream = device.create_stream("prefill");
  PieceClock clock(*stream);
  stream->encode(busy_for(40));
  stream->commit();
  clock.committed(piece_of(0, 32));
  stream->encode(busy_for(20));
  stream->commit();
  clock.committed(piece_of(32, 32));
  EXPECT_EQ(clock.pending(), 2u);

  stream->wait_in_flight(1);
  const PieceClock::Completed first = clock.take_completed();
  ASSERT_EQ(first.pieces, 1u);
  ASSERT_EQ(first.segments.size(), 1u);
  EXPECT_EQ(first.segments[0].first, 0);
  EXPECT_GE(first.ms, 40.0);

  stream->wait_idle();
  const PieceClock::Completed second = clock.take_completed();
  ASSERT_EQ(second.pieces, 1u);
  EXPECT_EQ(second.segments[0].first, 32);
  // From the first piece's end, not from its own commit (40 ms before that end).
  EXPECT_GE(second.ms, 20.0);
  EXPECT_LT(second.ms, first.ms + 20.0);
  EXPECT_EQ(clock.pending(), 0u);
  EXPECT_EQ(clock.take_completed().pieces, 0u);
}

TEST(PieceClock, PiecesThatCompletedTogetherAreTakenTogether) {
  cpu::CpuDevice device{CommitLimits{}};
  const std::unique_ptr<Stream> stream = device.create_stream("prefill");
  // Device time before the clock starts is not the pieces'.
  stream->encode(busy_for(30));
  stream->synchronize();
  PieceClock clock(*stream);
  for (int i = 0; i < 3; ++i) {
    stream->encode(busy_for(10));
    stream->commit();
    clock.committed(piece_of(i * 8, 8));
  }
  stream->wait_idle();
  const PieceClock::Completed done = clock.take_completed();
  ASSERT_EQ(done.pieces, 3u);
  ASSERT_EQ(done.segments.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(done.segments[static_cast<std::size_t>(i)].first, i * 8);
  EXPECT_GE(done.ms, 30.0);
  EXPECT_LT(done.ms, 60.0 + 30.0);  // not the 30 ms before the clock
}

}  // namespace
}  // namespace baton
