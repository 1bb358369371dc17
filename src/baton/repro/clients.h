// The closed-loop clients of a `baton repro` run, one per engine, as a steady stream of
// users would load it. A synthetic engine gets decode requests of 16-64 bursts,
// back-to-back prefill chunks, or embedding calls every ~20 ms on average. An LLM request is
// `prompt_tokens` seeded random tokens of the model's vocabulary and asks for 16-64 greedy tokens
// (end tokens ignored, so every request decodes as long as it asked). An embedding call, every ~20
// ms on average, holds 1-4 inputs of 8-64 random tokens. A request that fails with a GpuError is
// counted by the engine, and the next one is sent, as a retrying client would.
// Thread-safety: run each client on its own thread; each returns when `stop` is requested
// or its engine stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stop_token>

#include "baton/engine/embedding/embedding_engine.h"
#include "baton/engine/llm/llm_engine.h"
#include "baton/engine/synthetic/engine.h"

namespace baton {

// What a client saw: requests that failed with a GpuError, and those of them it sent again.
struct ClientTally {
  std::uint64_t failed = 0;
  std::uint64_t retried = 0;
};

ClientTally drive(Engine& engine, std::uint64_t seed, std::stop_token stop);

// An LLM client's requests generate 16 to this many tokens.
inline constexpr std::size_t kMaxGeneratedTokens = 64;

struct LlmLoad {
  std::size_t prompt_tokens = 128;
  std::size_t vocab = 0;
  // A request that failed is sent again with the same prompt (its prefill redone) instead
  // of moving on to a new one, as the study's clients retried after a hang.
  bool retry_failed = false;
};
ClientTally drive_llm(LlmEngine& engine, const LlmLoad& load, std::uint64_t seed,
                      std::stop_token stop);
ClientTally drive_embedding(EmbeddingEngine& engine, std::size_t vocab, std::uint64_t seed,
                            std::stop_token stop);

}  // namespace baton
