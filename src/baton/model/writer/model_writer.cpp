#include "baton/model/writer/model_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numbers>
#include <random>
#include <stdexcept>
#include <system_error>

#include "baton/common/thread_pool.h"
#include "baton/model/files/half.h"
#include "baton/model/writer/tokenizer_writer.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little, "safetensors data are little-endian");

// Far above real models (vocab 262144, hidden 16384, 126 layers), and low enough that
// every count of elements fits in an int64.
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 20;
constexpr std::int64_t kMaxLayers = 1024;
constexpr double kInitializerRange = 0.02;  // transformers' init std, in config.json
constexpr float kInitStd = 0.02f;
constexpr std::size_t kChunkElements = 1u << 16;        // what is generated and written at once
constexpr const char* kTransformersVersion = "5.17.0";  // the format written

[[noreturn]] void bad_shape(const std::string& problem) {
  throw std::invalid_argument("model shape: " + problem);
}

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  bool ones = false;  // a norm weight; else normal(0, kInitStd)

  std::int64_t elements() const {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
  }
};

void add_layer_specs(ModelArch arch, const ModelShape& s, std::int64_t layer,
                     std::vector<TensorSpec>& specs) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  const std::int64_t h = s.hidden_size;
  const std::int64_t q = s.num_heads * s.head_dim;
  const std::int64_t kv = s.num_kv_heads * s.head_dim;
  const std::int64_t inner = s.intermediate_size;
  specs.push_back({p + "input_layernorm.weight", {h}, true});
  specs.push_back({p + "self_attn.q_proj.weight", {q, h}});
  specs.push_back({p + "self_attn.k_proj.weight", {kv, h}});
  specs.push_back({p + "self_attn.v_proj.weight", {kv, h}});
  specs.push_back({p + "self_attn.o_proj.weight", {h, q}});
  if (arch == ModelArch::qwen2) {
    specs.push_back({p + "self_attn.q_proj.bias", {q}});
    specs.push_back({p + "self_attn.k_proj.bias", {kv}});
    specs.push_back({p + "self_attn.v_proj.bias", {kv}});
  }
  if (arch == ModelArch::qwen3) {
    specs.push_back({p + "self_attn.q_norm.weight", {s.head_dim}, true});
    specs.push_back({p + "self_attn.k_norm.weight", {s.head_dim}, true});
  }
  specs.push_back({p + "post_attention_layernorm.weight", {h}, true});
  specs.push_back({p + "mlp.gate_proj.weight", {inner, h}});
  specs.push_back({p + "mlp.up_proj.weight", {inner, h}});
  specs.push_back({p + "mlp.down_proj.weight", {h, inner}});
}

// The tensors LlamaModel reads, sorted by name: the order of the file and of the draws.
std::vector<TensorSpec> tensor_specs(ModelArch arch, const ModelShape& s) {
  std::vector<TensorSpec> specs{
      {.name = "model.embed_tokens.weight", .shape = {s.vocab_size, s.hidden_size}},
      {.name = "model.norm.weight", .shape = {s.hidden_size}, .ones = true}};
  if (!s.tie_word_embeddings) specs.push_back({"lm_head.weight", {s.vocab_size, s.hidden_size}});
  for (std::int64_t i = 0; i < s.num_layers; ++i) add_layer_specs(arch, s, i, specs);
  std::sort(specs.begin(), specs.end(),
            [](const TensorSpec& a, const TensorSpec& b) { return a.name < b.name; });
  return specs;
}

// Normal draws by Box-Muller on the engine's 64-bit words. std::normal_distribution's
// algorithm differs between standard libraries; mt19937_64's output does not.
class NormalSource {
 public:
  explicit NormalSource(std::uint64_t seed) : engine_(seed) {}

  float next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = (static_cast<double>(engine_() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
    const double u2 = static_cast<double>(engine_() >> 11) * 0x1p-53;          // [0, 1)
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    spare_ = static_cast<float>(r * std::sin(angle));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(angle));
  }

 private:
  std::mt19937_64 engine_;
  float spare_ = 0.0f;
  bool has_spare_ = false;
};

// A file written through stdio and flushed to the disk on close(), so that the rename that
// publishes it cannot reach the disk before its data. Errors throw std::system_error.
class OutputFile {
 public:
  explicit OutputFile(fs::path path)
      : path_(std::move(path)), file_(std::fopen(path_.c_str(), "wb")) {
    if (file_ == nullptr) fail("cannot be created");
  }
  ~OutputFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, std::size_t size) {
    if (std::fwrite(data, 1, size, file_) != size) fail("cannot be written");
  }
  void close() {
    const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
    const int error = errno;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!flushed) errno = error;
    if (!flushed || !closed) fail("cannot be written");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::system_error(errno, std::generic_category(), path_.string() + " " + what);
  }

  fs::path path_;
  std::FILE* file_;
};

