#include "baton/engine/llm/llm_batch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "baton/engine/request.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

int engine_context(const ModelConfig& config, const LlmBatchOptions& options) {
  if (options.context_length < 0 || options.queue_limit < 0) {
    throw std::invalid_argument("context_length and queue_limit must be >= 0");
  }
  const auto model = static_cast<int>(config.max_position_embeddings);
  return options.context_length == 0 ? model : std::min(options.context_length, model);
}

}  // namespace

LlmBatch::LlmBatch(const LlamaModel& model, const BpeTokenizer* tokenizer, LlmBatchOptions options)
    : model_(model),
      tokenizer_(tokenizer),
      options_(options),
      context_(engine_context(model.config(), options)),
      pool_(model.config(), options.block_tokens, options.kv_budget_bytes, options.kv_value_bytes),
      end_tokens_(end_token_ids(model.config())) {
  if (options_.max_batch < 1 || options_.prefill_chunk < 1) {
    throw std::invalid_argument("max_batch and prefill_chunk must be at least 1");
  }
  if (options_.step_tokens < 0) throw std::invalid_argument("step_tokens must be 0 or more");
  if (options_.mask_threads < 1) throw std::invalid_argument("mask_threads must be at least 1");
  if (options_.mask_threads > 1)
    mask_threads_ = std::make_unique<ThreadPool>(options_.mask_threads);
}

LlmBatch::~LlmBatch() = default;

int LlmBatch::blocks_for(int positions) const {
  return (positions + options_.block_tokens - 1) / options_.block_tokens;
}

int LlmBatch::positions_for(const GenerationRequest& request) const {
  const auto prompt = static_cast<int>(request.prompt.size());
  return prompt + std::min(request.params.max_tokens, context_ - prompt);
}

void LlmBatch::validate(const GenerationRequest& request) const {
  const auto prompt = static_cast<int>(request.prompt.size());
  if (prompt == 0) throw std::invalid_argument("the prompt is empty");
  // The one check of the request's token ids (the server's routes do not check them).
  const auto vocab = static_cast<std::size_t>(model_.config().vocab_size);
  for (std::size_t i = 0; i < request.prompt.size(); ++i) {
    if (!in_vocabulary(request.prompt[i], vocab)) {
      throw TokenOutsideVocabulary(TokenOutsideVocabulary::Field::prompt, i, request.prompt[i],
                                   vocab);
    }
  }
  const LogitBias& bias = request.params.sampling.logit_bias;
  for (std::size_t i = 0; i < bias.size(); ++i) {
    if (!in_vocabulary(bias[i].token, vocab)) {
      throw TokenOutsideVocabulary(TokenOutsideVocabulary::Field::logit_bias, i, bias[i].token,
                                   vocab);
    }
  }
  Sampler check(request.params.sampling);
  StopChecker stops(tokenizer_, request.params, end_tokens_, context_ - prompt);
  const GenerationParams& params = request.params;
  // A prompt must leave room for one token; an explicit max_tokens must fit whole.
  if (prompt >= context_ || (params.max_tokens_explicit && prompt + params.max_tokens > context_)) {
    throw ContextLengthExceeded(context_, prompt,
                                params.max_tokens_explicit ? params.max_tokens : 1);
  }
  const int positions = positions_for(request);
  if (blocks_for(positions) > pool_.total_blocks()) {
    throw std::invalid_argument("the prompt and max_tokens need " + std::to_string(positions) +
                                " positions of KV cache; the KV budget holds " +
                                std::to_string(pool_.total_blocks() * options_.block_tokens));
  }
}

void LlmBatch::enqueue(std::unique_ptr<Entry> entry, TimePoint now) {
  entry->enqueued = now;
  entry->tokens = entry->request.prompt;
  waiting_.push_back(std::move(entry));
}

