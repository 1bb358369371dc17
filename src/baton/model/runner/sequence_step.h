// SequenceStep: what one sequence brings to a step (its new tokens, written after its
// length, and its KV blocks): the seam type of the scheduler (engine/llm_batch) and every
// runner (the CPU pass, model/cuda/), apart from any of them.
// Thread-safety: a value; the KvSequence belongs to the scheduler.
#pragma once

#include <vector>

#include "baton/model/runner/kv_block_pool.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

struct SequenceStep {
  std::vector<TokenId> tokens;  // new positions, written after sequence->length
  KvSequence* sequence = nullptr;
};

}  // namespace baton
