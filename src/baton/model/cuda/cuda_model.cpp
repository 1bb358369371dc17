#include "baton/model/cuda/cuda_model.h"

#include <cstring>

#include "baton/gpu/cuda/cuda_error.h"
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

std::unique_ptr<DeviceBuffer> CudaModel::upload_matrices(
    const std::vector<const WeightMatrix*>& parts) {
  std::size_t bytes = 0;
  for (const WeightMatrix* m : parts)
    bytes += static_cast<std::size_t>(m->rows()) * m->cols() * kBf16;
  auto buffer = std::make_unique<DeviceBuffer>(bytes);
  char* at = static_cast<char*>(buffer->get());
  for (const WeightMatrix* m : parts) {
    copy_matrix(*m, at);
    at += static_cast<std::size_t>(m->rows()) * m->cols() * kBf16;
  }
  bytes_ += bytes;
  return buffer;
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

CudaModel::CudaModel(const LlamaModel& model) : config_(model.config()) {
  for (const LlamaModel::Layer& l : model.layers()) {
    Layer layer;
    layer.qkv = upload_matrices({&l.q, &l.k, &l.v});
    layer.o = upload_matrices({&l.o});
    layer.gate_up = upload_matrices({&l.gate, &l.up});
    layer.down = upload_matrices({&l.down});
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
  embed_ = upload_matrices({&model.embedding()});
  const std::size_t embedding_bytes = bytes_ - before_embedding;
  if (&model.output() != &model.embedding()) lm_head_ = upload_matrices({&model.output()});
  final_norm_ = upload(model.final_norm());
  inverse_frequencies_ = upload(model.inverse_frequencies());
  // A step reads one embedding row per token, but the whole output matrix.
  step_bytes_ = lm_head_ ? bytes_ - embedding_bytes : bytes_;
  // The weights now live here: the host's pages of the files go (each weight held once).
  model.release_host_pages();
}

}  // namespace baton::cuda
