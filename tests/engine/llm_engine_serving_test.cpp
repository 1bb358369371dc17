// What a server needs of LlmEngine, on the tiny qwen2 model with real threads: a client
// cancels a request (running, waiting for KV blocks, or not yet picked up) and it leaves
// within one step, its blocks back in the pool, while the rest of the batch still gets
// exactly its greedy tokens; a full queue refuses at once (QueueFull); the context limits
// prompt and max_tokens (ContextLengthExceeded); top logprobs and the OpenAI penalties
// reach every token.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <future>
#include <mutex>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "baton/engine/request.h"
#include "baton/host/make_runner.h"
#include "engine/llm_engine_fixture.h"
#include "test_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::greedy_alone;
using testing::greedy_request;
using testing::kModels;
using testing::prompt_of;
using LlmEngineServingTest = testing::LlmEngineTest;

// A point in a request's token sink where the engine thread waits for the test: the
// engine is then parked between two known steps, whatever the machine's speed.
class Pause {
 public:
  // Engine thread, from a sink: says it is here, then waits to be let go.
  void arrive() {
    arrived_.set_value();
    resumed_.wait();
  }
  // Test threads.
  bool wait_arrived() { return arrived_future_.wait_for(30s) == std::future_status::ready; }
  void resume() { resume_.set_value(); }

 private:
  std::promise<void> arrived_, resume_;
  std::future<void> arrived_future_ = arrived_.get_future();
  std::shared_future<void> resumed_ = resume_.get_future().share();
};

// KV for a few hundred blocks: ample for these tests.
constexpr std::size_t kSmallKvBudget = std::size_t{4} << 20;

bool engine_drained(const LlmEngine& engine) {
  const LlmEngineStats s = engine.stats();
  return s.kv_blocks_available == s.kv_blocks_total && s.running == 0 && s.queued == 0;
}

// Each cancelled request is cancelled by a thread of its own while the engine is inside
// that request's sink at token 3 + i; the next loop turn drops it, so it sees no more.
TEST_F(LlmEngineServingTest, ARunningRequestCancelledLeavesWithinOneStepAndFreesItsBlocks) {
  LlmBatchOptions options;
  options.block_tokens = 8;
  options.kv_budget_bytes = kSmallKvBudget;
  start(options);
  const int before = engine_->stats().kv_blocks_available;
  struct Cancelled {
    std::stop_source source;
    Pause pause;
    std::atomic<int> tokens{0};
    std::future<GenerationResult> future;
  };
  constexpr int kEach = 3;
  std::array<Cancelled, kEach> cancelled;
  std::vector<std::future<GenerationResult>> kept;
  for (int i = 0; i < kEach; ++i) {
    Cancelled& c = cancelled[static_cast<std::size_t>(i)];
    GenerationRequest r = greedy_request(100 + i, prompt_of(20 + i, i), 200);
    r.cancel = c.source.get_token();
    r.on_token = [&c, i](const TokenDelta&) {
      if (++c.tokens == 3 + i) c.pause.arrive();
    };
    c.future = engine_->submit(std::move(r));
    kept.push_back(engine_->submit(greedy_request(i, prompt_of(15 + i, 10 + i), 12 + 4 * i)));
  }
  std::vector<std::thread> cancellers;
  for (Cancelled& c : cancelled) {
    cancellers.emplace_back([&c] {
      EXPECT_TRUE(c.pause.wait_arrived());
      c.source.request_stop();
      c.pause.resume();
    });
  }
  for (std::thread& t : cancellers) t.join();
  for (int i = 0; i < kEach; ++i) {
    Cancelled& c = cancelled[static_cast<std::size_t>(i)];
    EXPECT_THROW(c.future.get(), RequestCancelled) << i;
    EXPECT_EQ(c.tokens.load(), 3 + i) << "request " << i << " went on after its cancel";
    EXPECT_EQ(kept[i].get().tokens, greedy_alone(model_, prompt_of(15 + i, 10 + i), 12 + 4 * i))
        << "kept request " << i;
  }
  ASSERT_TRUE(eventually([&] { return engine_drained(*engine_); }));
  const LlmEngineStats stats = engine_->stats();
  EXPECT_EQ(stats.kv_blocks_available, before);
  EXPECT_EQ(stats.requests_cancelled, static_cast<std::uint64_t>(kEach));
  EXPECT_EQ(stats.requests_done, static_cast<std::uint64_t>(kEach));
}

