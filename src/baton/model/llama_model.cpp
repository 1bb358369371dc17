#include "baton/model/llama_model.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "baton/model/model_file_error.h"
#include "baton/model/rope.h"

namespace baton {
namespace {

// Loads tensor `name` as f32 after checking its shape.
std::vector<float> load_tensor(const ModelWeights& weights, const std::string& name,
                               std::vector<std::int64_t> shape) {
  const TensorView& t = weights.at(name);
  if (t.shape != shape) {
    std::string want;
    for (std::int64_t d : shape) want += (want.empty() ? "" : " x ") + std::to_string(d);
    throw ModelFileError(
        t.file, "tensor '" + name + "' has the wrong shape; the config wants [" + want + "]");
  }
  return to_float(t);
}

std::vector<float> load_optional(const ModelWeights& weights, const std::string& name,
                                 std::vector<std::int64_t> shape, bool wanted) {
  return wanted ? load_tensor(weights, name, std::move(shape)) : std::vector<float>{};
}

// y[rows x out] = x[rows x in] * w[out x in]^T (+ bias), the layout of a torch Linear.
void linear(const std::vector<float>& x, int rows, int in, const std::vector<float>& w, int out,
            const std::vector<float>& bias, std::vector<float>& y) {
  y.assign(static_cast<std::size_t>(rows) * out, 0.0f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in, 1.0f, x.data(), in, w.data(),
              in, 0.0f, y.data(), out);
  if (bias.empty()) return;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < out; ++c) y[static_cast<std::size_t>(r) * out + c] += bias[c];
  }
}

// RMSNorm of each `width` row of x into y: x / sqrt(mean(x^2) + eps) * weight.
void rms_norm(const float* x, float* y, int rows, int width, const std::vector<float>& weight,
              double eps) {
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<std::size_t>(r) * width;
    float* out = y + static_cast<std::size_t>(r) * width;
    float sum = 0.0f;
    for (int i = 0; i < width; ++i) sum += in[i] * in[i];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(width) + static_cast<float>(eps));
    for (int i = 0; i < width; ++i) out[i] = weight[i] * (in[i] * scale);
  }
}

}  // namespace

KvCache::KvCache(const ModelConfig& config, int capacity)
    : capacity_(capacity),
      keys_(config.num_layers, std::vector<float>(static_cast<std::size_t>(capacity) *
                                                  config.num_kv_heads * config.head_dim)),
      values_(keys_) {}

LlamaModel LlamaModel::load(const std::filesystem::path& directory) {
  return LlamaModel(read_model_config(directory), ModelWeights::open(directory));
}

LlamaModel::LlamaModel(ModelConfig config, const ModelWeights& weights)
    : config_(std::move(config)), inverse_frequencies_(rope_inverse_frequencies(config_)) {
  const ModelConfig& c = config_;
  const std::int64_t q_dim = c.num_heads * c.head_dim;
  const std::int64_t kv_dim = c.num_kv_heads * c.head_dim;
  embed_ = load_tensor(weights, "model.embed_tokens.weight", {c.vocab_size, c.hidden_size});
  if (!c.tie_word_embeddings || weights.find("lm_head.weight") != nullptr) {
    lm_head_ = load_tensor(weights, "lm_head.weight", {c.vocab_size, c.hidden_size});
  }
  final_norm_ = load_tensor(weights, "model.norm.weight", {c.hidden_size});
  for (std::int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    Layer l;
    l.attn_norm = load_tensor(weights, p + "input_layernorm.weight", {c.hidden_size});
    l.q = load_tensor(weights, p + "self_attn.q_proj.weight", {q_dim, c.hidden_size});
    l.k = load_tensor(weights, p + "self_attn.k_proj.weight", {kv_dim, c.hidden_size});
    l.v = load_tensor(weights, p + "self_attn.v_proj.weight", {kv_dim, c.hidden_size});
    l.o = load_tensor(weights, p + "self_attn.o_proj.weight", {c.hidden_size, q_dim});
    l.q_bias = load_optional(weights, p + "self_attn.q_proj.bias", {q_dim}, c.attention_bias);
    l.k_bias = load_optional(weights, p + "self_attn.k_proj.bias", {kv_dim}, c.attention_bias);
    l.v_bias = load_optional(weights, p + "self_attn.v_proj.bias", {kv_dim}, c.attention_bias);
    l.q_norm = load_optional(weights, p + "self_attn.q_norm.weight", {c.head_dim}, c.qk_norm);
    l.k_norm = load_optional(weights, p + "self_attn.k_norm.weight", {c.head_dim}, c.qk_norm);
    l.mlp_norm = load_tensor(weights, p + "post_attention_layernorm.weight", {c.hidden_size});
    l.gate = load_tensor(weights, p + "mlp.gate_proj.weight", {c.intermediate_size, c.hidden_size});
    l.up = load_tensor(weights, p + "mlp.up_proj.weight", {c.intermediate_size, c.hidden_size});
    l.down = load_tensor(weights, p + "mlp.down_proj.weight", {c.hidden_size, c.intermediate_size});
    layers_.push_back(std::move(l));
  }
}

