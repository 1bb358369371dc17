// LlmBatch: the continuous batch of one LLM engine, without threads: which requests wait
// for KV blocks, which run, and what the next step computes. Each step decodes one token
// of every request past its prompt, then fills what is left of a token budget
// (`step_tokens`, at most `prefill_chunk` of it prompt) with prompt chunks of the others,
// oldest first: a new prompt holds the running streams for one budgeted step at a time,
// never for its whole prefill (the chunked prefill of vLLM and SGLang). A prompt always
// gets a block's worth, so a batch of decodes never starves the waiting prompts; with no
// stream decoding, prompts go at prefill_chunk a step.
//
// KV blocks: a request is admitted only when the pool can hold its prompt plus
// max_tokens, so a running request never runs out of blocks and never has to be
// preempted; until then it waits (counted in waiting()). Before that, its prompt is
// looked up in the prefix cache block by block: every full block some earlier request
// computed for the same leading tokens (prompt or prompt plus output) is reused, and only
// the rest is prefilled. At least the last prompt token is always computed, for its logits.
//
// The context is the model's max_position_embeddings, or less when the options say so: a
// prompt must leave room for one token, and prompt + max_tokens must fit when the client
// set max_tokens (ContextLengthExceeded); otherwise max_tokens is cut to what is left.
//
// Cancellation: take_cancelled() removes every request whose stop token was requested,
// waiting or running, and gives its blocks back (published ones stay in the prefix cache).
//
// Thread-safety: none; the engine's thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "baton/common/clock.h"
#include "baton/common/thread_pool.h"
#include "baton/engine/llm/constrained_output.h"
#include "baton/engine/llm/generation.h"
#include "baton/engine/llm/stop_checker.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/llama_model.h"
#include "baton/model/runner/kv_block_pool.h"
#include "baton/model/runner/model_runner.h"
#include "baton/model/runner/sequence_step.h"

namespace baton {

struct LlmBatchOptions {
  int block_tokens = 16;
  std::size_t kv_budget_bytes = std::size_t{256} << 20;
  // Bytes of one key or value number where the runner keeps them (the host sets it by
  // backend: 4 on the CPU, 2 on CUDA), so that the budget is the memory they take.
  std::size_t kv_value_bytes = sizeof(float);
  int max_batch = 16;       // requests running at once
  int prefill_chunk = 256;  // prompt tokens per step, over all prefilling requests
  // Tokens per step, decodes and prompt chunks together; 0: no budget but prefill_chunk.
  // Each backend has its measured default (kCpuStepTokens).
  int step_tokens = 0;
  bool prefix_cache = true;
  // Each request's tokens the same whatever else runs (`--deterministic`): a prompt's
  // chunks are the ones it has alone (at prefill_chunk), each alone in its step or packed
  // with others' at a fixed row count (LlmBatch::pack_invariant_prefills; then at most
  // that many a chunk);
  // decode steps ask the runner for products whose rows do not depend on each other
  // (StepPlan::batch_invariant); no prompt reuses another's cached blocks.
  bool deterministic = false;
  int queue_limit = 256;   // requests submitted but not yet admitted (the engine's); 0: none
  int context_length = 0;  // 0: the model's max_position_embeddings; else at most that
  // Threads that compute a step's grammar masks beside its forward pass (1: the engine's
  // thread alone). The host sets it by backend (mask_threads_for): a CPU pass needs the cores.
  int mask_threads = 1;
};

// The CPU's step budget: on two cores a 0.5B-shaped bf16 model computes about 250 prompt
// tokens a second on the bf16 pair kernels (500-740 on AMX tiles), so a step of 64 holds a
// stream's next token for at most about 0.25 s (the side-by-side runs in
// docs/benchmarks.md, "Streams beside a prefill").
inline constexpr int kCpuStepTokens = 64;

// What a backend's batches run with where a model's settings leave them unset. The CPU:
// 16 streams, 256-token prompt chunks, its step budget. A GPU: 64 streams and 2048-token
// chunks, so that 64 chat requests of short prompts start within a step or two instead of
// queueing behind each other (16 and 256 put TTFT at 1.9 s with 64 streams on an H100,
// issue 50), and no step budget.
struct BatchDefaults {
  int max_batch = 16;
  int prefill_chunk = 256;
  int step_tokens = 0;
};
inline BatchDefaults batch_defaults(std::string_view backend) {
  if (backend == "cpu")
    return {.max_batch = 16, .prefill_chunk = 256, .step_tokens = kCpuStepTokens};
  return {.max_batch = 64, .prefill_chunk = 2048, .step_tokens = 0};
}

struct LlmBatchCounters {
  std::uint64_t steps = 0;
  std::uint64_t prefill_tokens = 0;        // prompt tokens computed
  std::uint64_t cached_prompt_tokens = 0;  // prompt tokens reused from the prefix cache
  std::uint64_t decode_tokens = 0;
  std::uint64_t kv_waits = 0;  // requests that had to wait for KV blocks before running
};

class LlmBatch {
 public:
  // One request in the batch, with the promise its client waits on.
  struct Entry {
    GenerationRequest request;
    std::promise<GenerationResult> promise;
    TimePoint submitted{}, enqueued{}, admitted{}, first_token{};
    KvSequence kv;
    std::vector<TokenId> tokens;  // prompt, then generated
    int published_blocks = 0;     // leading blocks published to the prefix cache
    std::uint64_t chain = KvBlockPool::kRootHash;
    std::optional<Sampler> sampler;
    std::optional<StopChecker> stop;
    std::optional<ConstrainedOutput> output;  // the request's grammar, if it has one
    GenerationResult result;
    int rows = 0;              // tokens this entry has in the current step
    bool samples = false;      // the current step ends with a token of its (set when planned)
    bool waited = false;       // found too few free KV blocks at least once
    std::exception_ptr error;  // set when sampling or decoding failed it
  };

