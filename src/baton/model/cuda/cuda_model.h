// CudaModel: a LlamaModel's weights in device memory, as the CUDA forward pass reads them.
// Matrices are bf16 (f16 and f32 files are rounded to bf16 at upload); with
// DevicePrecision::fp8 E4M3 with a scale per row, quantized on the device from the bf16
// upload (all but the embedding); and matrices the host holds in q8 (a GGUF file of Q8_0
// tensors, `--weights q8`) stay 8-bit, uploaded in the host's layout (q8_weights.h; all
// but the embedding, which a step gathers rows of in bf16). q, k and v are one fused
// matrix, as are gate and up, so that each is one matrix product. Norm weights,
// biases and RoPE's inverse frequencies stay f32. The host model is read only while
// uploading, and its memory map's pages are released after (LlamaModel::release_host_pages:
// loaded with WeightUse::upload, it then holds no bf16 weight on the host).
// Thread-safety: immutable after construction; any number of streams may read it.
#pragma once

#include <memory>
#include <vector>

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/model/cuda/device_matrix.h"
#include "baton/model/cuda/model_kernels.h"
#include "baton/model/llama_model.h"

namespace baton::cuda {

class CudaModel {
 public:
  // A matrix's memory: bf16 values, or 8-bit values and f32 scales (device_matrix.h).
  struct Matrix {
    std::unique_ptr<DeviceBuffer> values, scales;
    int out = 0;
    int in = 0;
    DeviceFormat format = DeviceFormat::bf16;
    DeviceMatrix view() const {
      return {.values = values->get(),
              .scales = scales ? f32_of(*scales) : nullptr,
              .out = out,
              .in = in,
              .format = format};
    }
  };
  struct Layer {
    Matrix qkv, o, gate_up, down;                         // [out x in]
    std::unique_ptr<DeviceBuffer> attn_norm, mlp_norm;    // f32
    std::unique_ptr<DeviceBuffer> qkv_bias;               // f32; null without bias
    std::unique_ptr<DeviceBuffer> q_norm, k_norm;         // f32; null without q/k norm
  };

  // Uploads every weight of `model` (GpuError: out of device memory, among others;
  // std::logic_error once its host copies were released: LlamaModel::release_host_copies).
  explicit CudaModel(const LlamaModel& model);

  const ModelConfig& config() const { return config_; }
  const std::vector<Layer>& layers() const { return layers_; }
  const kernels::bf16* embedding() const { return bf16_of(*embed_.values); }
  DeviceMatrix output() const { return (lm_head_.values ? lm_head_ : embed_).view(); }
  // Whether any matrix is held in 8 bits (fp8 or q8): a step then needs a widening slot.
  bool eight_bit() const { return eight_bit_; }
  // Elements of the largest layer matrix: what an 8-bit product widens at most (Products).
  std::size_t largest_layer_matrix() const { return largest_layer_matrix_; }
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
  // How a matrix goes up: bf16; E4M3 quantized from bf16; or as the host holds it (q8
  // kept, everything else bf16).
  enum class Upload { bf16, fp8, as_held };
  // `parts` stacked into one matrix (counted in bytes_).
  Matrix upload_matrices(const std::vector<const WeightMatrix*>& parts, Upload how);
  Matrix upload_bf16(const std::vector<const WeightMatrix*>& parts);
  // All parts q8 with the same columns: values and scales copied as they are.
  Matrix upload_q8(const std::vector<const WeightMatrix*>& parts);
  // `matrix`'s bf16 values replaced by E4M3 values and a scale a row.
  static void quantize_fp8(Matrix& matrix);
  std::unique_ptr<DeviceBuffer> upload(const std::vector<float>& values);
  std::unique_ptr<DeviceBuffer> upload_joined(const std::vector<const std::vector<float>*>& parts);

  ModelConfig config_;
  std::vector<Layer> layers_;
  Matrix embed_, lm_head_;  // lm_head_ empty when tied to embed_
  std::unique_ptr<DeviceBuffer> final_norm_, inverse_frequencies_;
  std::size_t largest_layer_matrix_ = 0;
  bool eight_bit_ = false;
  std::size_t bytes_ = 0;
  std::size_t step_bytes_ = 0;
};

}  // namespace baton::cuda
