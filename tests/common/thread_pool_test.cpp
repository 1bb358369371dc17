// ThreadPool with real threads (also run under ThreadSanitizer): every index runs exactly
// once, errors come back to the caller, and concurrent callers each get their own loop.
#include "baton/common/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace baton {
namespace {

TEST(ThreadPool, RunsEveryIndexExactlyOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.threads(), 4);
  for (const std::size_t count : {1u, 3u, 1000u}) {
    std::vector<std::atomic<int>> runs(count);
    pool.parallel_for(count, [&](std::size_t i) { runs[i].fetch_add(1); });
    for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(runs[i].load(), 1) << i;
  }
  pool.parallel_for(0, [](std::size_t) { FAIL() << "no items, no calls"; });
}

TEST(ThreadPool, RethrowsTheFirstErrorAfterEveryItemRan) {
  ThreadPool pool(3);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallel_for(50,
                                 [&](std::size_t i) {
                                   ran.fetch_add(1);
                                   if (i % 10 == 3) throw std::runtime_error("item failed");
                                 }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 50);
  std::atomic<int> after{0};  // the pool still works
  pool.parallel_for(7, [&](std::size_t) { after.fetch_add(1); });
  EXPECT_EQ(after.load(), 7);
}

TEST(ThreadPool, ConcurrentCallersEachGetTheirOwnLoop) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::vector<long> sums(3, 0);
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round) {
        std::atomic<long> sum{0};
        pool.parallel_for(100, [&](std::size_t i) { sum.fetch_add(static_cast<long>(i)); });
        sums[c] += sum.load();
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (const long s : sums) EXPECT_EQ(s, 20 * 4950);
}

// Thousands of tiny loops back to back: the hand-over between loops (spinning threads
// joining a loop that may already be over) must neither lose nor repeat an item.
TEST(ThreadPool, BackToBackTinyLoopsRunEveryItemOnce) {
  ThreadPool pool(3);
  long total = 0;
  for (int round = 0; round < 5000; ++round) {
    std::atomic<long> sum{0};
    pool.parallel_for(static_cast<std::size_t>(round % 4 + 1),
                      [&](std::size_t i) { sum.fetch_add(static_cast<long>(i) + 1); });
    total += sum.load();
  }
  long expected = 0;
  for (int round = 0; round < 5000; ++round) {
    const long n = round % 4 + 1;
    expected += n * (n + 1) / 2;
  }
  EXPECT_EQ(total, expected);
}

// An idle pool sleeps: after its last loop every started thread is asleep within the spin
// time (plus scheduling slack), and wakes for the next loop.
TEST(ThreadPool, SleepsWhenIdleAndWakesForTheNextLoop) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    std::atomic<int> ran{0};
    pool.parallel_for(64, [&](std::size_t) { ran.fetch_add(1); });
    EXPECT_EQ(ran.load(), 64);
    // A thread that the loop woke but that has not run yet (the others did the loop's
    // items) still counts as asleep, then wakes, spins and sleeps again: all asleep on two
    // readings 20 ms apart (the spin is 50 us). One reading failed once under TSan.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    bool asleep = false;
    while (!asleep && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (pool.sleeping() != 2) continue;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      asleep = pool.sleeping() == 2;
    }
    EXPECT_TRUE(asleep) << "round " << round << ": " << pool.sleeping() << " of 2 asleep";
  }
}

TEST(ThreadPool, RefusesZeroThreads) { EXPECT_THROW(ThreadPool(0), std::invalid_argument); }

}  // namespace
}  // namespace baton
