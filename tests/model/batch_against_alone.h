// What the batch-invariance tests of both runners share (tests/model/
// cpu_batch_invariance_test.cpp, tests/model/cuda/batch_invariance_test.cpp): sequences
// over a pool's blocks, a step's plan, and B sequences decoded one step together against
// their twins decoded alone.
// Thread-safety: test code; one thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "baton/model/runner/kv_block_pool.h"
#include "baton/model/runner/model_runner.h"

namespace baton::testing {

// Sequences whose blocks come from `pool`, owned here.
class PoolSequences {
 public:
  PoolSequences(KvBlockPool& pool, int block_tokens) : pool_(pool), block_tokens_(block_tokens) {}
  KvSequence& add(int capacity) {
    auto s = std::make_unique<KvSequence>();
    for (int b = 0; b < (capacity + block_tokens_ - 1) / block_tokens_; ++b) {
      s->blocks.push_back(*pool_.allocate());
    }
    sequences_.push_back(std::move(s));
    return *sequences_.back();
  }

 private:
  KvBlockPool& pool_;
  int block_tokens_;
  std::vector<std::unique_ptr<KvSequence>> sequences_;
};

// A step of `tokens[i]` for `which[i]` that returns each sequence's last logits.
inline StepPlan last_logits_plan(const std::vector<KvSequence*>& which,
                                 const std::vector<std::vector<TokenId>>& tokens, bool invariant) {
  StepPlan plan{.output = StepOutput::last_logits, .batch_invariant = invariant};
  for (std::size_t i = 0; i < which.size(); ++i) {
    plan.sequences.push_back({tokens[i], which[i]});
    plan.prefills = plan.prefills || tokens[i].size() > 1;
  }
  return plan;
}

using RunStep = std::function<std::vector<float>(StepPlan)>;

struct RowDifference {
  double max_relative = 0.0;  // over the rows
  int rows_unequal = 0;       // rows not bit-identical
};

// `batch` sequences, each prompt (prompt(s)) prefilled alone into two copies; one copy of
// each decodes a step together, the other alone, the same token: how far they differ.
inline RowDifference batched_against_alone(const RunStep& run, PoolSequences& sequences, int batch,
                                           std::size_t vocab, bool invariant,
                                           const std::function<std::vector<TokenId>(int)>& prompt) {
  std::vector<KvSequence*> together, alone;
  std::vector<std::vector<TokenId>> next;
  for (int s = 0; s < batch; ++s) {
    for (std::vector<KvSequence*>* copy : {&together, &alone}) {
      KvSequence& sequence = sequences.add(64);
      run(last_logits_plan({&sequence}, {prompt(s)}, invariant));
      copy->push_back(&sequence);
    }
    next.push_back({static_cast<TokenId>((s * 13 + 1) % static_cast<int>(vocab))});
  }
  const std::vector<float> batched = run(last_logits_plan(together, next, invariant));
  RowDifference d;
  for (int s = 0; s < batch; ++s) {
    const auto i = static_cast<std::size_t>(s);
    const std::vector<float> single = run(last_logits_plan({alone[i]}, {next[i]}, invariant));
    double diff = 0.0;
    double norm = 0.0;
    bool equal = true;
    for (std::size_t v = 0; v < vocab; ++v) {
      const double a = batched[i * vocab + v];
      const double b = single[v];
      diff += (a - b) * (a - b);
      norm += b * b;
      equal = equal && a == b;
    }
    d.max_relative = std::max(d.max_relative, std::sqrt(diff / norm));
    d.rows_unequal += equal ? 0 : 1;
  }
  return d;
}

}  // namespace baton::testing
