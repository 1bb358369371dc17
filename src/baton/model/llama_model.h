// LlamaModel: the weights of a Llama-family model (llama, mistral, qwen2, qwen3) as the
// CPU forward pass reads them (forward_pass.h): RMSNorm weights, attention with grouped
// query heads (q/k/v bias for qwen2, per-head q/k RMSNorm for qwen3, a sliding window for
// mistral when set), SwiGLU MLP, tied or separate output embedding. Matrices are in the
// format asked for (weight_matrix.h: bf16 in the memory map by default, f32 or q8);
// norms and biases are f32. Each weight is held once: in the map where read in place, else
// in its copy, the map's pages of it released (and malloc's freed staging trimmed). Once a
// device holds the weights, release_host_pages() drops the map's pages and
// release_host_copies() the copies', so that the model is not held twice.
// Thread-safety: immutable after load, except the kernel thread pool, which serializes
// its callers; forward passes may run on several threads at once, each on its own blocks.
// release_host_copies() only while nothing reads the matrices (see there).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "baton/common/thread_pool.h"
#include "baton/model/config/model_config.h"
#include "baton/model/weights/model_weights.h"
#include "baton/model/weights/weight_matrix.h"

namespace baton {

struct ModelLoadOptions {
  // bf16: bf16 matrices stay bf16 in place (others f32); f32: all widened; q8: all
  // quantized to 8 bits, the embedding and output too (GGUF's Q8_0 blocks copied as they
  // are). Not given: as stored, q8 for a GGUF file whose quantized tensors are all Q8_0,
  // else bf16.
  std::optional<WeightFormat> weights;
  int threads = 0;  // kernel threads; 0: default_cpu_threads()
  // upload: the weights go to a device (CudaModel), which then calls release_host_pages():
  // bf16 matrices are read in place wherever they lie, never copied on the host.
  WeightUse use = WeightUse::cpu_kernels;
  // How a device holds the matrices it uploads (CudaModel); the host's are as `weights`.
  DevicePrecision device_precision = DevicePrecision::bf16;
  // Hold on the host every matrix a GPU would hold in fp8 (all but the embedding) as f32
  // values rounded through E4M3 at each row's scale (e4m3_rounding.h): the CPU pass then
  // computes with what `--weights fp8` keeps, to measure its accuracy (bench/q8_accuracy).
  bool emulate_fp8 = false;
  // Weights that share a scale when emulating: 0, a row's (what a GPU holds); 32 or 128,
  // finer formats a GPU could hold (for the comparison).
  int emulate_fp8_group = 0;
  // Called after the embedding and after each layer with the bytes of the weight files
  // read so far (by layer) and in all, for a progress bar.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

class LlamaModel {
 public:
  struct Layer {
    std::vector<float> attn_norm, q_bias, k_bias, v_bias, q_norm, k_norm, mlp_norm;
    WeightMatrix q, k, v, o, gate, up, down;
  };

  // Reads the config and the weights of a model (a Hugging Face directory's config.json and
  // safetensors, or a GGUF file) (ModelFileError).
  // Tensors are named as in a *ForCausalLM checkpoint (model.layers.N..., lm_head.weight)
  // or as in a base model's export (layers.N..., no lm_head), as sentence-transformers
  // writes published embedding models such as Qwen3-Embedding.
  static LlamaModel load(const ModelSource& source, ModelLoadOptions options = {});
  static LlamaModel load(const std::filesystem::path& path, ModelLoadOptions options = {}) {
    return load(ModelSource::open(path), std::move(options));
  }
  // `source`: where the weights came from, for messages.
  LlamaModel(ModelConfig config, ModelWeights weights, ModelLoadOptions options = {},
             std::string source = "model");

  const ModelConfig& config() const { return config_; }
  // The directory it was loaded from ("model" when built from parts), for messages.
  const std::string& source() const { return source_; }
  const std::vector<Layer>& layers() const { return layers_; }
  const WeightMatrix& embedding() const { return embed_; }
  const WeightMatrix& output() const { return lm_head_.rows() > 0 ? lm_head_ : embed_; }
  // Whether output() gives logits: lm_head.weight, or embeddings tied to the output. A base
  // model's export for embeddings (no lm_head, not tied) has none.
  bool generates_text() const { return lm_head_.rows() > 0 || config_.tie_word_embeddings; }
  const std::vector<float>& final_norm() const { return final_norm_; }
  const std::vector<float>& inverse_frequencies() const { return inverse_frequencies_; }
  ThreadPool& pool() const { return *pool_; }
  // Bytes of weights the forward pass reads per token (every matrix once).
  std::size_t weight_bytes() const;
  // The weights counted in weight_bytes(), one per element whatever its format.
  std::size_t weight_count() const;
  // Host memory its weights hold: every matrix (the embedding too) and vector, those read
  // in place from the map until release_host_pages(), the copies given back by
  // release_host_copies() (WeightMatrix::releasable_bytes) not after it.
  std::size_t host_bytes() const;
  DevicePrecision device_precision() const { return device_precision_; }
  // Device memory a copy of the weights takes as CudaModel holds them: every matrix as
  // bf16 (fp8: a byte a weight and an f32 scale a row, but the embedding; q8 held on the
  // host: as Q8Matrix::bytes(), but the embedding), the vectors (norms, biases, RoPE's
  // frequencies) as f32.
  std::size_t upload_bytes() const;
  // Once its weights are on a device: drops the memory map's pages from the process (the
  // matrices read in place stay readable, from the file). Thread-safe.
  void release_host_pages() const;
  // Once its weights are on a device: gives back the pages of every matrix's copy on the
  // host (WeightMatrix::release_host_copy: q8 values and scales, aligned or converted bf16;
  // the embedding, output and every layer's, the tied embedding once). Call it only once
  // nothing on the host will read the matrices again (a CUDA runner's upload is done, no
  // CPU pass will run): a later read faults, and a CPU runner refuses the model
  // (host_copies_released()). Never inside the upload itself: the CUDA tests compare the
  // device with a CPU pass on the same model. Returns the bytes given back (0 when called
  // again). Not thread-safe against readers of the matrices; host_bytes() and the shape
  // queries may run meanwhile.
  std::size_t release_host_copies();
  // Whether release_host_copies() was called: the host can no longer compute with it.
  bool host_copies_released() const { return copies_released_->load(std::memory_order_acquire); }

 private:
  ModelConfig config_;
  std::string source_ = "model";
  DevicePrecision device_precision_ = DevicePrecision::bf16;
  ModelWeights weights_;  // the memory map bf16 matrices point into
  WeightMatrix embed_;    // [vocab x hidden]
  WeightMatrix lm_head_;  // [vocab x hidden]; empty when tied to embed_
  std::vector<float> final_norm_;
  std::vector<Layer> layers_;
  std::vector<float> inverse_frequencies_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<std::atomic<bool>> pages_released_ = std::make_unique<std::atomic<bool>>(false);
  std::unique_ptr<std::atomic<bool>> copies_released_ = std::make_unique<std::atomic<bool>>(false);
};

}  // namespace baton
