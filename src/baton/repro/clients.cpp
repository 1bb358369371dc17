#include "baton/repro/clients.h"

#include <random>
#include <thread>

#include "baton/engine/request.h"
#include "baton/gpu/gpu_error.h"

namespace baton {
namespace {

std::vector<TokenId> random_tokens(std::mt19937_64& rng, std::size_t count, std::size_t vocab) {
  std::uniform_int_distribution<TokenId> token(0, static_cast<TokenId>(vocab - 1));
  std::vector<TokenId> tokens(count);
  for (TokenId& t : tokens) t = token(rng);
  return tokens;
}

enum class Outcome { answered, failed, stopped };

// Waits for one request. A request that failed with a GpuError is counted by its engine.
template <typename Future>
Outcome wait_for(Future future) {
  try {
    future.get();
  } catch (const EngineStopped&) {
    return Outcome::stopped;
  } catch (const GpuError&) {
    return Outcome::failed;
  }
  return Outcome::answered;
}

// False once the engine has stopped; after a failure the client sends the next request, as
// a retrying one would.
template <typename Future>
bool answered(Future future, ClientTally& tally) {
  const Outcome outcome = wait_for(std::move(future));
  if (outcome == Outcome::failed) ++tally.failed;
  return outcome != Outcome::stopped;
}

void sleep_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

ClientTally drive(Engine& engine, std::uint64_t seed, std::stop_token stop) {
  ClientTally tally;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> decode_tokens(16, 64);
  std::exponential_distribution<double> embed_gap_ms(1.0 / 20.0);
  for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
    Request request{.id = id, .bursts = 1};
    if (engine.kind() == BurstKind::decode) request.bursts = decode_tokens(rng);
    if (engine.kind() == BurstKind::embed) sleep_ms(embed_gap_ms(rng));
    if (!answered(engine.submit(request), tally)) break;
  }
  return tally;
}

ClientTally drive_llm(LlmEngine& engine, const LlmLoad& load, std::uint64_t seed,
                      std::stop_token stop) {
  ClientTally tally;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> decode_tokens(16, static_cast<int>(kMaxGeneratedTokens));
  std::vector<TokenId> prompt;
  int max_tokens = 0;
  Outcome last = Outcome::answered;
  for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
    if (load.retry_failed && last == Outcome::failed) {
      ++tally.retried;
    } else {
      prompt = random_tokens(rng, load.prompt_tokens, load.vocab);
      max_tokens = decode_tokens(rng);
    }
    GenerationRequest request{.id = id, .prompt = prompt, .params = {}, .on_token = {}};
    request.params.sampling.temperature = 0.0;
    request.params.max_tokens = max_tokens;
    request.params.ignore_eos = true;
    last = wait_for(engine.submit(std::move(request)));
    if (last == Outcome::failed) ++tally.failed;
    if (last == Outcome::stopped) break;
  }
  return tally;
}

ClientTally drive_embedding(EmbeddingEngine& engine, std::size_t vocab, std::uint64_t seed,
                            std::stop_token stop) {
  ClientTally tally;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> inputs(1, 4);
  std::uniform_int_distribution<std::size_t> length(8, 64);
  std::exponential_distribution<double> gap_ms(1.0 / 20.0);
  for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
    sleep_ms(gap_ms(rng));
    EmbeddingRequest request{.id = id, .inputs = {}};
    for (int i = inputs(rng); i > 0; --i) {
      request.inputs.push_back(random_tokens(rng, length(rng), vocab));
    }
    if (!answered(engine.embed(std::move(request)), tally)) break;
  }
  return tally;
}

}  // namespace baton
