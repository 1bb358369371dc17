#include "baton/model/llama_model.h"

#include <malloc.h>

#include "baton/model/config/config_reader.h"
#include "baton/model/cpu/kernels/cpu_kernels.h"
#include "baton/model/cpu/rope.h"
#include "baton/model/files/ggml_blocks.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/weights/e4m3_rounding.h"

namespace baton {
namespace {

// "model." for a *ForCausalLM checkpoint, "" for a base model's export (*Model).
std::string tensor_prefix(const ModelWeights& weights, const std::string& source) {
  if (weights.find("model.embed_tokens.weight") != nullptr) return "model.";
  if (weights.find("embed_tokens.weight") != nullptr) return "";
  throw ModelFileError(source,
                       "no tensor 'model.embed_tokens.weight' (a *ForCausalLM checkpoint) nor "
                       "'embed_tokens.weight' (a base model's export)");
}

// The format a model is held in when the user names none: 8 bits for a GGUF file whose
// quantized tensors are all Q8_0, which run on the q8 kernels as they are; else bf16 (a
// mixed file's other types would be quantized again).
WeightFormat stored_format(const ModelWeights& weights) {
  bool any_q8_0 = false;
  for (const std::string_view name : weights.names()) {
    const std::optional<std::uint32_t> type = weights.at(name).ggml_type;
    if (!type || !ggml_quantized(*type)) continue;
    if (*type != kGgmlQ8_0) return WeightFormat::bf16;
    any_q8_0 = true;
  }
  return any_q8_0 ? WeightFormat::q8 : WeightFormat::bf16;
}

}  // namespace

LlamaModel LlamaModel::load(const ModelSource& source, ModelLoadOptions options) {
  ModelConfig config = read_model_config(source);  // first: it names what is missing
  LlamaModel model(std::move(config), ModelWeights::open(source), options, source.path().string());
  return model;
}

LlamaModel::LlamaModel(ModelConfig config, ModelWeights weights, ModelLoadOptions options,
                       std::string source)
    : config_(std::move(config)),
      source_(std::move(source)),
      device_precision_(options.device_precision),
      weights_(std::move(weights)),
      inverse_frequencies_(rope_inverse_frequencies(config_)),
      pool_(std::make_unique<ThreadPool>(options.threads > 0 ? options.threads
                                                             : default_cpu_threads())) {
  use_single_threaded_blas();
  const ModelConfig& c = config_;
  const std::int64_t q_dim = c.num_heads * c.head_dim;
  const std::int64_t kv_dim = c.num_kv_heads * c.head_dim;
  const std::string prefix = tensor_prefix(weights_, source_);
  const WeightFormat format =
      options.weights ? *options.weights : stored_format(weights_);
  const auto matrix = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    return WeightMatrix::load(weights_, name, rows, cols, format, options.use);
  };
  // A matrix a GPU holds in fp8 with `--weights fp8` (all but the embedding).
  const auto device_matrix = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    if (!options.emulate_fp8) return matrix(name, rows, cols);
    return WeightMatrix::with_rounded_rows(
        matrix(name, rows, cols), name, [&](float* row, int width) {
          round_row_through_e4m3(row, width, options.emulate_fp8_group);
        });
  };
  const auto optional = [&](const std::string& name, std::int64_t size, bool wanted) {
    return wanted ? load_vector(weights_, name, size) : std::vector<float>{};
  };
  std::uint64_t total = 0;
  for (const std::filesystem::path& file : weights_.files())
    total += std::filesystem::file_size(file);
  const auto report = [&](std::int64_t layers_done) {
    if (options.progress) {
      options.progress(total * static_cast<std::uint64_t>(layers_done + 1) /
                           static_cast<std::uint64_t>(c.num_layers + 1),
                       total);
    }
  };
  embed_ = matrix(prefix + "embed_tokens.weight", c.vocab_size, c.hidden_size);
  // Untied without lm_head: a base model's export, for embeddings (generates_text() false).
  if (weights_.find("lm_head.weight") != nullptr) {
    lm_head_ = device_matrix("lm_head.weight", c.vocab_size, c.hidden_size);
  }
  final_norm_ = load_vector(weights_, prefix + "norm.weight", c.hidden_size);
  report(0);
  for (std::int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = prefix + "layers." + std::to_string(i) + ".";
    Layer l;
    l.attn_norm = load_vector(weights_, p + "input_layernorm.weight", c.hidden_size);
    l.q = device_matrix(p + "self_attn.q_proj.weight", q_dim, c.hidden_size);
    l.k = device_matrix(p + "self_attn.k_proj.weight", kv_dim, c.hidden_size);
    l.v = device_matrix(p + "self_attn.v_proj.weight", kv_dim, c.hidden_size);
    l.o = device_matrix(p + "self_attn.o_proj.weight", c.hidden_size, q_dim);
    l.q_bias = optional(p + "self_attn.q_proj.bias", q_dim, c.attention_bias);
    l.k_bias = optional(p + "self_attn.k_proj.bias", kv_dim, c.attention_bias);
    l.v_bias = optional(p + "self_attn.v_proj.bias", kv_dim, c.attention_bias);
    l.q_norm = optional(p + "self_attn.q_norm.weight", c.head_dim, c.qk_norm);
    l.k_norm = optional(p + "self_attn.k_norm.weight", c.head_dim, c.qk_norm);
    l.mlp_norm = load_vector(weights_, p + "post_attention_layernorm.weight", c.hidden_size);
    l.gate = device_matrix(p + "mlp.gate_proj.weight", c.intermediate_size, c.hidden_size);
    l.up = device_matrix(p + "mlp.up_proj.weight", c.intermediate_size, c.hidden_size);
    l.down = device_matrix(p + "mlp.down_proj.weight", c.hidden_size, c.intermediate_size);
    layers_.push_back(std::move(l));
    report(i + 1);
  }
  // The staging copies (dequantized values, widened rows) are freed; hand their heap pages
  // back too, or the process keeps them as if they were still held.
  ::malloc_trim(0);
}

