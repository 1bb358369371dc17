#include "baton/model/files/gguf_tensors.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "baton/model/files/ggml_blocks.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

// llama.cpp's names of a block's tensors, and Hugging Face's.
constexpr std::pair<const char*, const char*> kBlockNames[] = {
    {"attn_norm", "input_layernorm"},    {"attn_q", "self_attn.q_proj"},
    {"attn_k", "self_attn.k_proj"},      {"attn_v", "self_attn.v_proj"},
    {"attn_output", "self_attn.o_proj"}, {"attn_q_norm", "self_attn.q_norm"},
    {"attn_k_norm", "self_attn.k_norm"}, {"ffn_norm", "post_attention_layernorm"},
    {"ffn_gate", "mlp.gate_proj"},       {"ffn_up", "mlp.up_proj"},
    {"ffn_down", "mlp.down_proj"},
};

constexpr std::pair<const char*, const char*> kTopNames[] = {
    {"token_embd", "model.embed_tokens"}, {"output_norm", "model.norm"}, {"output", "lm_head"}};

// "stem" and ".weight" / ".bias" of a name.
std::pair<std::string, std::string> split_suffix(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot)};
}

std::optional<DType> plain_dtype(std::uint32_t type) {
  switch (type) {
    case 0:
      return DType::f32;
    case 1:
      return DType::f16;
    case 30:
      return DType::bf16;
    default:
      return std::nullopt;
  }
}

std::int64_t metadata_int(const GgufHeader& header, const std::string& key, std::int64_t fallback) {
  const auto it = header.metadata.find(key);
  return it != header.metadata.end() && it->is_number_integer() ? it->get<std::int64_t>()
                                                                : fallback;
}

// Source row of each Hugging Face row of a q or k projection stored by llama.cpp for its
// "llama" arch: within a head of d rows, HF row j * d/2 + i is GGUF row 2i + j.
std::vector<std::int64_t> halves_from_pairs(std::int64_t heads, std::int64_t head_dim) {
  std::vector<std::int64_t> source(static_cast<std::size_t>(heads * head_dim));
  const std::int64_t half = head_dim / 2;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t j = 0; j < 2; ++j) {
      for (std::int64_t i = 0; i < half; ++i) {
        source[static_cast<std::size_t>(h * head_dim + j * half + i)] = h * head_dim + 2 * i + j;
      }
    }
  }
  return source;
}

// How many heads a "llama" tensor's rows interleave (0: not a q/k projection).
std::int64_t interleaved_heads(const GgufHeader& header, const std::string& hf_name) {
  if (header.metadata.value("general.architecture", std::string()) != "llama") return 0;
  const std::int64_t heads = metadata_int(header, "llama.attention.head_count", 0);
  if (hf_name.find("self_attn.q_proj.") != std::string::npos) return heads;
  if (hf_name.find("self_attn.k_proj.") != std::string::npos) {
    return metadata_int(header, "llama.attention.head_count_kv", heads);
  }
  return 0;
}

}  // namespace

std::string hf_tensor_name(const std::string& name) {
  const auto [stem, suffix] = split_suffix(name);
  for (const auto& [gguf, hf] : kTopNames) {
    if (stem == gguf) return hf + suffix;
  }
  if (stem.starts_with("blk.")) {
    const std::size_t dot = stem.find('.', 4);
    if (dot != std::string::npos) {
      const std::string layer = stem.substr(4, dot - 4);
      const std::string part = stem.substr(dot + 1);
      for (const auto& [gguf, hf] : kBlockNames) {
        if (part == gguf) return "model.layers." + layer + "." + hf + suffix;
      }
    }
  }
  return name;
}

TensorView gguf_tensor_view(const GgufTensor& t, std::span<const std::byte> file_bytes,
                            const std::string& file) {
  TensorView view;
  view.name = hf_tensor_name(t.name);
  view.file = file;
  for (auto d = t.dims.rbegin(); d != t.dims.rend(); ++d) {
    view.shape.push_back(static_cast<std::int64_t>(*d));
  }
  if (const std::optional<DType> dtype = plain_dtype(t.type)) {
    view.dtype = *dtype;
  } else if (ggml_block(t.type)) {
    view.dtype = DType::u8;
    view.ggml_type = t.type;
  } else {
    throw ModelFileError(file, "GGUF tensor '" + t.name + "' is " + ggml_type_name(t.type) +
                                   ", which baton cannot convert (it reads f32, f16, bf16, q4_0, "
                                   "q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K)");
  }
  view.bytes = file_bytes.subspan(t.offset, t.bytes);
  return view;
}

GgufTensors GgufTensors::open(std::shared_ptr<const GgufFile> gguf) {
  GgufTensors result;
  result.file_ = std::move(gguf);
  const std::span<const std::byte> bytes = result.file_->bytes();
  const std::filesystem::path& file = result.file_->path();
  for (const GgufTensor& t : result.file_->header().tensors) {
    TensorView view = gguf_tensor_view(t, bytes, file.string());
    const std::int64_t heads = interleaved_heads(result.file_->header(), view.name);
    if (heads > 0) {
      const std::int64_t rows = view.shape.front();
      if (rows % heads != 0 || (rows / heads) % 2 != 0) {
        throw ModelFileError(file.string(), "GGUF tensor '" + t.name + "': " +
                                                std::to_string(rows) + " rows do not split into " +
                                                std::to_string(heads) + " heads of even size");
      }
      const std::size_t row_bytes = view.bytes.size() / static_cast<std::size_t>(rows);
      const std::vector<std::int64_t> source = halves_from_pairs(heads, rows / heads);
      std::vector<std::byte>& copy = result.copies_.emplace_back(view.bytes.size());
      for (std::size_t r = 0; r < source.size(); ++r) {
        std::memcpy(copy.data() + r * row_bytes,
                    view.bytes.data() + static_cast<std::size_t>(source[r]) * row_bytes, row_bytes);
      }
      view.bytes = copy;
    }
    result.views_.push_back(std::move(view));
  }
  return result;
}

}  // namespace baton
