#include "baton/repro/model_clients.h"

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

}  // namespace

void drive_llm(LlmEngine& engine, std::size_t prompt_tokens, std::size_t vocab,
               std::uint64_t seed, std::stop_token stop) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> decode_tokens(16, 64);
  for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
    GenerationRequest request{id, random_tokens(rng, prompt_tokens, vocab), {}, {}};
    request.params.sampling.temperature = 0.0;
    request.params.max_tokens = decode_tokens(rng);
    request.params.ignore_eos = true;
    try {
      engine.submit(std::move(request)).get();
    } catch (const EngineStopped&) {
      return;
    } catch (const GpuError&) {
      // Counted by the engine; a client would retry.
    }
  }
}

void drive_embedding(EmbeddingEngine& engine, std::size_t vocab, std::uint64_t seed,
                     std::stop_token stop) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> inputs(1, 4);
  std::uniform_int_distribution<std::size_t> length(8, 64);
  std::exponential_distribution<double> gap_ms(1.0 / 20.0);
  for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(gap_ms(rng)));
    EmbeddingRequest request{id, {}};
    for (int i = inputs(rng); i > 0; --i) request.inputs.push_back(random_tokens(rng, length(rng), vocab));
    try {
      engine.embed(std::move(request)).get();
    } catch (const EngineStopped&) {
      return;
    } catch (const GpuError&) {
      // Counted by the engine; a client would retry.
    }
  }
}

}  // namespace baton