  LlmBatch(const LlamaModel& model, const BpeTokenizer* tokenizer, LlmBatchOptions options);
  ~LlmBatch();

  // Checks the request can ever run here (sampling values, stop strings, prompt and
  // max_tokens within the context and the KV budget); throws std::invalid_argument
  // (ContextLengthExceeded when the prompt, or it and an explicit max_tokens, exceeds the
  // context). Reads only what never changes: safe from any thread.
  void validate(const GenerationRequest& request) const;
  // The engine's context in tokens (prompt and completion); never changes.
  int context_length() const { return context_; }
  // The engine thread has picked the request up at `now`; it waits for admission.
  void enqueue(std::unique_ptr<Entry> entry, TimePoint now);
  // Moves waiting requests into the running batch while blocks and batch slots allow.
  void admit(TimePoint now);
  bool idle() const { return running_.empty() && waiting_.empty(); }
  std::size_t waiting() const { return waiting_.size(); }
  std::size_t running() const { return running_.size(); }

  // The plan of the next step (none when nothing runs): which sequences, which new
  // positions; a ModelRunner executes it. When every request of the step decodes plainly
  // greedily, the plan asks the runner for its picks instead of logits (StepOutput::greedy).
  std::optional<StepPlan> next_step();
  // After a step ran: samples from the result's logits (one row per step entry) or takes
  // its greedy picks, publishes full
  // blocks, and returns the requests that finished (their blocks released), each with its
  // result or, when its own sampling or decoding threw, its error.
  std::vector<std::unique_ptr<Entry>> after_step(const StepResult& result, TimePoint now);
  // The grammar masks of the requests that sample after the planned step, computed while
  // its forward pass runs (after next_step, before after_step), on mask_threads threads. A
  // request whose mask fails gets its error in after_step.
  void prepare_masks();
  // After a failed step: every request of the step leaves, blocks released.
  std::vector<std::unique_ptr<Entry>> fail_step();
  // Every request, waiting or running, leaves (engine stopping).
  std::vector<std::unique_ptr<Entry>> take_all();
  // The requests whose stop token was requested leave, waiting or running, blocks
  // released. Call between steps only (no step may still use their blocks).
  std::vector<std::unique_ptr<Entry>> take_cancelled();

  const LlmBatchCounters& counters() const { return counters_; }
  const KvBlockPool& pool() const { return pool_; }
  // The prompt tokens of a step when nothing decodes: a long prompt's chunks.
  int prefill_chunk() const { return options_.prefill_chunk; }
  // With `deterministic`: the runner pads a batch-invariant prefill step's products to up
  // to `rows` rows (ModelRunner::invariant_prefill_rows), so several prompts' chunks,
  // each the chunk it has alone, may share a step of min(prefill_chunk, rows) rows, the
  // chunks' size too. Before the first step.
  void pack_invariant_prefills(int rows) { packed_rows_ = std::min(options_.prefill_chunk, rows); }
  // Context tokens of the longest sequence in the batch (for the ledger's buckets).
  std::size_t context_tokens() const;

 private:
  // Prompt tokens the next step may carry: what the decodes leave of step_tokens, or
  // prefill_chunk when nothing decodes.
  int prefill_budget() const;
  std::optional<StepPlan> next_invariant_step();
  static bool picks_greedily(const Entry& e);
  // `e` in this step: decoding (its last sampled token), or prefilling its next `rows`
  // prompt tokens (sampling after the prompt's last).
  static void add_decode(Entry& e, std::vector<SequenceStep>& steps);
  static void add_chunk(Entry& e, int rows, std::vector<SequenceStep>& steps);
  bool reuses_prefixes() const { return options_.prefix_cache && !options_.deterministic; }
  bool try_admit(Entry& entry, TimePoint now);
  int blocks_for(int positions) const;
  // Prompt plus the tokens it may generate: max_tokens, cut to the context.
  int positions_for(const GenerationRequest& request) const;
  // Samples the entry's next token; true when the entry is finished (or failed).
  bool sample(Entry& entry, std::span<const float> logits, TimePoint now);
  bool take_greedy(Entry& entry, const GreedyToken& picked, TimePoint now);
  bool take(Entry& entry, SampledToken next, TimePoint now);
  void check_finite(std::span<const float> logits, const Entry& entry) const;
  ModelFileError non_finite(const Entry& entry, const std::string& which) const;
  void publish_full_blocks(Entry& entry);
  std::unique_ptr<Entry> finish(std::size_t index);

  const LlamaModel& model_;
  const BpeTokenizer* tokenizer_;
  LlmBatchOptions options_;
  int packed_rows_ = 0;  // pack_invariant_prefills; 0: a prompt chunk alone in its step
  const int context_;  // tokens, prompt and completion
  KvBlockPool pool_;
  std::vector<TokenId> end_tokens_;
  std::vector<float> masked_;  // a constrained request's logits, masked
  std::deque<std::unique_ptr<Entry>> waiting_;
  std::vector<std::unique_ptr<Entry>> running_;
  LlmBatchCounters counters_;
  std::unique_ptr<ThreadPool> mask_threads_;  // when options_.mask_threads > 1
};

}  // namespace baton
