#include "baton/model/cpu/forward_pass.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "baton/model/cpu/kernels/cpu_kernels.h"
#include "baton/model/cpu/kernels/simd_kernels.h"
#include "baton/model/cpu/rope.h"

namespace baton {

ForwardPass::ForwardPass(const LlamaModel& model, KvMemory& memory, std::vector<SequenceStep> steps,
                         LogitsFor logits_for, ForwardScratch* scratch)
    : model_(model),
      memory_(memory),
      steps_(std::move(steps)),
      logits_for_(logits_for),
      scratch_(scratch != nullptr ? *scratch : own_scratch_) {
  const ModelConfig& c = model_.config();
  const int hidden = static_cast<int>(c.hidden_size);
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    const KvSequence& kv = *steps_[s].sequence;
    const int count = static_cast<int>(steps_[s].tokens.size());
    const auto capacity = static_cast<int>(kv.blocks.size()) * memory_.block_tokens();
    if (kv.length + count > capacity) {
      throw std::length_error("the sequence's KV blocks hold " + std::to_string(capacity) +
                              " positions, not " + std::to_string(kv.length + count));
    }
    for (int t = 0; t < count; ++t) {
      row_step_.push_back(static_cast<int>(s));
      row_position_.push_back(kv.length + t);
    }
  }
  rows_ = static_cast<int>(row_step_.size());
  const auto rows = static_cast<std::size_t>(rows_);
  std::vector<float>& x = scratch_.x;
  x.resize(rows * hidden);
  int row = 0;
  for (const SequenceStep& step : steps_) {
    for (const TokenId token : step.tokens) {
      if (token < 0 || token >= c.vocab_size) {
        throw std::out_of_range("token id " + std::to_string(token) + " outside the vocabulary");
      }
      model_.embedding().rows_to_float(token, 1,
                                       x.data() + static_cast<std::size_t>(row++) * hidden);
    }
  }
  const auto q_size = rows * static_cast<std::size_t>(c.num_heads * c.head_dim);
  const auto kv_size = rows * static_cast<std::size_t>(c.num_kv_heads * c.head_dim);
  const auto inner_size = rows * static_cast<std::size_t>(c.intermediate_size);
  // Every element is written before it is read, so reused buffers need no clearing.
  scratch_.h.resize(x.size());
  scratch_.q.resize(q_size);
  scratch_.k.resize(kv_size);
  scratch_.v.resize(kv_size);
  scratch_.attended.resize(q_size);
  scratch_.projected.resize(x.size());
  scratch_.gate.resize(inner_size);
  scratch_.up.resize(inner_size);
}

void ForwardPass::run_layer(int index) { run_rows(index, 0, rows_); }

