#include "baton/analysis/event_classes.h"

#include <gtest/gtest.h>

#include "baton/watchdog/fault_event.h"

namespace baton {
namespace {

TEST(EventClasses, AreTheLedgersNamesOfEveryFaultKind) {
  for (FaultKind kind : {FaultKind::hang, FaultKind::timeout, FaultKind::submissions_ignored,
                         FaultKind::other, FaultKind::slowdown}) {
    EXPECT_EQ(event_class(to_string(kind)), to_string(kind));
  }
  EXPECT_EQ(known_event_classes(), "hang, timeout, submissions_ignored, other or slowdown");
}

TEST(EventClasses, MatchInAnyCaseAndNothingElse) {
  EXPECT_EQ(event_class("HANG"), "hang");
  EXPECT_EQ(event_class("Submissions_Ignored"), "submissions_ignored");
  EXPECT_EQ(event_class("hangs"), std::nullopt);
  EXPECT_EQ(event_class(" hang"), std::nullopt);
  EXPECT_EQ(event_class(""), std::nullopt);
}

}  // namespace
}  // namespace baton