std::vector<float> LlamaModel::forward(std::span<const TokenId> tokens, KvCache& cache,
                                       const std::function<void()>& between_layers) const {
  const ModelConfig& c = config_;
  const int count = static_cast<int>(tokens.size());
  const int hidden = static_cast<int>(c.hidden_size);
  if (cache.length_ + count > cache.capacity_) {
    throw std::length_error("the KV cache holds " + std::to_string(cache.capacity_) + " tokens");
  }
  std::vector<float> x(static_cast<std::size_t>(count) * hidden);
  for (int t = 0; t < count; ++t) {
    if (tokens[t] < 0 || tokens[t] >= c.vocab_size) {
      throw std::out_of_range("token id " + std::to_string(tokens[t]) + " outside the vocabulary");
    }
    std::copy_n(embed_.begin() + static_cast<std::ptrdiff_t>(tokens[t]) * hidden, hidden,
                x.begin() + static_cast<std::ptrdiff_t>(t) * hidden);
  }
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    attention(layers_[i], static_cast<int>(i), x, count, cache);
    mlp(layers_[i], x, count);
    if (between_layers && i + 1 < layers_.size()) between_layers();
  }
  cache.length_ += count;
  std::vector<float> normed(x.size());
  rms_norm(x.data(), normed.data(), count, hidden, final_norm_, c.rms_norm_eps);
  std::vector<float> logits;
  linear(normed, count, hidden, lm_head_.empty() ? embed_ : lm_head_,
         static_cast<int>(c.vocab_size), {}, logits);
  return logits;
}

void LlamaModel::attention(const Layer& l, int layer_index, std::vector<float>& x, int count,
                           KvCache& cache) const {
  const ModelConfig& c = config_;
  const int hidden = static_cast<int>(c.hidden_size);
  const int heads = static_cast<int>(c.num_heads);
  const int kv_heads = static_cast<int>(c.num_kv_heads);
  const int hd = static_cast<int>(c.head_dim);
  std::vector<float> h(x.size());
  rms_norm(x.data(), h.data(), count, hidden, l.attn_norm, c.rms_norm_eps);
  std::vector<float> q, k, v;
  linear(h, count, hidden, l.q, heads * hd, l.q_bias, q);
  linear(h, count, hidden, l.k, kv_heads * hd, l.k_bias, k);
  linear(h, count, hidden, l.v, kv_heads * hd, l.v_bias, v);
  std::vector<float>& keys = cache.keys_[layer_index];
  std::vector<float>& values = cache.values_[layer_index];
  const std::size_t kv_row = static_cast<std::size_t>(kv_heads) * hd;
  for (int t = 0; t < count; ++t) {
    const int pos = cache.length_ + t;
    float* qt = q.data() + static_cast<std::size_t>(t) * heads * hd;
    float* kt = k.data() + static_cast<std::size_t>(t) * kv_row;
    if (!l.q_norm.empty()) {
      rms_norm(qt, qt, heads, hd, l.q_norm, c.rms_norm_eps);
      rms_norm(kt, kt, kv_heads, hd, l.k_norm, c.rms_norm_eps);
    }
    apply_rope({qt, static_cast<std::size_t>(heads) * hd}, heads, hd, pos, inverse_frequencies_);
    apply_rope({kt, kv_row}, kv_heads, hd, pos, inverse_frequencies_);
    std::copy_n(kt, kv_row, keys.begin() + static_cast<std::ptrdiff_t>(pos * kv_row));
    std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(t * kv_row), kv_row,
                values.begin() + static_cast<std::ptrdiff_t>(pos * kv_row));
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int group = heads / kv_heads;
  std::vector<float> out(static_cast<std::size_t>(count) * heads * hd, 0.0f);
  std::vector<float> scores;
  for (int t = 0; t < count; ++t) {
    const int pos = cache.length_ + t;
    const int first =
        c.sliding_window ? std::max(0, pos - static_cast<int>(*c.sliding_window) + 1) : 0;
    for (int head = 0; head < heads; ++head) {
      const float* qh = q.data() + (static_cast<std::size_t>(t) * heads + head) * hd;
      const std::size_t kv_offset = static_cast<std::size_t>(head / group) * hd;
      scores.assign(pos - first + 1, 0.0f);
      float best = -INFINITY;
      for (int j = first; j <= pos; ++j) {
        const float* kj = keys.data() + j * kv_row + kv_offset;
        float dot = 0.0f;
        for (int d = 0; d < hd; ++d) dot += qh[d] * kj[d];
        scores[j - first] = dot * scale;
        best = std::max(best, scores[j - first]);
      }
      float total = 0.0f;
      for (float& s : scores) total += (s = std::exp(s - best));
      float* oh = out.data() + (static_cast<std::size_t>(t) * heads + head) * hd;
      for (int j = first; j <= pos; ++j) {
        const float p = scores[j - first] / total;
        const float* vj = values.data() + j * kv_row + kv_offset;
        for (int d = 0; d < hd; ++d) oh[d] += p * vj[d];
      }
    }
  }
  std::vector<float> projected;
  linear(out, count, heads * hd, l.o, hidden, {}, projected);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += projected[i];
}

void LlamaModel::mlp(const Layer& l, std::vector<float>& x, int count) const {
  const int hidden = static_cast<int>(config_.hidden_size);
  const int inner = static_cast<int>(config_.intermediate_size);
  std::vector<float> h(x.size());
  rms_norm(x.data(), h.data(), count, hidden, l.mlp_norm, config_.rms_norm_eps);
  std::vector<float> gate, up, down;
  linear(h, count, hidden, l.gate, inner, {}, gate);
  linear(h, count, hidden, l.up, inner, {}, up);
  for (std::size_t i = 0; i < gate.size(); ++i) {
    gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];  // SiLU(gate) * up
  }
  linear(gate, count, inner, l.down, hidden, {}, down);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += down[i];
}

}  // namespace baton
