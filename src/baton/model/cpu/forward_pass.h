// ForwardPass: one step of a batch of sequences through a LlamaModel on the CPU. Each
// sequence brings its new tokens (a prefill chunk, or the one token of a decode step) and
// its KV blocks; the rows of all sequences go through the matrix products together, and
// attention reads each sequence's own blocks. The pass runs layer by layer, so an engine
// can put each layer on its stream as one op and yield the GPU turn between layers.
//
// Thread-safety: a pass belongs to one caller; its steps (run_layer, finish) run one at a
// time, in order, on any thread. While a pass runs, nothing else may touch the blocks of
// its sequences (in the KvMemory it reads and writes).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "baton/model/cpu/kv_memory.h"
#include "baton/model/cpu/step_profile.h"
#include "baton/model/llama_model.h"
#include "baton/model/runner/kv_block_pool.h"
#include "baton/model/runner/sequence_step.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

enum class LogitsFor { last_token, every_token };

// The buffers of a pass: the residual stream [rows x hidden] and run_layer's scratch,
// tens of MB for a prefill chunk. A runner keeps one across its passes, since fresh
// buffers cost a page fault per 4 KiB every step (on a VM, 50-80 ms for a 1024-token
// chunk of a small model: longer than its layers).
struct ForwardScratch {
  std::vector<float> x, h, q, k, v, attended, projected, gate, up;
};

class ForwardPass {
 public:
  // Embeds the tokens. Throws std::out_of_range for a token outside the vocabulary and
  // std::length_error when a sequence's blocks cannot hold its new positions.
  // `scratch` (may be null: the pass's own) must outlive the pass and serve one pass at a
  // time.
  ForwardPass(const LlamaModel& model, KvMemory& memory, std::vector<SequenceStep> steps,
              LogitsFor logits_for, ForwardScratch* scratch = nullptr);

  int layers() const { return static_cast<int>(model_.layers().size()); }
  int rows() const { return rows_; }
  // Attention (writing the new keys and values) and MLP of layer `index`.
  void run_layer(int index);
  // run_layer() for rows [first, first + count) only: a piece of the layer. A layer's
  // pieces run in row order (a row attends to the keys its earlier rows wrote), all of
  // them before the next layer; together they compute what run_layer() does, bit for bit.
  // std::out_of_range for rows outside the step.
  void run_rows(int index, int first, int count);
  // The final norm and the output projection; advances every sequence's length. Returns
  // logits, row-major [rows x vocab]: one row per sequence (last_token) or per token.
  // `row_by_row`: each row's projection alone, as a step of that row alone computes it
  // (the kernels for several rows sum in another order).
  std::vector<float> finish(bool row_by_row = false);
  // Instead of finish(), for embedding models: the final norm of every row, row-major
  // [rows x hidden] (what pooling reads); advances every sequence's length.
  std::vector<float> finish_hidden();
  // Adds the time of each op of the steps after this call to `profile` (null: none).
  void profile_into(StepProfile* profile) { profile_ = profile; }

 private:
  void add_residual(const float* delta, float* x, std::size_t count);
  // Of rows [first, first + count): (see the .cpp).
  void write_keys_values(int layer, int first, int count, const float* k, const float* v, float* q);
  void attend(int layer, int first, int count, const float* q, float* out);
  // attend() for the `count` query heads from `first_head` of row r, which share one KV
  // head; q and out point at that row's first head.
  void attend_heads(int layer, int r, int first_head, int count, const float* q, float* out);

  const LlamaModel& model_;
  KvMemory& memory_;
  std::vector<SequenceStep> steps_;
  LogitsFor logits_for_;
  int rows_ = 0;
  std::vector<int> row_step_;      // the step of each row
  std::vector<int> row_position_;  // the position of each row in its sequence
  ForwardScratch own_scratch_;
  // Sized once for the pass and reused by every layer (each layer allocated, faulted in
  // and zeroed its own before).
  ForwardScratch& scratch_;
  StepProfile* profile_ = nullptr;
};

// One sequence's keys and values in a pool of its own: the simplest way to run a single
// sequence (tests, tools). Capacity is rounded up to whole blocks.
class KvCache {
 public:
  KvCache(const ModelConfig& config, int capacity);
  int length() const { return sequence_.length; }
  int capacity() const { return capacity_; }

 private:
  friend std::vector<float> forward(const LlamaModel&, std::span<const TokenId>, KvCache&,
                                    const std::function<void()>&, LogitsFor, StepProfile*);
  static constexpr int kBlockTokens = 16;
  int capacity_;
  KvBlockPool pool_;
  KvMemory memory_;
  KvSequence sequence_;
};

// Runs `tokens` after what `cache` holds and returns their logits, row-major
// [tokens x vocab]. `between_layers` (may be empty) runs after each layer but the last.
// Throws std::length_error when the cache is full, std::out_of_range for a token outside
// the vocabulary. `logits_for`: every token's logits or the last one's only; `profile`
// (may be null) adds each op's time.
std::vector<float> forward(const LlamaModel& model, std::span<const TokenId> tokens, KvCache& cache,
                           const std::function<void()>& between_layers = {},
                           LogitsFor logits_for = LogitsFor::every_token,
                           StepProfile* profile = nullptr);

}  // namespace baton
