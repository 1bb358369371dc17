// CudaModel: a LlamaModel's weights in device memory, as the CUDA forward pass reads them.
// Matrices are bf16 (f16 and f32 files are rounded to bf16 at upload); q, k and v are one
// fused matrix, as are gate and up, so that each is one matrix product. Norm weights,
// biases and RoPE's inverse frequencies stay f32. The host model is read only while
// uploading, and its memory map's pages are released after (LlamaModel::release_host_pages:
// loaded with WeightUse::upload, it then holds no bf16 weight on the host).
// Thread-safety: immutable after construction; any number of streams may read it.
#pragma once

#include <memory>
#include <vector>

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/model/cuda/model_kernels.h"
#include "baton/model/llama_model.h"

namespace baton::cuda {

class CudaModel {
 public:
  struct Layer {
    std::unique_ptr<DeviceBuffer> qkv, o, gate_up, down;  // bf16 [out x in]
    std::unique_ptr<DeviceBuffer> attn_norm, mlp_norm;    // f32
    std::unique_ptr<DeviceBuffer> qkv_bias;               // f32; null without bias
    std::unique_ptr<DeviceBuffer> q_norm, k_norm;         // f32; null without q/k norm
  };

  // Uploads every weight of `model` (GpuError: out of device memory, among others).
  explicit CudaModel(const LlamaModel& model);

  const ModelConfig& config() const { return config_; }
  const std::vector<Layer>& layers() const { return layers_; }
  const kernels::bf16* embedding() const { return bf16_of(*embed_); }
  const kernels::bf16* output() const { return bf16_of(lm_head_ ? *lm_head_ : *embed_); }
  const float* final_norm() const { return f32_of(*final_norm_); }
  const float* inverse_frequencies() const { return f32_of(*inverse_frequencies_); }
  // Device bytes of the weights, and those a step reads once per token (all but the
  // embedding table, when the output layer is not tied to it).
  std::size_t bytes() const { return bytes_; }
  std::size_t step_bytes() const { return step_bytes_; }

  static const kernels::bf16* bf16_of(const DeviceBuffer& b) {
    return static_cast<const kernels::bf16*>(b.get());
  }
  static const float* f32_of(const DeviceBuffer& b) { return static_cast<const float*>(b.get()); }

 private:
  std::unique_ptr<DeviceBuffer> upload_matrices(const std::vector<const WeightMatrix*>& parts);
  std::unique_ptr<DeviceBuffer> upload(const std::vector<float>& values);
  std::unique_ptr<DeviceBuffer> upload_joined(const std::vector<const std::vector<float>*>& parts);

  ModelConfig config_;
  std::vector<Layer> layers_;
  std::unique_ptr<DeviceBuffer> embed_, lm_head_, final_norm_, inverse_frequencies_;
  std::size_t bytes_ = 0;
  std::size_t step_bytes_ = 0;
};

}  // namespace baton::cuda