void ForwardPass::run_rows(int index, int first, int count) {
  if (first < 0 || count < 0 || first + count > rows_) {
    throw std::out_of_range("rows " + std::to_string(first) + "+" + std::to_string(count) +
                            " of a step of " + std::to_string(rows_));
  }
  const ModelConfig& c = model_.config();
  const LlamaModel::Layer& l = model_.layers()[static_cast<std::size_t>(index)];
  ThreadPool& threads = model_.pool();
  const auto hidden = static_cast<std::size_t>(c.hidden_size);
  const auto q_dim = static_cast<std::size_t>(c.num_heads * c.head_dim);
  const auto kv_dim = static_cast<std::size_t>(c.num_kv_heads * c.head_dim);
  const auto inner = static_cast<std::size_t>(c.intermediate_size);
  const auto at = static_cast<std::size_t>(first);
  const auto data = [](const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); };

  const auto timer = [this](StepOp op) { return OpTimer(profile_, op); };
  auto& [residual, h, q, k, v, attended, projected, gate, up] = scratch_;
  float* x = residual.data() + at * hidden;
  {
    const OpTimer t = timer(StepOp::norm_rope);
    rms_norm(x, h.data() + at * hidden, count, static_cast<int>(hidden), l.attn_norm.data(),
             c.rms_norm_eps);
  }
  {
    const OpTimer t = timer(StepOp::qkv);
    const LinearOutput qkv[] = {{.w = &l.q, .bias = data(l.q_bias), .y = q.data() + at * q_dim},
                                {.w = &l.k, .bias = data(l.k_bias), .y = k.data() + at * kv_dim},
                                {.w = &l.v, .bias = data(l.v_bias), .y = v.data() + at * kv_dim}};
    linear(threads, h.data() + at * hidden, count, qkv);
  }
  {
    const OpTimer t = timer(StepOp::norm_rope);
    write_keys_values(index, first, count, k.data(), v.data(), q.data());
  }
  {
    const OpTimer t = timer(StepOp::attention);
    attend(index, first, count, q.data(), attended.data());
  }
  {
    const OpTimer t = timer(StepOp::out_proj);
    linear(threads, attended.data() + at * q_dim, count, l.o, nullptr,
           projected.data() + at * hidden);
  }
  add_residual(projected.data() + at * hidden, x, static_cast<std::size_t>(count) * hidden);

  {
    const OpTimer t = timer(StepOp::norm_rope);
    rms_norm(x, h.data() + at * hidden, count, static_cast<int>(hidden), l.mlp_norm.data(),
             c.rms_norm_eps);
  }
  float* gated = gate.data() + at * inner;
  {
    const OpTimer t = timer(StepOp::gate_up);
    const LinearOutput gate_up[] = {{.w = &l.gate, .bias = nullptr, .y = gated},
                                    {.w = &l.up, .bias = nullptr, .y = up.data() + at * inner}};
    linear(threads, h.data() + at * hidden, count, gate_up);
  }
  {
    const OpTimer t = timer(StepOp::activation);
    silu_mul(gated, up.data() + at * inner, static_cast<std::size_t>(count) * inner);
  }
  {
    const OpTimer t = timer(StepOp::down);
    linear(threads, gated, count, l.down, nullptr, projected.data() + at * hidden);
  }
  add_residual(projected.data() + at * hidden, x, static_cast<std::size_t>(count) * hidden);
}

void ForwardPass::add_residual(const float* delta, float* x, std::size_t count) {
  const OpTimer t(profile_, StepOp::residual);
  for (std::size_t i = 0; i < count; ++i) x[i] += delta[i];
}

// Normalizes (qwen3) and rotates q and k of every row, then stores k and v at the row's
// position in its sequence's blocks.
void ForwardPass::write_keys_values(int layer, int first, int count, const float* k_in,
                                    const float* v, float* q) {
  const ModelConfig& c = model_.config();
  const LlamaModel::Layer& l = model_.layers()[static_cast<std::size_t>(layer)];
  const int heads = static_cast<int>(c.num_heads);
  const int kv_heads = static_cast<int>(c.num_kv_heads);
  const int hd = static_cast<int>(c.head_dim);
  const std::size_t kv_row = static_cast<std::size_t>(kv_heads) * hd;
  const int block_tokens = memory_.block_tokens();
  const std::vector<float>& inv = model_.inverse_frequencies();
  for (int r = first; r < first + count; ++r) {
    const int pos = row_position_[r];
    const KvSequence& kv = *steps_[row_step_[r]].sequence;
    const BlockId block = kv.blocks[static_cast<std::size_t>(pos / block_tokens)];
    const std::size_t slot = static_cast<std::size_t>(pos % block_tokens) * kv_row;
    float* qr = q + static_cast<std::size_t>(r) * heads * hd;
    float* kr = memory_.keys(layer, block) + slot;
    std::copy_n(k_in + static_cast<std::size_t>(r) * kv_row, kv_row, kr);
    std::copy_n(v + static_cast<std::size_t>(r) * kv_row, kv_row,
                memory_.values(layer, block) + slot);
    if (!l.q_norm.empty()) {
      rms_norm(qr, qr, heads, hd, l.q_norm.data(), c.rms_norm_eps);
      rms_norm(kr, kr, kv_heads, hd, l.k_norm.data(), c.rms_norm_eps);
    }
    apply_rope({qr, static_cast<std::size_t>(heads) * hd}, heads, hd, pos, inv);
    apply_rope({kr, kv_row}, kv_heads, hd, pos, inv);
  }
}

