// The start gate with real threads standing in for the children: nobody starts before
// every one is ready, all start once the gate opens, and either side gives up in time.
#include "baton/repro/start_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"

namespace baton {
namespace start_gate_test {
namespace {

using std::chrono::milliseconds;

TEST(StartGate, NobodyStartsBeforeEveryChildIsReadyThenAllDo) {
  const baton::testing::TempDir dir;
  std::atomic<int> started{0};
  const auto child = [&] {
    wait_at_start_gate(dir.path(), milliseconds(30'000));
    started.fetch_add(1);
  };
  std::vector<std::jthread> children;
  children.emplace_back(child);
  children.emplace_back(child);
  // Two of three are ready at most: the parent gives up, and nobody has started.
  EXPECT_FALSE(open_start_gate(
      dir.path(), 3, [] { return false; }, milliseconds(200)));
  EXPECT_EQ(started.load(), 0);
  children.emplace_back(child);
  EXPECT_TRUE(open_start_gate(
      dir.path(), 3, [] { return false; }, milliseconds(30'000)));
  children.clear();  // joins
  EXPECT_EQ(started.load(), 3);
}

TEST(StartGate, TheParentStopsWaitingWhenAChildGaveUp) {
  const baton::testing::TempDir dir;
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_FALSE(open_start_gate(
      dir.path(), 1, [] { return true; }, milliseconds(30'000)));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, milliseconds(10'000));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "open"));
}

TEST(StartGate, AChildWhoseGateNeverOpensFailsNamingTheFolder) {
  const baton::testing::TempDir dir;
  try {
    wait_at_start_gate(dir.path(), milliseconds(50));
    FAIL() << "returned without an open gate";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace start_gate_test
}  // namespace baton