// The engine is parked in A's sink; C is cancelled still in the inbox, B while it waits
// for KV blocks (one request fits at a time). Neither is ever prefilled; D still runs.
TEST_F(LlmEngineServingTest, RequestsCancelledWhileQueuedLeaveWithoutRunning) {
  LlmBatchOptions options;
  options.block_tokens = 8;
  options.kv_budget_bytes = KvBlockPool::block_bytes(model_.config(), 8) * 6;  // 5 blocks each
  start(options);
  Pause first, second;
  GenerationRequest a = greedy_request(0, prompt_of(30, 0), 10);
  std::atomic<int> a_tokens{0};
  a.on_token = [&](const TokenDelta&) {
    const int n = ++a_tokens;
    if (n == 1) first.arrive();
    if (n == 2) second.arrive();
  };
  std::atomic<int> cancelled_tokens{0};
  std::stop_source in_inbox, waiting_for_kv;
  const auto cancellable = [&](std::uint64_t id, const std::stop_source& source) {
    GenerationRequest r = greedy_request(id, prompt_of(30, static_cast<int>(id)), 10);
    r.cancel = source.get_token();
    r.on_token = [&](const TokenDelta&) { ++cancelled_tokens; };
    return r;
  };
  std::future<GenerationResult> fa = engine_->submit(std::move(a));
  EXPECT_TRUE(first.wait_arrived());
  std::future<GenerationResult> fb = engine_->submit(cancellable(1, waiting_for_kv));
  std::future<GenerationResult> fc = engine_->submit(cancellable(2, in_inbox));
  std::future<GenerationResult> fd = engine_->submit(greedy_request(3, prompt_of(30, 3), 10));
  EXPECT_EQ(engine_->stats().queued, 3u);
  in_inbox.request_stop();
  first.resume();
  EXPECT_TRUE(second.wait_arrived());  // one step on: C has left, B and D wait for blocks
  LlmEngineStats stats = engine_->stats();
  EXPECT_EQ(stats.requests_cancelled, 1u);
  EXPECT_EQ(stats.waiting_for_kv, 2u);
  EXPECT_EQ(stats.queued, 2u);
  waiting_for_kv.request_stop();
  second.resume();
  EXPECT_THROW(fc.get(), RequestCancelled);
  EXPECT_THROW(fb.get(), RequestCancelled);
  EXPECT_EQ(fa.get().tokens, greedy_alone(model_, prompt_of(30, 0), 10));
  EXPECT_EQ(fd.get().tokens, greedy_alone(model_, prompt_of(30, 3), 10));
  ASSERT_TRUE(eventually([&] { return engine_drained(*engine_); }));
  stats = engine_->stats();
  EXPECT_EQ(cancelled_tokens.load(), 0);
  EXPECT_EQ(stats.counters.prefill_tokens, 60u);  // A's and D's prompts only
  EXPECT_EQ(stats.requests_cancelled, 2u);
}

