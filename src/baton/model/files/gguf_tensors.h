// GgufTensors: the tensors of a GGUF model file (llama.cpp's convert_hf_to_gguf layout) as
// TensorViews under Hugging Face's names, so that a model loads from it as from
// safetensors: token_embd -> model.embed_tokens, blk.N.attn_q -> model.layers.N.self_attn
// .q_proj, ffn_gate -> mlp.gate_proj, output_norm -> model.norm, output -> lm_head, ...;
// other names (rope_freqs.weight) stay as they are. Shapes are reversed (GGUF lists the
// innermost dimension first). f32, f16 and bf16 tensors are viewed in place in the file's
// memory map; quantized ones (ggml_blocks.h) keep their blocks (TensorView::ggml_type) and
// are converted when read. For the "llama" architecture llama.cpp stores the q and k rows
// of each head interleaved for its adjacent-pairs rotation: they are put back in Hugging
// Face's order (halves) into a copy.
// Errors are ModelFileError naming the file: a broken header (gguf_file.h), a tensor of a
// type baton cannot convert, a q/k tensor whose rows do not split into the heads.
// Thread-safety: immutable once opened; views stay valid while it lives (also across a move).
#pragma once

#include <cstddef>
#include <deque>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "baton/model/files/gguf_file.h"
#include "baton/model/files/mapped_file.h"
#include "baton/model/files/tensor_view.h"

namespace baton {

class GgufTensors {
 public:
  // The tensors of `file` (kept open while they live).
  static GgufTensors open(std::shared_ptr<const GgufFile> file);
  static GgufTensors open(const std::filesystem::path& file) { return open(GgufFile::open(file)); }

  const GgufHeader& header() const { return file_->header(); }
  const std::filesystem::path& path() const { return file_->path(); }
  // Drops the map's pages from this process's memory (MappedFile::release_resident).
  void release_resident() const noexcept { file_->release_resident(); }
  // Every tensor, in the file's order, under its Hugging Face name.
  const std::deque<TensorView>& tensors() const { return views_; }

 private:
  GgufTensors() = default;

  std::shared_ptr<const GgufFile> file_;
  std::deque<TensorView> views_;
  std::deque<std::vector<std::byte>> copies_;  // reordered q/k tensors
};

// A view of tensor `t` of a GGUF file whose bytes are `file_bytes`, under its Hugging Face
// name, as stored (no reordering); ModelFileError for a type baton cannot convert.
TensorView gguf_tensor_view(const GgufTensor& t, std::span<const std::byte> file_bytes,
                            const std::string& file);

// The Hugging Face name of GGUF tensor `name` ("blk.3.ffn_down.weight" ->
// "model.layers.3.mlp.down_proj.weight"); `name` itself when it has none.
std::string hf_tensor_name(const std::string& name);

}  // namespace baton