namespace {

// The sum of `measure` over the matrices a token reads: the output and every layer's.
template <typename Measure>
std::size_t sum_matrices(const LlamaModel& model, Measure measure) {
  std::size_t total = measure(model.output());
  for (const LlamaModel::Layer& l : model.layers()) {
    for (const WeightMatrix* m : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
      total += measure(*m);
    }
  }
  return total;
}

}  // namespace

std::size_t LlamaModel::weight_bytes() const {
  return sum_matrices(*this, [](const WeightMatrix& m) { return m.bytes(); });
}

namespace {

// Every matrix the model holds (the embedding and output once each) and every vector.
template <typename Matrix, typename Vector>
std::size_t sum_all(const LlamaModel& model, Matrix matrix, Vector vector) {
  std::size_t total = matrix(model.embedding()) + vector(model.final_norm()) +
                      vector(model.inverse_frequencies());
  if (&model.output() != &model.embedding()) total += matrix(model.output());
  for (const LlamaModel::Layer& l : model.layers()) {
    for (const WeightMatrix* m : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
      total += matrix(*m);
    }
    for (const std::vector<float>* v :
         {&l.attn_norm, &l.q_bias, &l.k_bias, &l.v_bias, &l.q_norm, &l.k_norm, &l.mlp_norm}) {
      total += vector(*v);
    }
  }
  return total;
}

std::size_t vector_bytes(const std::vector<float>& v) { return v.size() * sizeof(float); }

}  // namespace

std::size_t LlamaModel::host_bytes() const {
  const bool pages = pages_released_->load(std::memory_order_relaxed);
  const bool copies = copies_released_->load(std::memory_order_relaxed);
  return sum_all(
      *this,
      [pages, copies](const WeightMatrix& m) -> std::size_t {
        if (m.in_map()) return pages ? 0 : m.bytes();
        return copies ? m.bytes() - m.releasable_bytes() : m.bytes();
      },
      vector_bytes);
}

std::size_t LlamaModel::upload_bytes() const {
  const bool fp8 = device_precision_ == DevicePrecision::fp8;
  return sum_all(
      *this,
      [this, fp8](const WeightMatrix& m) {
        const auto rows = static_cast<std::size_t>(m.rows());
        const std::size_t elements = rows * static_cast<std::size_t>(m.cols());
        if (&m == &embed_) return elements * 2;
        if (fp8) return elements + rows * sizeof(float);
        return m.stays_q8_on_device() ? m.q8().bytes() : elements * 2;
      },
      vector_bytes);
}

void LlamaModel::release_host_pages() const {
  weights_.release_resident();
  pages_released_->store(true, std::memory_order_relaxed);
}

std::size_t LlamaModel::release_host_copies() {
  if (copies_released_->exchange(true, std::memory_order_acq_rel)) return 0;
  std::size_t released = embed_.release_host_copy() + lm_head_.release_host_copy();
  for (Layer& l : layers_) {
    for (WeightMatrix* m : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
      released += m->release_host_copy();
    }
  }
  return released;
}

std::size_t LlamaModel::weight_count() const {
  return sum_matrices(*this, [](const WeightMatrix& m) {
    return static_cast<std::size_t>(m.rows()) * static_cast<std::size_t>(m.cols());
  });
}

}  // namespace baton