// No synchronisation with the engine: a thread cancels half the requests at random
// moments (some still waiting for a batch slot, some about to finish or finished). Every
// future holds a result or RequestCancelled, every result is the request's greedy tokens
// alone, and no block is left behind. Run it with --gtest_repeat (and under TSan).
TEST_F(LlmEngineServingTest, CancellingAtAnyMomentLeavesNoBlockBehind) {
  LlmBatchOptions options;
  options.block_tokens = 8;
  options.kv_budget_bytes = kSmallKvBudget;
  options.max_batch = 6;
  start(options);
  const int before = engine_->stats().kv_blocks_available;
  constexpr int kRequests = 12;
  struct Tracked {
    std::stop_source source;
    std::atomic<int> tokens{0};
    std::atomic<bool> finished{false};
    std::vector<TokenId> prompt;
    int max_tokens = 0;
    std::future<GenerationResult> future;
  };
  std::array<Tracked, kRequests> tracked;
  for (int i = 0; i < kRequests; ++i) {
    Tracked& t = tracked[static_cast<std::size_t>(i)];
    t.prompt = prompt_of(10 + 3 * i, i);
    t.max_tokens = 30 + 10 * (i % 4);
    GenerationRequest r = greedy_request(i, t.prompt, t.max_tokens);
    if (i % 2 == 0) r.cancel = t.source.get_token();
    r.on_token = [&t](const TokenDelta& d) {
      ++t.tokens;
      if (d.finish) t.finished = true;
    };
    t.future = engine_->submit(std::move(r));
  }
  const unsigned seed = std::random_device{}();  // new moments each run; printed on failure
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::thread canceller([&] {
    std::mt19937 rng(seed);
    for (int i = 0; i < kRequests; i += 2) {
      Tracked& t = tracked[static_cast<std::size_t>(i)];
      const int at = std::uniform_int_distribution<int>(0, t.max_tokens)(rng);
      EXPECT_TRUE(eventually([&] { return t.tokens.load() >= at || t.finished.load(); }));
      t.source.request_stop();
    }
  });
  canceller.join();
  int cancelled = 0;
  for (int i = 0; i < kRequests; ++i) {
    Tracked& t = tracked[static_cast<std::size_t>(i)];
    try {
      EXPECT_EQ(t.future.get().tokens, greedy_alone(model_, t.prompt, t.max_tokens)) << i;
    } catch (const RequestCancelled&) {
      EXPECT_EQ(i % 2, 0) << "request " << i << " was never cancelled";
      EXPECT_LT(t.tokens.load(), t.max_tokens);
      ++cancelled;
    }
  }
  std::printf("%d of %d cancel requests came in time\n", cancelled, kRequests / 2);
  ASSERT_TRUE(eventually([&] { return engine_drained(*engine_); }));
  const LlmEngineStats stats = engine_->stats();
  EXPECT_EQ(stats.kv_blocks_available, before);
  EXPECT_EQ(stats.requests_cancelled, static_cast<std::uint64_t>(cancelled));
  EXPECT_EQ(stats.requests_done + stats.requests_cancelled, static_cast<std::uint64_t>(kRequests));
}

TEST_F(LlmEngineServingTest, ARequestCancelledBeforeSubmitNeverQueues) {
  LlmBatchOptions options;
  options.kv_budget_bytes = kSmallKvBudget;
  start(options);
  std::stop_source source;
  source.request_stop();
  GenerationRequest r = greedy_request(1, prompt_of(10, 1), 5);
  r.cancel = source.get_token();
  EXPECT_THROW(engine_->submit(std::move(r)).get(), RequestCancelled);
  EXPECT_EQ(engine_->stats().queued, 0u);
}