// Causal attention of every (row, head) over its sequence's positions 0..pos (or the
// sliding window), split over the pool. The query heads that share a KV head go together,
// block by block, so each block of keys and values comes from memory once for them all
// (not once per head: 7 times for Qwen2.5-0.5B); a group is split in parts only when
// there are fewer groups than threads.
void ForwardPass::attend(int layer, int first, int count, const float* q, float* out) {
  const ModelConfig& c = model_.config();
  const int heads = static_cast<int>(c.num_heads);
  const int kv_heads = static_cast<int>(c.num_kv_heads);
  const int group = heads / kv_heads;
  const int groups = count * kv_heads;
  const int parts = std::clamp((model_.pool().threads() + groups - 1) / groups, 1, group);
  const int part_heads = (group + parts - 1) / parts;
  const auto hd = static_cast<std::size_t>(c.head_dim);
  model_.pool().parallel_for(static_cast<std::size_t>(groups) * parts, [&](std::size_t item) {
    const int r = first + static_cast<int>(item / parts) / kv_heads;
    const int kv_head = static_cast<int>(item / parts) % kv_heads;
    const int first_head = kv_head * group + static_cast<int>(item % parts) * part_heads;
    const int n = std::min(first_head + part_heads, (kv_head + 1) * group) - first_head;
    const std::size_t at = (static_cast<std::size_t>(r) * heads + first_head) * hd;
    if (n > 0) attend_heads(layer, r, first_head, n, q + at, out + at);
  });
}

void ForwardPass::attend_heads(int layer, int r, int first_head, int count, const float* q,
                               float* out) {
  const ModelConfig& c = model_.config();
  const int hd = static_cast<int>(c.head_dim);
  const std::size_t kv_row = static_cast<std::size_t>(c.num_kv_heads) * hd;
  const int group = static_cast<int>(c.num_heads / c.num_kv_heads);
  const std::size_t head_offset = static_cast<std::size_t>(first_head / group) * hd;
  const int block_tokens = memory_.block_tokens();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const SimdKernels& simd = simd_kernels();
  const int pos = row_position_[r];
  const KvSequence& kv = *steps_[row_step_[r]].sequence;
  const int first =
      c.sliding_window ? std::max(0, pos - static_cast<int>(*c.sliding_window) + 1) : 0;
  const auto length = static_cast<std::size_t>(pos - first + 1);
  // Positions [first, pos] in runs that share a block: each run's keys (and values) lie
  // kv_row floats apart. body(index of the run's first position, count, offset, block).
  const auto for_each_run = [&](auto body) {
    for (int j = first; j <= pos;) {
      const int n = std::min(pos + 1, (j / block_tokens + 1) * block_tokens) - j;
      const BlockId block = kv.blocks[static_cast<std::size_t>(j / block_tokens)];
      body(static_cast<std::size_t>(j - first), n,
           static_cast<std::size_t>(j % block_tokens) * kv_row + head_offset, block);
      j += n;
    }
  };
  thread_local std::vector<float> scores;  // per-thread scratch: [head][position]
  scores.resize(static_cast<std::size_t>(count) * length);
  for_each_run([&](std::size_t at, int n, std::size_t offset, BlockId block) {
    const float* keys = memory_.keys(layer, block) + offset;
    for (int h = 0; h < count; ++h) {
      simd.dot_strided(q + static_cast<std::size_t>(h) * hd, keys, kv_row, n, hd, scale,
                       scores.data() + h * length + at);
    }
  });
  thread_local std::vector<float> totals;
  totals.resize(static_cast<std::size_t>(count));
  for (int h = 0; h < count; ++h) {
    float* s = scores.data() + h * length;
    totals[h] = simd.exp_shifted(s, static_cast<int>(length), *std::max_element(s, s + length));
  }
  std::fill_n(out, static_cast<std::size_t>(count) * hd, 0.0f);
  for_each_run([&](std::size_t at, int n, std::size_t offset, BlockId block) {
    const float* values = memory_.values(layer, block) + offset;
    for (int h = 0; h < count; ++h) {
      simd.add_scaled_strided(scores.data() + h * length + at, values, kv_row, n, hd,
                              out + static_cast<std::size_t>(h) * hd);
    }
  });
  for (int h = 0; h < count; ++h) {
    for (int d = 0; d < hd; ++d) out[static_cast<std::size_t>(h) * hd + d] /= totals[h];
  }
}