void LlmBatch::admit(TimePoint now) {
  while (!waiting_.empty() && running_.size() < static_cast<std::size_t>(options_.max_batch)) {
    Entry& next = *waiting_.front();
    if (!try_admit(next, now)) {  // first come, first served: the rest wait behind it
      if (!std::exchange(next.waited, true)) ++counters_.kv_waits;
      return;
    }
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

bool LlmBatch::try_admit(Entry& e, TimePoint now) {
  const int block = options_.block_tokens;
  const auto prompt = static_cast<int>(e.request.prompt.size());
  // Reuse cached blocks of the prompt, leaving at least its last token to compute.
  std::uint64_t chain = KvBlockPool::kRootHash;
  std::vector<BlockId> reused;
  for (int b = 0; reuses_prefixes() && (b + 1) * block <= prompt - 1; ++b) {
    const std::span<const TokenId> tokens(e.request.prompt.data() + b * block, block);
    const auto found = pool_.find_cached(chain, tokens);
    if (!found) break;
    reused.push_back(*found);
    chain = KvBlockPool::chain_hash(chain, tokens);
  }
  const int fresh = blocks_for(positions_for(e.request)) - static_cast<int>(reused.size());
  if (fresh > pool_.available_blocks()) {
    for (const BlockId b : reused) pool_.release(b);
    return false;
  }
  e.kv.blocks = std::move(reused);
  for (int i = 0; i < fresh; ++i) e.kv.blocks.push_back(*pool_.allocate());
  e.kv.length = static_cast<int>(e.kv.blocks.size() - static_cast<std::size_t>(fresh)) * block;
  e.published_blocks = e.kv.length / block;
  e.chain = chain;
  e.admitted = now;
  e.sampler.emplace(e.request.params.sampling);
  e.stop.emplace(tokenizer_, e.request.params, end_tokens_, context_ - prompt);
  if (e.request.params.grammar) e.output.emplace(e.request.params.grammar);
  e.result.id = e.request.id;
  e.result.prompt_tokens = prompt;
  e.result.cached_prompt_tokens = e.kv.length;
  counters_.cached_prompt_tokens += static_cast<std::uint64_t>(e.kv.length);
  return true;
}

int LlmBatch::prefill_budget() const {
  if (options_.step_tokens <= 0) return options_.prefill_chunk;
  const auto decodes = std::count_if(running_.begin(), running_.end(), [](const auto& e) {
    return e->kv.length >= static_cast<int>(e->request.prompt.size());
  });
  // The budget keeps running streams' gaps short; with none running, a prompt goes at the
  // chunk's full size (small steps re-read every weight for few rows).
  if (decodes == 0) return options_.prefill_chunk;
  const int left = options_.step_tokens - static_cast<int>(decodes);
  return std::min(options_.prefill_chunk, std::max(left, options_.block_tokens));
}

std::optional<StepPlan> LlmBatch::next_step() {
  if (options_.deterministic) return next_invariant_step();
  std::vector<SequenceStep> steps;
  bool prefills = false;
  bool greedy = true;  // every request in the step picks the most likely token
  int budget = prefill_budget();
  for (const auto& e : running_) {
    const auto prompt = static_cast<int>(e->request.prompt.size());
    e->rows = 0;
    e->samples = false;
    greedy = greedy && picks_greedily(*e);
    if (e->kv.length >= prompt) {
      add_decode(*e, steps);
    } else if (budget > 0) {
      add_chunk(*e, std::min(budget, prompt - e->kv.length), steps);
      budget -= e->rows;
      prefills = true;
    }
  }
  if (steps.empty()) return std::nullopt;
  return StepPlan{.sequences = std::move(steps),
                  .prefills = prefills,
                  .output = greedy ? StepOutput::greedy : StepOutput::last_logits};
}

// The prompts still prefilling, each its next chunk as it has it alone (from its own
// length, at most prefill_chunk): the first alone, or as many as fit in packed_rows_ when
// the runner pads the step's products to that many (pack_invariant_prefills); else
// every decode, its rows independent of each other. Either way each row meets the kernels
// it meets when its request runs alone.
std::optional<StepPlan> LlmBatch::next_invariant_step() {
  for (const auto& e : running_) {
    e->rows = 0;
    e->samples = false;
  }
  std::vector<SequenceStep> chunks;
  bool greedy = true;
  int rows = 0;
  const int step_rows = packed_rows_ > 0 ? packed_rows_ : options_.prefill_chunk;
  for (const auto& e : running_) {
    const auto prompt = static_cast<int>(e->request.prompt.size());
    if (e->kv.length >= prompt) continue;
    const int chunk = std::min(step_rows, prompt - e->kv.length);
    if (rows + chunk > step_rows) continue;
    add_chunk(*e, chunk, chunks);
    rows += chunk;
    greedy = greedy && picks_greedily(*e);
    if (packed_rows_ == 0) break;
  }
  if (!chunks.empty()) {
    return StepPlan{.sequences = std::move(chunks),
                    .prefills = true,
                    .output = greedy ? StepOutput::greedy : StepOutput::last_logits,
                    .batch_invariant = true,
                    .invariant_rows = packed_rows_};
  }
  std::vector<SequenceStep> steps;
  for (const auto& e : running_) {
    greedy = greedy && picks_greedily(*e);
    add_decode(*e, steps);
  }
  if (steps.empty()) return std::nullopt;
  return StepPlan{.sequences = std::move(steps),
                  .prefills = false,
                  .output = greedy ? StepOutput::greedy : StepOutput::last_logits,
                  .batch_invariant = true};
}

void LlmBatch::add_decode(Entry& e, std::vector<SequenceStep>& steps) {
  e.rows = 1;
  e.samples = true;
  steps.push_back({{e.tokens.back()}, &e.kv});
}

void LlmBatch::add_chunk(Entry& e, int rows, std::vector<SequenceStep>& steps) {
  e.rows = rows;
  e.samples = e.kv.length + rows == static_cast<int>(e.request.prompt.size());
  const auto first = e.tokens.begin() + e.kv.length;
  steps.push_back({{first, first + rows}, &e.kv});
}

bool LlmBatch::picks_greedily(const Entry& e) {
  return is_plain_greedy(e.request.params.sampling) && !(e.output && e.output->active());
}

std::vector<std::unique_ptr<LlmBatch::Entry>> LlmBatch::after_step(const StepResult& result,
                                                                   TimePoint now) {
  const auto vocab = static_cast<std::size_t>(model_.config().vocab_size);
  ++counters_.steps;
  std::vector<std::unique_ptr<Entry>> finished;
  std::size_t row = 0;
  for (std::size_t i = 0; i < running_.size();) {
    Entry& e = *running_[i];
    if (e.rows == 0) {
      ++i;
      continue;
    }
    const bool decoding = e.rows == 1 && e.tokens.size() > e.request.prompt.size();
    (decoding ? counters_.decode_tokens : counters_.prefill_tokens) +=
        static_cast<std::uint64_t>(e.rows);
    const std::size_t sequence = row++;
    e.rows = 0;
    publish_full_blocks(e);
    if (e.kv.length < static_cast<int>(e.tokens.size())) {  // prompt not done yet
      ++i;
      continue;
    }
    const bool done = result.greedy.empty()
                          ? sample(e, {result.values.data() + sequence * vocab, vocab}, now)
                          : take_greedy(e, result.greedy[sequence], now);
    if (done) {
      finished.push_back(finish(i));
    } else {
      ++i;
    }
  }
  return finished;
}

void LlmBatch::prepare_masks() {
  // Reads only what next_step set: the step's forward pass may be moving kv.length meanwhile.
  std::vector<Entry*> constrained;
  for (const auto& e : running_)
    if (e->samples && e->output && !e->error) constrained.push_back(e.get());
  const auto prepare = [&](std::size_t i) {
    try {
      constrained[i]->output->prepare_mask();
    } catch (...) {
      constrained[i]->error = std::current_exception();
    }
  };
  // Several first masks of a new grammar (whole-vocabulary walks) may land in one step.
  if (mask_threads_ && constrained.size() > 1) {
    mask_threads_->parallel_for(constrained.size(), prepare);
  } else {
    for (std::size_t i = 0; i < constrained.size(); ++i) prepare(i);
  }
}

bool LlmBatch::sample(Entry& e, std::span<const float> logits, TimePoint now) {
  try {
    if (e.error) std::rethrow_exception(e.error);
    check_finite(logits, e);
    if (e.output && e.output->active()) {
      e.output->mask(logits, masked_);
      logits = masked_;
    }
    return take(e, e.sampler->next(logits, e.tokens, e.result.tokens), now);
  } catch (...) {  // this request's own failure; the rest of the batch goes on
    e.error = std::current_exception();
  }
  return true;
}

bool LlmBatch::take_greedy(Entry& e, const GreedyToken& picked, TimePoint now) {
  try {
    if (!picked.finite) throw non_finite(e, "");
    return take(e, SampledToken{.id = picked.token, .logprob = picked.logprob, .top = {}}, now);
  } catch (...) {
    e.error = std::current_exception();
  }
  return true;
}

// Appends `next` to the request; true when it finished (its result is complete).
bool LlmBatch::take(Entry& e, SampledToken next, TimePoint now) {
  if (e.result.tokens.empty()) e.first_token = now;
  e.tokens.push_back(next.id);
  e.result.tokens.push_back(next.id);
  e.result.logprobs.push_back(next.logprob);
  auto reason = e.stop->add(next.id);
  if (e.output && !reason) {
    e.output->accept(next.id, e.stop->text());
    // A grammar that can read nothing more ends the answer, end token or not (ignore_eos).
    if (e.output->finished()) reason = FinishReason::stop;
  }
  if (e.request.on_token) {
    e.request.on_token(TokenDelta{.token = next.id,
                                  .logprob = next.logprob,
                                  .text = e.stop->take_stable_text(reason.has_value()),
                                  .finish = reason,
                                  .top = next.top});
  }
  if (e.request.params.sampling.top_logprobs > 0) {
    e.result.top_logprobs.push_back(std::move(next.top));
  }
  if (!reason) return false;
  e.result.finish = *reason;
  e.result.text = e.stop->text();
  e.result.stop_sequence = e.stop->matched_stop();
  e.result.queued_ms = millis_between(e.submitted, e.admitted);
  e.result.admission_wait_ms = millis_between(e.enqueued, e.admitted);
  e.result.prefill_ms = millis_between(e.admitted, e.first_token);
  e.result.decode_ms = millis_between(e.first_token, now);
  return true;
}

// NaN or infinite logits (from NaN or infinite weights) would sample garbage as if it
// were text; the request fails instead, naming the model.
void LlmBatch::check_finite(std::span<const float> logits, const Entry& e) const {
  const auto bad =
      std::find_if(logits.begin(), logits.end(), [](float x) { return !std::isfinite(x); });
  if (bad == logits.end()) return;
  throw non_finite(
      e, " (" + std::to_string(*bad) + ") for token " + std::to_string(bad - logits.begin()));
}

ModelFileError LlmBatch::non_finite(const Entry& e, const std::string& which) const {
  return ModelFileError(model_.source(),
                        "computed a non-finite logit" + which + " at position " +
                            std::to_string(e.tokens.size()) + " of request " +
                            std::to_string(e.request.id) +
                            ": the weights hold NaN or infinite values, or overflow");
}

void LlmBatch::publish_full_blocks(Entry& e) {
  if (!reuses_prefixes()) return;
  const int block = options_.block_tokens;
  while ((e.published_blocks + 1) * block <= e.kv.length) {
    const std::span<const TokenId> tokens(e.tokens.data() + e.published_blocks * block, block);
    e.chain =
        pool_.publish(e.kv.blocks[static_cast<std::size_t>(e.published_blocks)], e.chain, tokens);
    ++e.published_blocks;
  }
}

std::unique_ptr<LlmBatch::Entry> LlmBatch::finish(std::size_t index) {
  std::unique_ptr<Entry> e = std::move(running_[index]);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  pool_.release_all(e->kv);
  return e;
}

std::vector<std::unique_ptr<LlmBatch::Entry>> LlmBatch::fail_step() {
  std::vector<std::unique_ptr<Entry>> failed;
  for (std::size_t i = 0; i < running_.size();) {
    if (running_[i]->rows > 0) {
      failed.push_back(finish(i));
    } else {
      ++i;
    }
  }
  return failed;
}

std::vector<std::unique_ptr<LlmBatch::Entry>> LlmBatch::take_all() {
  std::vector<std::unique_ptr<Entry>> all;
  while (!running_.empty()) all.push_back(finish(running_.size() - 1));
  for (auto& e : waiting_) all.push_back(std::move(e));
  waiting_.clear();
  return all;
}

std::vector<std::unique_ptr<LlmBatch::Entry>> LlmBatch::take_cancelled() {
  const auto cancelled = [](const auto& e) { return e->request.cancel.stop_requested(); };
  std::vector<std::unique_ptr<Entry>> out;
  for (std::size_t i = 0; i < running_.size();) {
    if (cancelled(running_[i])) {
      out.push_back(finish(i));
    } else {
      ++i;
    }
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (cancelled(*it)) {
      out.push_back(std::move(*it));
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::size_t LlmBatch::context_tokens() const {
  std::size_t longest = 0;
  for (const auto& e : running_) longest = std::max(longest, e->tokens.size());
  return longest;
}

}  // namespace baton