void write_text(const fs::path& path, const std::string& text) {
  OutputFile file(path);
  file.write(text.data(), text.size());
  file.close();
}

// The JSON header, padded with spaces to a multiple of 8 bytes as the safetensors library
// does, so that the data section starts aligned.
std::string safetensors_header(const std::vector<TensorSpec>& specs, std::size_t element_size) {
  json header = {{"__metadata__", {{"format", "pt"}}}};
  std::uint64_t offset = 0;
  for (const TensorSpec& t : specs) {
    const std::uint64_t end = offset + static_cast<std::uint64_t>(t.elements()) * element_size;
    header[t.name] = {{"dtype", element_size == 2 ? "BF16" : "F32"},
                      {"shape", t.shape},
                      {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// One tensor's data, generated and written a chunk at a time.
// Tensor data written so far, reported to a WriteProgress after every chunk.
struct ProgressCount {
  const WriteProgress& report;
  std::uint64_t total = 0;
  std::uint64_t done = 0;

  void add(std::uint64_t bytes) {
    done += bytes;
    if (report) report(done, total);
  }
};

// One chunk of a tensor's values: its own normal source, seeded by the model's seed and the
// chunk's index in the file, so that chunks can be drawn on several threads and the bytes
// still depend only on the seed.
struct Chunk {
  const TensorSpec* tensor = nullptr;
  std::size_t elements = 0;
  std::uint64_t index = 0;
};

void draw(const Chunk& c, std::uint64_t seed, bool bf16, std::vector<unsigned char>& out) {
  NormalSource normal(seed ^ (0x9e3779b97f4a7c15ull * (c.index + 1)));
  out.resize(c.elements * (bf16 ? sizeof(std::uint16_t) : sizeof(float)));
  for (std::size_t i = 0; i < c.elements; ++i) {
    const float v = c.tensor->ones ? 1.0f : kInitStd * normal.next();
    if (bf16) {
      const std::uint16_t half = float_to_bf16(v);
      std::memcpy(out.data() + i * sizeof half, &half, sizeof half);
    } else {
      std::memcpy(out.data() + i * sizeof v, &v, sizeof v);
    }
  }
}

void write_tensors(OutputFile& file, const std::vector<TensorSpec>& specs, bool bf16,
                   std::uint64_t seed, ProgressCount& progress) {
  std::vector<Chunk> chunks;
  for (const TensorSpec& t : specs) {
    for (std::int64_t left = t.elements(); left > 0;) {
      const std::size_t n = std::min<std::size_t>(kChunkElements, static_cast<std::size_t>(left));
      chunks.push_back({.tensor = &t, .elements = n, .index = chunks.size()});
      left -= static_cast<std::int64_t>(n);
    }
  }
  ThreadPool pool(default_cpu_threads());
  const std::size_t batch = 64;  // chunks drawn together, then written in order
  std::vector<std::vector<unsigned char>> drawn(batch);
  for (std::size_t first = 0; first < chunks.size(); first += batch) {
    const std::size_t count = std::min(batch, chunks.size() - first);
    pool.parallel_for(count, [&](std::size_t i) { draw(chunks[first + i], seed, bf16, drawn[i]); });
    for (std::size_t i = 0; i < count; ++i) {
      file.write(drawn[i].data(), drawn[i].size());
      progress.add(drawn[i].size());
    }
  }
}

void write_safetensors(const fs::path& path, const std::vector<TensorSpec>& specs,
                       const std::string& dtype, std::uint64_t seed, ProgressCount& progress) {
  const bool bf16 = dtype == "bfloat16";
  const std::string header = safetensors_header(specs, bf16 ? 2 : 4);
  OutputFile file(path);
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  file.write(length, sizeof length);
  file.write(header.data(), header.size());
  write_tensors(file, specs, bf16, seed, progress);
  file.close();
}

const char* architecture_class(ModelArch arch) {
  switch (arch) {
    case ModelArch::llama:
      return "LlamaForCausalLM";
    case ModelArch::mistral:
      return "MistralForCausalLM";
    case ModelArch::qwen2:
      return "Qwen2ForCausalLM";
    case ModelArch::qwen3:
      return "Qwen3ForCausalLM";
  }
  return "LlamaForCausalLM";
}

json config_json(ModelArch arch, const ModelShape& s, const MadeTokenizer& tokenizer) {
  json c = {{"architectures", json::array({architecture_class(arch)})},
            {"attention_dropout", 0.0},
            {"bos_token_id", tokenizer.bos_id ? json(*tokenizer.bos_id) : json()},
            {"dtype", s.dtype},
            {"eos_token_id", tokenizer.eos_ids},
            {"hidden_act", "silu"},
            {"hidden_size", s.hidden_size},
            {"initializer_range", kInitializerRange},
            {"intermediate_size", s.intermediate_size},
            {"max_position_embeddings", s.max_position_embeddings},
            {"model_type", std::string(to_string(arch))},
            {"num_attention_heads", s.num_heads},
            {"num_hidden_layers", s.num_layers},
            {"num_key_value_heads", s.num_kv_heads},
            {"pad_token_id", nullptr},
            {"rms_norm_eps", s.rms_norm_eps},
            {"rope_parameters", {{"rope_theta", s.rope_theta}, {"rope_type", "default"}}},
            {"tie_word_embeddings", s.tie_word_embeddings},
            {"transformers_version", kTransformersVersion},
            {"use_cache", true},
            {"vocab_size", s.vocab_size}};
  // The keys of each config class beyond the common ones (transformers 5.17 output;
  // Qwen2Config has no attention_bias: its q/k/v bias is always on).
  if (arch == ModelArch::llama) {
    c.update({{"attention_bias", false},
              {"head_dim", s.head_dim},
              {"mlp_bias", false},
              {"pretraining_tp", 1}});
    return c;
  }
  c.update({{"layer_types", std::vector<std::string>(s.num_layers, "full_attention")},
            {"max_window_layers", 28},
            {"sliding_window", nullptr},
            {"use_sliding_window", false}});
  if (arch == ModelArch::qwen3) c.update({{"attention_bias", false}, {"head_dim", s.head_dim}});
  return c;
}

json generation_config_json(const MadeTokenizer& tokenizer) {
  return {{"bos_token_id", tokenizer.bos_id ? json(*tokenizer.bos_id) : json()},
          {"eos_token_id", tokenizer.eos_ids},
          {"transformers_version", kTransformersVersion}};
}

// A fresh directory beside the target that the files are written into, removed on the way
// out unless publish() moved it into place.
class StagingDirectory {
 public:
  // mkdir with a random name rather than mkdtemp: the directory may become the model's,
  // so it takes the umask's permissions, not mkdtemp's 0700.
  explicit StagingDirectory(const fs::path& target) : target_(target) {
    std::random_device entropy;
    for (int attempt = 0; attempt < 100; ++attempt) {
      fs::path candidate = target.parent_path() / ("." + target.filename().string() + ".partial-" +
                                                   std::to_string(entropy()));
      if (fs::create_directory(candidate)) {
        path_ = std::move(candidate);
        return;
      }
    }
    throw std::runtime_error("cannot create a staging directory beside " + target.string());
  }
  ~StagingDirectory() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  StagingDirectory(const StagingDirectory&) = delete;
  StagingDirectory& operator=(const StagingDirectory&) = delete;

  const fs::path& path() const { return path_; }

  // A missing or empty target becomes the staging directory in one rename; into another,
  // the files move one by one, in the order given.
  void publish(const std::vector<std::string>& names) {
    if (!fs::exists(target_) || fs::is_empty(target_)) {
      fs::rename(path_, target_);
    } else {
      for (const std::string& name : names) fs::rename(path_ / name, target_ / name);
      fs::remove(path_);
    }
    path_.clear();
  }

 private:
  fs::path target_;
  fs::path path_;
};

ModelShape tiny_shape(ModelArch arch) {
  ModelShape s;
  if (arch == ModelArch::llama) {  // Llama 3's family values
    s.rope_theta = 500000.0;
    s.rms_norm_eps = 1e-5;
  } else {  // Qwen2.5 and Qwen3 tie the small models' embeddings
    s.rope_theta = 1000000.0;
    s.tie_word_embeddings = true;
  }
  return s;
}

ModelShape qwen25_05b_shape() {
  ModelShape s;
  s.vocab_size = 151936;
  s.hidden_size = 896;
  s.intermediate_size = 4864;
  s.num_layers = 24;
  s.num_heads = 14;
  s.num_kv_heads = 2;
  s.head_dim = 64;
  s.max_position_embeddings = 32768;
  s.tie_word_embeddings = true;
  s.rope_theta = 1000000.0;
  s.rms_norm_eps = 1e-6;
  return s;
}

// Llama-3.1-8B's shapes (its RoPE scaling left out: make-model writes plain RoPE).
ModelShape llama3_8b_shape() {
  ModelShape s;
  s.vocab_size = 128256;
  s.hidden_size = 4096;
  s.intermediate_size = 14336;
  s.num_layers = 32;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.max_position_embeddings = 131072;
  s.tie_word_embeddings = false;
  s.rope_theta = 500000.0;
  s.rms_norm_eps = 1e-5;
  return s;
}

}  // namespace

ModelArch writable_arch(std::string_view name) {
  if (name == "llama") return ModelArch::llama;
  if (name == "qwen2") return ModelArch::qwen2;
  if (name == "qwen3") return ModelArch::qwen3;
  throw std::invalid_argument("unknown arch '" + std::string(name) +
                              "'; known: llama, qwen2, qwen3");
}

ModelShape model_shape(std::string_view name, ModelArch arch) {
  if (name == "tiny") return tiny_shape(arch);
  if (name == "qwen2.5-0.5b") return qwen25_05b_shape();
  if (name == "llama-3-8b") return llama3_8b_shape();
  throw std::invalid_argument("unknown shape '" + std::string(name) +
                              "'; known: tiny, qwen2.5-0.5b, llama-3-8b");
}

void check_shape(ModelArch arch, const ModelShape& s) {
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"vocab_size", s.vocab_size},
      {"hidden_size", s.hidden_size},
      {"intermediate_size", s.intermediate_size},
      {"num_heads", s.num_heads},
      {"num_kv_heads", s.num_kv_heads},
      {"head_dim", s.head_dim},
      {"max_position_embeddings", s.max_position_embeddings}};
  for (const auto& [name, value] : sizes) {
    if (value <= 0 || value > kMaxDimension) {
      bad_shape(std::string(name) + " must be in 1.." + std::to_string(kMaxDimension));
    }
  }
  if (s.num_layers <= 0 || s.num_layers > kMaxLayers) {
    bad_shape("num_layers must be in 1.." + std::to_string(kMaxLayers));
  }
  if (s.num_heads % s.num_kv_heads != 0) bad_shape("num_kv_heads must divide num_heads");
  if (s.head_dim % 2 != 0) bad_shape("head_dim must be even (rotary positions)");
  if (arch == ModelArch::qwen2 && s.head_dim * s.num_heads != s.hidden_size) {
    bad_shape("qwen2 needs head_dim * num_heads == hidden_size (its config has no head_dim)");
  }
  if (s.dtype != "bfloat16" && s.dtype != "float32") bad_shape("dtype must be bfloat16 or float32");
  if (!(s.rope_theta > 0.0) || !(s.rms_norm_eps > 0.0)) {
    bad_shape("rope_theta and rms_norm_eps must be positive");
  }
}

std::int64_t parameter_count(ModelArch arch, const ModelShape& shape) {
  std::int64_t total = 0;
  for (const TensorSpec& t : tensor_specs(arch, shape)) total += t.elements();
  return total;
}

std::uint64_t weight_bytes(ModelArch arch, const ModelShape& shape) {
  const std::uint64_t element = shape.dtype == "bfloat16" ? 2 : 4;
  return static_cast<std::uint64_t>(parameter_count(arch, shape)) * element;
}

WrittenModel write_model(const fs::path& directory, ModelArch arch, const ModelShape& shape,
                         std::uint64_t seed, const WriteProgress& progress) {
  check_shape(arch, shape);
  const MadeTokenizer tokenizer = make_tokenizer(arch);
  if (shape.vocab_size < tokenizer.size) {
    bad_shape("vocab_size " + std::to_string(shape.vocab_size) + " is below the tokenizer's " +
              std::to_string(tokenizer.size) + " tokens");
  }
  fs::path target = fs::absolute(directory).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "out/"
  fs::create_directories(target.parent_path());
  StagingDirectory staging(target);
  WrittenModel written{.directory = target,
                       .files = {},
                       .parameters = parameter_count(arch, shape),
                       .bytes = 0,
                       .tokenizer_size = tokenizer.size};
  const auto text = [&](const std::string& name, const std::string& content) {
    write_text(staging.path() / name, content);
    written.files.push_back(name);
  };
  text("tokenizer.json", tokenizer.tokenizer_json);
  text("tokenizer_config.json", tokenizer.tokenizer_config_json);
  text("generation_config.json", generation_config_json(tokenizer).dump(2) + "\n");
  text("config.json", config_json(arch, shape, tokenizer).dump(2) + "\n");
  ProgressCount count{.report = progress, .total = weight_bytes(arch, shape)};
  write_safetensors(staging.path() / "model.safetensors", tensor_specs(arch, shape), shape.dtype,
                    seed, count);
  count.add(0);  // one more look for a stop that came during the flush, before publishing
  written.files.push_back("model.safetensors");
  for (const std::string& name : written.files)
    written.bytes += fs::file_size(staging.path() / name);
  staging.publish(written.files);
  return written;
}

}  // namespace baton
