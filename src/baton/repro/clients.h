// The closed-loop clients of a `baton repro` run, one per engine, as a steady stream of
// users would load it. A synthetic engine gets decode requests of 16-64 bursts,
// back-to-back prefill chunks, or embedding calls every ~20 ms on average. An LLM request is `prompt_tokens` seeded random
// tokens of the model's vocabulary and asks for 16-64 greedy tokens (end tokens ignored,
// so every request decodes as long as it asked). An embedding call, every ~20 ms on
// average, holds 1-4 inputs of 8-64 random tokens. A request that fails with a GpuError is
// counted by the engine, and the next one is sent, as a retrying client would.
// Thread-safety: run each client on its own thread; each returns when `stop` is requested
// or its engine stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stop_token>

#include "baton/engine/embedding_engine.h"
#include "baton/engine/engine.h"
#include "baton/engine/llm_engine.h"

namespace baton {

void drive(Engine& engine, std::uint64_t seed, std::stop_token stop);

void drive_llm(LlmEngine& engine, std::size_t prompt_tokens, std::size_t vocab,
               std::uint64_t seed, std::stop_token stop);
void drive_embedding(EmbeddingEngine& engine, std::size_t vocab, std::uint64_t seed,
                     std::stop_token stop);

}  // namespace baton