std::vector<float> ForwardPass::finish(bool row_by_row) {
  const OpTimer t(profile_, StepOp::logits);
  const ModelConfig& c = model_.config();
  const int hidden = static_cast<int>(c.hidden_size);
  std::vector<int> wanted;  // rows whose logits are returned
  for (int r = 0; r < rows_; ++r) {
    const bool last_of_step = r + 1 == rows_ || row_step_[r + 1] != row_step_[r];
    if (logits_for_ == LogitsFor::every_token || last_of_step) wanted.push_back(r);
  }
  std::vector<float> normed(wanted.size() * hidden);
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    rms_norm(scratch_.x.data() + static_cast<std::size_t>(wanted[i]) * hidden,
             normed.data() + i * hidden, 1, hidden, model_.final_norm().data(), c.rms_norm_eps);
  }
  const auto vocab = static_cast<std::size_t>(c.vocab_size);
  std::vector<float> logits(wanted.size() * vocab);
  if (row_by_row) {
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      linear(model_.pool(), normed.data() + i * hidden, 1, model_.output(), nullptr,
             logits.data() + i * vocab);
    }
  } else {
    linear(model_.pool(), normed.data(), static_cast<int>(wanted.size()), model_.output(), nullptr,
           logits.data());
  }
  for (SequenceStep& step : steps_) step.sequence->length += static_cast<int>(step.tokens.size());
  return logits;
}

std::vector<float> ForwardPass::finish_hidden() {
  const ModelConfig& c = model_.config();
  const int hidden = static_cast<int>(c.hidden_size);
  std::vector<float> normed(static_cast<std::size_t>(rows_) * hidden);
  rms_norm(scratch_.x.data(), normed.data(), rows_, hidden, model_.final_norm().data(),
           c.rms_norm_eps);
  for (SequenceStep& step : steps_) step.sequence->length += static_cast<int>(step.tokens.size());
  return normed;
}

KvCache::KvCache(const ModelConfig& config, int capacity)
    : capacity_((capacity + kBlockTokens - 1) / kBlockTokens * kBlockTokens),
      pool_(config, kBlockTokens,
            KvBlockPool::block_bytes(config, kBlockTokens) *
                static_cast<std::size_t>(std::max(1, capacity_ / kBlockTokens))),
      memory_(config, pool_) {
  for (int b = 0; b < capacity_ / kBlockTokens; ++b) sequence_.blocks.push_back(*pool_.allocate());
}

std::vector<float> forward(const LlamaModel& model, std::span<const TokenId> tokens, KvCache& cache,
                           const std::function<void()>& between_layers, LogitsFor logits_for,
                           StepProfile* profile) {
  ForwardPass pass(model, cache.memory_, {{{tokens.begin(), tokens.end()}, &cache.sequence_}},
                   logits_for);
  pass.profile_into(profile);
  for (int i = 0; i < pass.layers(); ++i) {
    pass.run_layer(i);
    if (between_layers && i + 1 < pass.layers()) between_layers();
  }
  return pass.finish();
}

}  // namespace baton
