#include "baton/turn/share_controller.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

// A decoder whose burst next to a prefill takes `alone * (1 + k * share)`: the more of the
// chip prefill gets, the slower the decoder (a model of the bandwidth it loses).
struct Chip {
  double alone_s = 0.005;
  double k = 1.0;
  double burst(double share) const { return alone_s * (1.0 + k * share); }
};

void feed_alone(ShareController& c, TurnClientId id, double seconds, double& now, int n = 3) {
  for (int i = 0; i < n; ++i) c.record(id, seconds, false, now += seconds);
}

TEST(ShareController, NothingMovesWithoutAReferenceAlone) {
  ShareController c({});
  double now = 0;
  for (int i = 0; i < 100; ++i) c.record(0, 0.1, true, now += 0.1);
  EXPECT_EQ(c.share(), 0.5);
  EXPECT_TRUE(c.wants_solo_bursts(now));
}

TEST(ShareController, SettlesWhereTheDecoderMeetsItsTarget) {
  const Chip chip;  // slowdown 1 + share: 1.2x at share 0.2, in the dead band at 0.125
  ShareController c({});
  double now = 0;
  feed_alone(c, 0, chip.alone_s, now);
  EXPECT_FALSE(c.wants_solo_bursts(now));
  for (int i = 0; i < 16 * 20; ++i) c.record(0, chip.burst(c.share()), true, now += 0.005);
  // Down from 0.5 in steps of 1/16 until 1 + share <= 1.2: 0.1875.
  EXPECT_DOUBLE_EQ(c.share(), 0.1875);
  EXPECT_NEAR(c.last_slowdown(), 1.1875, 1e-9);
}

TEST(ShareController, GivesPrefillMoreWhileTheDecoderHasRoom) {
  const Chip chip{.alone_s = 0.005, .k = 0.1};  // barely slowed: prefill may take the most allowed
  ShareController c({});
  double now = 0;
  feed_alone(c, 0, chip.alone_s, now);
  for (int i = 0; i < 16 * 20; ++i) c.record(0, chip.burst(c.share()), true, now += 0.005);
  EXPECT_DOUBLE_EQ(c.share(), 7.0 / 8);
}

TEST(ShareController, TheSlowestRecentDecoderDecides) {
  ShareController c({});
  double now = 0;
  feed_alone(c, 0, 0.005, now);
  feed_alone(c, 1, 0.005, now);
  for (int i = 0; i < 16; ++i) {
    c.record(0, 0.005, true, now += 0.001);  // no slower than alone
    c.record(1, 0.010, true, now += 0.001);  // twice as slow
  }
  EXPECT_DOUBLE_EQ(c.share(), 0.5 - 1.0 / 16);
  EXPECT_NEAR(c.last_slowdown(), 2.0, 1e-9);
  // Decoder 1 stops decoding; a second later only decoder 0 counts and the share grows.
  now += 2.0;
  feed_alone(c, 0, 0.005, now);
  for (int i = 0; i < 16; ++i) c.record(0, 0.005, true, now += 0.001);
  EXPECT_DOUBLE_EQ(c.share(), 0.5);
}

TEST(ShareController, AStaleReferenceIsMeasuredAgain) {
  ShareController c({});
  double now = 0;
  feed_alone(c, 0, 0.005, now);
  c.record(0, 0.006, true, now += 11.0);  // seen now; its reference is 11 s old
  EXPECT_TRUE(c.wants_solo_bursts(now));
  feed_alone(c, 0, 0.005, now, 2);
  EXPECT_TRUE(c.wants_solo_bursts(now));  // three fresh bursts alone are needed
  feed_alone(c, 0, 0.005, now, 1);
  EXPECT_FALSE(c.wants_solo_bursts(now));
  EXPECT_FALSE(c.wants_solo_bursts(now + 2.0));  // a decoder gone quiet wants nothing
}

TEST(ShareController, SlowFirstBurstsAloneDoNotHidePrefillsCost) {
  // The first bursts of a run are slow (kernels load): 10x. Next to a prefill the decoder
  // is 1.5x slower than alone; the share must go down, not up.
  ShareController c({});
  double now = 0;
  feed_alone(c, 0, 0.050, now);
  feed_alone(c, 0, 0.005, now, 6);
  for (int i = 0; i < 16; ++i) c.record(0, 0.0075, true, now += 0.0075);
  EXPECT_DOUBLE_EQ(c.share(), 0.5 - 1.0 / 16);
  EXPECT_NEAR(c.last_slowdown(), 1.5, 1e-9);
  // Twenty seconds on, the cold bursts have aged out of the reference altogether.
  now += 20.0;
  feed_alone(c, 0, 0.005, now);
  for (int i = 0; i < 16; ++i) c.record(0, 0.0075, true, now += 0.0075);
  EXPECT_NEAR(c.last_slowdown(), 1.5, 1e-9);
}

TEST(ShareController, AnEngineNeverWaitsForItsOwnBurstsAlone) {
  ShareController c({});
  double now = 0;
  c.record(0, 0.006, true, now += 0.006);  // decoder 0 has no reference alone
  EXPECT_TRUE(c.wants_solo_bursts(now));
  EXPECT_TRUE(c.wants_solo_bursts(now, 1));
  // Its own prefill burst would wait for decode bursts it cannot run while it waits.
  EXPECT_FALSE(c.wants_solo_bursts(now, 0));
}

TEST(ShareController, RefusesInconsistentOptions) {
  ShareController::Options o;
  o.start = 0.95;  // above max_share
  EXPECT_THROW(ShareController{o}, std::invalid_argument);
}

}  // namespace
}  // namespace baton
