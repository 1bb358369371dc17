// KV caches sized from the device's memory ("auto"): the arithmetic against hand-computed
// figures, the ceiling and the floor, the even split between models still to be sized, and
// that loads at once (real threads) never hand out the same free memory twice.
#include "baton/server/models/kv_sizing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "baton/server/config/serve_config.h"

namespace baton {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// An 8B-shaped model: 128 KiB of bf16 keys and values a token, 16 GB of weights.
KvDemand eight_b(const std::string& name, std::uint64_t context = 8192, int max_batch = 64) {
  return KvDemand{.model = name,
                  .weight_bytes = 16 * kGiB,
                  .bytes_per_token = 128 * 1024,
                  .context_tokens = context,
                  .max_batch = max_batch};
}

TEST(KvSizing, TakesTheFractionLessWhatIsInUseAndItsWeights) {
  // 100 GiB card, 10 GiB used by others: 90 - 10 - 16 = 64 GiB left at 0.9.
  const DeviceMemory memory{.total_bytes = 100 * kGiB, .free_bytes = 90 * kGiB};
  const KvSize size = size_kv_budget(memory, 0.9, eight_b("chat", 8192, 1024), 1, 0);
  EXPECT_EQ(size.budget_bytes, 64 * kGiB);
  EXPECT_NE(size.how.find("auto: 0.9 of 107.4 GB, 10.7 GB in use, 17.2 GB of weights"),
            std::string::npos)
      << size.how;
}

TEST(KvSizing, NeverMoreThanMaxBatchSequencesOfItsContext) {
  const DeviceMemory memory{.total_bytes = 100 * kGiB, .free_bytes = 100 * kGiB};
  // 4 sequences of 1024 tokens at 128 KiB: 512 MiB, far below what is free.
  const KvSize size = size_kv_budget(memory, 0.9, eight_b("chat", 1024, 4), 1, 0);
  EXPECT_EQ(size.budget_bytes, 512u << 20);
  EXPECT_NE(size.how.find("capped at max_batch x context (4 x 1024 tokens)"), std::string::npos)
      << size.how;
}

TEST(KvSizing, SplitsWhatIsLeftEvenlyBetweenTheModelsStillToBeSized) {
  const DeviceMemory memory{.total_bytes = 100 * kGiB, .free_bytes = 100 * kGiB};
  // The other model's 8 GiB of weights are not on the card yet: (90 - 16 - 8) / 2.
  const KvSize size = size_kv_budget(memory, 0.9, eight_b("chat", 8192, 1024), 2, 8 * kGiB);
  EXPECT_EQ(size.budget_bytes, 33 * kGiB);
  EXPECT_NE(size.how.find("shared by 2 models (8.6 GB of their weights to come)"),
            std::string::npos)
      << size.how;
}

TEST(KvSizing, LessThanOneSequenceIsAConfigErrorWithTheNumbers) {
  // 20 GiB card with 4 GiB free: nothing is left after the weights.
  const DeviceMemory memory{.total_bytes = 20 * kGiB, .free_bytes = 4 * kGiB};
  try {
    size_kv_budget(memory, 0.9, eight_b("chat"), 1, 0);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("models.chat: kv_budget_mb \"auto\" leaves 0.0 GB for its KV cache"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("less than one sequence of 8192 tokens needs (1.1 GB)"), std::string::npos)
        << what;
  }
}

TEST(KvSizer, EachLoadLeavesTheUnloadedModelsTheirShareAndAnUnloadGivesItBack) {
  KvSizer sizer({{"a", 16 * kGiB}, {"b", 16 * kGiB}}, 0.5);
  const DeviceMemory empty{.total_bytes = 100 * kGiB, .free_bytes = 100 * kGiB};
  // Each Sized is a temporary: its hold goes at the end of the statement.
  EXPECT_EQ(sizer.size([&] { return empty; }, eight_b("a", 8192, 1024)).size.budget_bytes,
            9 * kGiB);  // (50 - 16 - 16) / 2: b's weights and cache still to come
  // b loads once a's weights and cache hold 25 GiB of the card: 50 - 25 - 16, alone.
  const DeviceMemory after_a{.total_bytes = 100 * kGiB, .free_bytes = 75 * kGiB};
  EXPECT_EQ(sizer.size([&] { return after_a; }, eight_b("b", 8192, 1024)).size.budget_bytes,
            9 * kGiB);
  sizer.release("a");
  sizer.release("b");
  EXPECT_EQ(sizer.size([&] { return empty; }, eight_b("b", 8192, 1024)).size.budget_bytes,
            9 * kGiB);  // a is to be sized again: its share is left for it
}

// Loads at once: each allocates its size before it drops the hold, as load_served_model
// does; together they never take more than the fraction of the card.
TEST(KvSizer, LoadsAtOnceNeverCountTheSameFreeMemory) {
  for (int round = 0; round < 50; ++round) {
    constexpr int kModels = 6;
    std::map<std::string, std::uint64_t> weights;
    for (int i = 0; i < kModels; ++i) weights["m" + std::to_string(i)] = 16 * kGiB;
    KvSizer sizer(weights, 0.9);
    std::atomic<std::uint64_t> used{0};
    const std::uint64_t total = 200 * kGiB;
    std::vector<std::thread> loads;
    for (const auto& [name, bytes] : weights) {
      loads.emplace_back([&, name = name] {
        KvSizer::Sized sized = sizer.size(
            [&] { return DeviceMemory{.total_bytes = total, .free_bytes = total - used.load()}; },
            eight_b(name, 8192, 1024));
        used += 16 * kGiB + sized.size.budget_bytes;  // its weights and cache, then the hold goes
      });
    }
    for (std::thread& t : loads) t.join();
    // Each takes (180 - 6 x 16) / 6 = 14 GiB whatever the order: 180 GiB together.
    EXPECT_LE(used.load(), static_cast<std::uint64_t>(0.9 * static_cast<double>(total)));
    EXPECT_GT(used.load(), static_cast<std::uint64_t>(0.89 * static_cast<double>(total)));
  }
}

}  // namespace
}  // namespace baton
