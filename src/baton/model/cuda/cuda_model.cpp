#include "baton/model/cuda/cuda_model.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/model/cuda/decode_gemm.h"
#include "baton/model/cuda/fp8_weights.h"
#include "baton/model/files/half.h"

namespace baton::cuda {
namespace {

constexpr std::size_t kBf16 = 2;
constexpr int kRowsPerCopy = 256;  // rows widened and rounded on the host at a time

// Copies `matrix` as bf16 to `device`; bf16 files go as they are.
void copy_matrix(const WeightMatrix& matrix, char* device) {
  const auto cols = static_cast<std::size_t>(matrix.cols());
  if (matrix.is_bf16()) {
    BATON_CUDA_CHECK(cudaMemcpy(device, matrix.bf16_data(), matrix.rows() * cols * kBf16,
                                cudaMemcpyHostToDevice));
    return;
  }
  std::vector<float> rows(kRowsPerCopy * cols);
  std::vector<std::uint16_t> rounded(rows.size());
  for (int first = 0; first < matrix.rows(); first += kRowsPerCopy) {
    const int count = std::min(kRowsPerCopy, matrix.rows() - first);
    matrix.rows_to_float(first, count, rows.data());
    for (std::size_t i = 0; i < count * cols; ++i) rounded[i] = float_to_bf16(rows[i]);
    BATON_CUDA_CHECK(cudaMemcpy(device + first * cols * kBf16, rounded.data(), count * cols * kBf16,
                                cudaMemcpyHostToDevice));
  }
}

}  // namespace

CudaModel::Matrix CudaModel::upload_matrices(const std::vector<const WeightMatrix*>& parts,
                                             bool quantize) {
  Matrix matrix{.in = parts.front()->cols()};
  for (const WeightMatrix* m : parts) matrix.out += m->rows();
  const std::size_t elements = static_cast<std::size_t>(matrix.out) * matrix.in;
  matrix.values = std::make_unique<DeviceBuffer>(elements * kBf16);
  char* at = static_cast<char*>(matrix.values->get());
  for (const WeightMatrix* m : parts) {
    copy_matrix(*m, at);
    at += static_cast<std::size_t>(m->rows()) * m->cols() * kBf16;
  }
  if (quantize) {
    if (!kernels::decode_gemm_fits(1, matrix.in)) {  // its 8-byte loads of a row
      throw std::invalid_argument("--weights fp8: a matrix of " + std::to_string(matrix.in) +
                                  " columns; decode_gemm_fp8 takes multiples of 8");
    }
    auto values = std::make_unique<DeviceBuffer>(elements);
    matrix.scales = std::make_unique<DeviceBuffer>(matrix.out * sizeof(float));
    BATON_CUDA_CHECK(kernels::quantize_fp8_rows(
        bf16_of(*matrix.values), matrix.out, matrix.in, static_cast<std::uint8_t*>(values->get()),
        static_cast<float*>(matrix.scales->get()), nullptr));
    BATON_CUDA_CHECK(cudaDeviceSynchronize());
    matrix.values = std::move(values);  // the bf16 copy goes
  }
  bytes_ += matrix.values->bytes() + (matrix.scales ? matrix.scales->bytes() : 0);
  return matrix;
}

std::unique_ptr<DeviceBuffer> CudaModel::upload_joined(
    const std::vector<const std::vector<float>*>& parts) {
  std::vector<float> joined;
  for (const std::vector<float>* p : parts) joined.insert(joined.end(), p->begin(), p->end());
  return upload(joined);
}

std::unique_ptr<DeviceBuffer> CudaModel::upload(const std::vector<float>& values) {
  auto buffer = std::make_unique<DeviceBuffer>(values.size() * sizeof(float));
  BATON_CUDA_CHECK(cudaMemcpy(buffer->get(), values.data(), values.size() * sizeof(float),
                              cudaMemcpyHostToDevice));
  bytes_ += values.size() * sizeof(float);
  return buffer;
}

CudaModel::CudaModel(const LlamaModel& model)
    : config_(model.config()), precision_(model.device_precision()) {
  const bool quantize = fp8();
  for (const LlamaModel::Layer& l : model.layers()) {
    Layer layer;
    layer.qkv = upload_matrices({&l.q, &l.k, &l.v}, quantize);
    layer.o = upload_matrices({&l.o}, quantize);
    layer.gate_up = upload_matrices({&l.gate, &l.up}, quantize);
    layer.down = upload_matrices({&l.down}, quantize);
    for (const Matrix* m : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down}) {
      largest_layer_matrix_ =
          std::max(largest_layer_matrix_, static_cast<std::size_t>(m->out) * m->in);
    }
    layer.attn_norm = upload(l.attn_norm);
    layer.mlp_norm = upload(l.mlp_norm);
    if (!l.q_bias.empty()) layer.qkv_bias = upload_joined({&l.q_bias, &l.k_bias, &l.v_bias});
    if (!l.q_norm.empty()) {
      layer.q_norm = upload(l.q_norm);
      layer.k_norm = upload(l.k_norm);
    }
    layers_.push_back(std::move(layer));
  }
  const std::size_t before_embedding = bytes_;
  embed_ = upload_matrices({&model.embedding()}, false);
  const std::size_t embedding_bytes = bytes_ - before_embedding;
  if (&model.output() != &model.embedding()) {
    lm_head_ = upload_matrices({&model.output()}, quantize);
  }
  final_norm_ = upload(model.final_norm());
  inverse_frequencies_ = upload(model.inverse_frequencies());
  // A step reads one embedding row per token, but the whole output matrix.
  step_bytes_ = lm_head_.values ? bytes_ - embedding_bytes : bytes_;
  // The weights now live here: the host's pages of the files go (each weight held once).
  model.release_host_pages();
}

}  // namespace baton::cuda
