// Real LLM engines hosted by EngineHost, on the CPU backend with real threads: a hang
// injected during one model's decode is detected by the watchdog, blamed on that engine
// and recovered in place; its request fails with a retryable error while a second model
// in the same process keeps answering; every step reaches the burst observers.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "baton/engine/synthetic/synthetic_workload.h"
#include "baton/errors/error_kind.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/engine_host.h"
#include "baton/model/cpu/cpu_model_runner.h"
#include "test_data.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::kModels;

using namespace std::chrono_literals;

class BurstLog final : public BurstObserver {
 public:
  void burst_done(const BurstRecord& burst) override {
    std::lock_guard lock(mu_);
    bursts_.push_back(burst);
  }
  std::vector<BurstRecord> bursts() const {
    std::lock_guard lock(mu_);
    return bursts_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<BurstRecord> bursts_;
};

GenerationRequest greedy(std::uint64_t id, int max_tokens) {
  GenerationRequest r{.id = id, .prompt = {5, 17, 42, 99, 7, 3, 120, 64}, .params = {}};
  r.params.sampling.temperature = 0.0;
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  return r;
}

TEST(LlmHost, AHangInOneModelsDecodeIsRecoveredWhileAnotherModelAnswers) {
  const LlamaModel qwen = LlamaModel::load(kModels / "qwen2");
  const LlamaModel llama = LlamaModel::load(kModels / "llama");
  // A step commits one buffer per layer (2) and one for the logits: the 7th buffer is
  // the first of the third step, a decode step after the one-step prefill.
  testing::HangNth hooks(7);
  WatchdogOptions watchdog;
  watchdog.deadline = 3s;  // long enough that the other model surely answers meanwhile
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}, &hooks), TurnOptions{},
                  watchdog);
  BurstLog log;
  host.add_burst_observer(log);
  LlmEngine& hung = host.add_llm_engine("qwen", qwen, nullptr, {});
  LlmEngine& other = host.add_llm_engine("llama", llama, nullptr, {});
  hooks.only_on(hung.stream().id());

  std::future<GenerationResult> failing = hung.submit(greedy(1, 10));
  ASSERT_TRUE(testing::eventually([&] { return hooks.hangs.load() == 1; }));
  const GenerationResult answer = other.submit(greedy(2, 6)).get();
  EXPECT_EQ(answer.tokens.size(), 6u);
  EXPECT_EQ(failing.wait_for(0s), std::future_status::timeout) << "answered only after the reset";
  try {
    failing.get();
    FAIL() << "the hung request succeeded";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.error_class(), GpuErrorClass::hang);
    EXPECT_EQ(classify(e), ErrorKind::retryable);
  }
  const std::vector<FaultEvent> events = host.faults().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::hang);
  EXPECT_EQ(events[0].engine, "qwen");
  EXPECT_TRUE(testing::eventually([&] { return host.faults().recovered() == 1; }));

  // Recovered in place: the same engine answers the retry, token for token as the model
  // alone does (the other engine's answer to the same prompt on another model differs).
  const GenerationResult retry = hung.submit(greedy(3, 6)).get();
  const GenerationResult again = hung.submit(greedy(4, 6)).get();
  EXPECT_EQ(retry.tokens, again.tokens);
  EXPECT_EQ(retry.tokens.size(), 6u);
  host.stop();

  int failed_bursts = 0;
  int qwen_bursts = 0;
  int llama_bursts = 0;
  for (const BurstRecord& b : log.bursts()) {
    failed_bursts += b.ok ? 0 : 1;
    qwen_bursts += b.engine == "qwen" ? 1 : 0;
    llama_bursts += b.engine == "llama" ? 1 : 0;
    EXPECT_LE(b.asked, b.granted);
    EXPECT_LE(b.granted, b.done);
  }
  EXPECT_EQ(failed_bursts, 1);
  EXPECT_EQ(llama_bursts, 6);  // one prefill step, five decode steps
  EXPECT_GE(qwen_bursts, 3 + 6 + 6);
}

// An engine with a stream of its own (no seat keeps it) takes the stream with it when
// removed: the watchdog, polling every 50 ms, must read it no more (before the fix it
// did: ThreadSanitizer saw a heap-use-after-free in Watchdog::check).
TEST(LlmHost, ARemovedEnginesStreamLeavesTheWatchdog) {
  const LlamaModel llama = LlamaModel::load(kModels / "llama");
  WatchdogOptions watchdog;
  watchdog.deadline = 1s;  // polled every 50 ms; no real buffer comes near it
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}), TurnOptions{}, watchdog);
  LlmEngine& first = host.add_llm_engine("first", llama, nullptr, {});
  EXPECT_EQ(first.submit(greedy(1, 3)).get().tokens.size(), 3u);
  host.remove_engine(first);
  std::this_thread::sleep_for(300ms);  // six polls of the watchdog
  LlmEngine& second = host.add_llm_engine("second", llama, nullptr, {});
  EXPECT_EQ(second.submit(greedy(2, 3)).get().tokens.size(), 3u);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(host.faults().events().size(), 0u);
  host.stop();
}

// Under partition a real prefill chunk is sized for the prefill share while another
// engine runs: the runner is told 0.3 for such steps, and a decode step (with no prefill
// anywhere) is given the whole device.
TEST(LlmHost, UnderPartitionARealPrefillChunkIsGivenItsShare) {
  const LlamaModel qwen = LlamaModel::load(kModels / "qwen2");
  TurnOptions partition;
  partition.policy = TurnPolicy::partition;
  partition.prefill_share = 0.3;
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}), partition);
  LlmBatchOptions options;
  options.prefill_chunk = 8;  // a 128-token prompt is 16 prefill steps
  LlmEngine& llm = host.add_llm_engine("qwen", qwen, nullptr, options);
  Engine& busy = host.add_engine(
      "decode-1", std::make_unique<SyntheticWorkload>(SyntheticShape{.kind = BurstKind::decode,
                                                                     .layers = 8,
                                                                     .rows = 8,
                                                                     .k = 256,
                                                                     .n = 256,
                                                                     .ops_per_layer = 1}));
  std::jthread client([&busy](std::stop_token stop) {
    for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
      try {
        busy.submit(Request{.id = id, .bursts = 20}).get();
      } catch (const EngineStopped&) {
        return;
      }
    }
  });
  ASSERT_TRUE(testing::eventually([&] { return busy.stats().burst_ms.size() > 5; }));
  GenerationRequest r = greedy(1, 4);
  r.prompt.clear();
  for (int i = 0; i < 128; ++i) r.prompt.push_back((i * 7 + 3) % 250);
  EXPECT_EQ(llm.submit(std::move(r)).get().tokens.size(), 4u);
  client.request_stop();
  host.stop();

  int shared_prefills = 0;
  const auto& runner = dynamic_cast<const CpuModelRunner&>(llm.runner());
  for (const CpuModelRunner::ShareSeen& seen : runner.device_shares()) {
    EXPECT_TRUE(seen.share == 1.0 || (seen.prefills && seen.share == 0.3)) << seen.share;
    shared_prefills += seen.prefills && seen.share == 0.3 ? 1 : 0;
  }
  EXPECT_GT(shared_prefills, 0);
}

}  // namespace
}  // namespace baton