// With A running (its sink parked), B and C fill a queue of 2; D is refused at once.
TEST_F(LlmEngineServingTest, BeyondTheQueueLimitASubmitIsRefusedWithQueueFull) {
  LlmBatchOptions options;
  options.queue_limit = 2;
  start(options);
  Pause parked;
  GenerationRequest a = greedy_request(0, prompt_of(10, 0), 4);
  std::atomic<int> a_tokens{0};
  a.on_token = [&](const TokenDelta&) {
    if (++a_tokens == 1) parked.arrive();
  };
  std::future<GenerationResult> fa = engine_->submit(std::move(a));
  EXPECT_TRUE(parked.wait_arrived());
  std::future<GenerationResult> fb = engine_->submit(greedy_request(1, prompt_of(10, 1), 4));
  std::future<GenerationResult> fc = engine_->submit(greedy_request(2, prompt_of(10, 2), 4));
  std::future<GenerationResult> fd = engine_->submit(greedy_request(3, prompt_of(10, 3), 4));
  EXPECT_EQ(fd.wait_for(0s), std::future_status::ready);
  try {
    fd.get();
    ADD_FAILURE() << "the third queued request was taken";
  } catch (const QueueFull& e) {
    EXPECT_EQ(e.retry_after_s(), 1);
    EXPECT_NE(std::string(e.what()).find("[engine llm]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(engine_->stats().queued, 2u);
  parked.resume();
  EXPECT_EQ(fa.get().tokens.size(), 4u);
  EXPECT_EQ(fb.get().tokens, greedy_alone(model_, prompt_of(10, 1), 4));
  EXPECT_EQ(fc.get().tokens, greedy_alone(model_, prompt_of(10, 2), 4));
  ASSERT_TRUE(eventually([&] { return engine_drained(*engine_); }));
  EXPECT_EQ(engine_->submit(greedy_request(4, prompt_of(10, 3), 4)).get().tokens.size(), 4u);
}

TEST_F(LlmEngineServingTest, AQueueLimitOfZeroRefusesNothing) {
  LlmBatchOptions options;
  options.queue_limit = 0;
  start(options);
  Pause parked;
  GenerationRequest a = greedy_request(0, prompt_of(10, 0), 2);
  std::atomic<int> a_tokens{0};
  a.on_token = [&](const TokenDelta&) {
    if (++a_tokens == 1) parked.arrive();
  };
  std::future<GenerationResult> fa = engine_->submit(std::move(a));
  EXPECT_TRUE(parked.wait_arrived());
  std::vector<std::future<GenerationResult>> many;
  for (int i = 0; i < 300; ++i)
    many.push_back(engine_->submit(greedy_request(i + 1, {5, 6, 7}, 1)));
  EXPECT_EQ(engine_->stats().queued, 300u);
  parked.resume();
  fa.get();
  for (auto& f : many) EXPECT_EQ(f.get().tokens.size(), 1u);
}

TEST_F(LlmEngineServingTest, TheContextLimitsThePromptAndAnExplicitMaxTokens) {
  LlmBatchOptions options;
  options.context_length = 64;
  start(options);
  EXPECT_EQ(engine_->context_length(), 64);
  EXPECT_EQ(engine_->stats().context_length, 64);
  try {  // the prompt alone leaves no room for a token
    engine_->submit(greedy_request(1, prompt_of(64, 1), 8)).get();
    ADD_FAILURE() << "a prompt as long as the context was taken";
  } catch (const ContextLengthExceeded& e) {
    EXPECT_EQ(e.context(), 64);
    EXPECT_EQ(e.prompt_tokens(), 64);
    EXPECT_EQ(e.max_tokens(), 1);
  }
  GenerationRequest too_long = greedy_request(2, prompt_of(60, 2), 10);
  too_long.params.max_tokens_explicit = true;
  try {
    engine_->submit(std::move(too_long)).get();
    ADD_FAILURE() << "an explicit max_tokens beyond the context was taken";
  } catch (const ContextLengthExceeded& e) {
    EXPECT_STREQ(e.what(),
                 "This model's maximum context length is 64 tokens. However, you requested 70 "
                 "tokens (60 in the prompt, 10 in the completion). Please reduce the length "
                 "of the prompt or completion.");
  }
  GenerationRequest fits = greedy_request(3, prompt_of(60, 2), 4);
  fits.params.max_tokens_explicit = true;
  EXPECT_EQ(engine_->submit(std::move(fits)).get().tokens,
            greedy_alone(model_, prompt_of(60, 2), 4));
  // Not set by the client: cut to what the context leaves.
  const GenerationResult cut = engine_->submit(greedy_request(4, prompt_of(60, 2), 10)).get();
  EXPECT_EQ(cut.tokens, greedy_alone(model_, prompt_of(60, 2), 4));
  EXPECT_EQ(cut.finish, FinishReason::length);
}

TEST(LlmEngineContext, AnEngineGetsAtMostTheModelsContext) {
  const LlamaModel model = LlamaModel::load(kModels / "qwen2");  // 256 positions
  cpu::CpuDevice device(CommitLimits{});
  const auto turn = make_turn(TurnOptions{}, device.default_stream());
  const auto context_of = [&](int context_length) {
    LlmBatchOptions options;
    options.context_length = context_length;
    return LlmEngine("llm", model, nullptr, options, device.create_stream("llm"), *turn,
                     cpu_runner_factory())
        .context_length();
  };
  EXPECT_EQ(context_of(0), 256);
  EXPECT_EQ(context_of(1000), 256);
  EXPECT_EQ(context_of(100), 100);
  EXPECT_THROW(context_of(-1), std::invalid_argument);
}

TEST_F(LlmEngineServingTest, TopLogprobsComeWithEveryTokenInTheDeltasAndTheResult) {
  start({});
  GenerationRequest r = greedy_request(1, prompt_of(20, 4), 6);
  r.params.sampling.top_logprobs = 3;
  std::mutex mu;
  std::vector<TokenDelta> deltas;
  r.on_token = [&](const TokenDelta& d) {
    std::lock_guard lock(mu);
    deltas.push_back(d);
  };
  const GenerationResult result = engine_->submit(std::move(r)).get();
  std::lock_guard lock(mu);
  ASSERT_EQ(result.top_logprobs.size(), result.tokens.size());
  ASSERT_EQ(deltas.size(), result.tokens.size());
  for (std::size_t i = 0; i < result.tokens.size(); ++i) {
    const std::vector<TopLogprob>& top = result.top_logprobs[i];
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].token, result.tokens[i]);  // greedy takes the most likely
    EXPECT_EQ(top[0].logprob, result.logprobs[i]);
    EXPECT_GE(top[0].logprob, top[1].logprob);
    EXPECT_GE(top[1].logprob, top[2].logprob);
    ASSERT_EQ(deltas[i].top.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(deltas[i].top[k].token, top[k].token);
      EXPECT_EQ(deltas[i].top[k].logprob, top[k].logprob);
    }
  }
  EXPECT_TRUE(engine_->submit(greedy_request(2, prompt_of(20, 4), 6)).get().top_logprobs.empty());
}

// Greedy with OpenAI's penalties over the generated tokens only, token by token through
// a KvCache: the reference the engine must match.
std::vector<TokenId> penalized_alone(const LlamaModel& model, const std::vector<TokenId>& prompt,
                                     int count, float presence, float frequency) {
  KvCache cache(model.config(), static_cast<int>(prompt.size()) + count);
  std::vector<float> logits = forward(model, prompt, cache);
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  std::vector<int> seen(vocab, 0);
  std::vector<TokenId> out;
  while (static_cast<int>(out.size()) < count) {
    std::vector<float> last(logits.end() - static_cast<std::ptrdiff_t>(vocab), logits.end());
    for (std::size_t j = 0; j < vocab; ++j) {
      if (seen[j] > 0) last[j] -= static_cast<float>(seen[j] * frequency + presence);
    }
    out.push_back(static_cast<TokenId>(std::max_element(last.begin(), last.end()) - last.begin()));
    ++seen[static_cast<std::size_t>(out.back())];
    if (static_cast<int>(out.size()) < count) logits = forward(model, {&out.back(), 1}, cache);
  }
  return out;
}

TEST_F(LlmEngineServingTest, PenaltiesApplyToTheGeneratedTokensOfEachRequest) {
  start({});
  const std::vector<TokenId> prompt = prompt_of(12, 7);
  GenerationRequest r = greedy_request(1, prompt, 24);
  r.params.sampling.presence_penalty = 1.5;
  r.params.sampling.frequency_penalty = 0.5;
  std::future<GenerationResult> penalized = engine_->submit(std::move(r));
  std::future<GenerationResult> plain = engine_->submit(greedy_request(2, prompt, 24));
  const std::vector<TokenId> reference = penalized_alone(model_, prompt, 24, 1.5f, 0.5f);
  EXPECT_EQ(penalized.get().tokens, reference);
  const std::vector<TokenId> unpenalized = plain.get().tokens;
  EXPECT_EQ(unpenalized, greedy_alone(model_, prompt, 24));
  EXPECT_NE(reference, unpenalized) << "the penalties changed nothing: a weak test";
}

}  // namespace
}  // namespace baton
