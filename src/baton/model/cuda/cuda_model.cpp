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

// Whether `parts` go up as the host holds them, 8 bits with a scale a group.
bool keeps_q8(const std::vector<const WeightMatrix*>& parts) {
  return std::all_of(parts.begin(), parts.end(),
                     [](const WeightMatrix* m) { return m->stays_q8_on_device(); });
}

// Copies `from` (a host array of `bytes`) to `to` and returns the end of the copy.
char* copy_to_device(const void* from, std::size_t bytes, char* to) {
  BATON_CUDA_CHECK(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice));
  return to + bytes;
}

}  // namespace

CudaModel::Matrix CudaModel::upload_matrices(const std::vector<const WeightMatrix*>& parts,
                                             Upload how) {
  Matrix matrix = how == Upload::as_held && keeps_q8(parts) ? upload_q8(parts) : upload_bf16(parts);
  if (how == Upload::fp8) quantize_fp8(matrix);
  bytes_ += matrix.values->bytes() + (matrix.scales ? matrix.scales->bytes() : 0);
  eight_bit_ = eight_bit_ || matrix.format != DeviceFormat::bf16;
  return matrix;
}

CudaModel::Matrix CudaModel::upload_bf16(const std::vector<const WeightMatrix*>& parts) {
  Matrix matrix{.in = parts.front()->cols()};
  for (const WeightMatrix* m : parts) matrix.out += m->rows();
  const std::size_t elements = static_cast<std::size_t>(matrix.out) * matrix.in;
  matrix.values = std::make_unique<DeviceBuffer>(elements * kBf16);
  char* at = static_cast<char*>(matrix.values->get());
  for (const WeightMatrix* m : parts) {
    copy_matrix(*m, at);
    at += static_cast<std::size_t>(m->rows()) * m->cols() * kBf16;
  }
  return matrix;
}

CudaModel::Matrix CudaModel::upload_q8(const std::vector<const WeightMatrix*>& parts) {
  Matrix matrix{.in = parts.front()->cols(), .format = DeviceFormat::q8_groups};
  std::size_t value_bytes = 0;
  std::size_t scale_count = 0;
  for (const WeightMatrix* m : parts) {
    matrix.out += m->rows();
    value_bytes += static_cast<std::size_t>(m->rows()) * m->q8().stride();
    scale_count += static_cast<std::size_t>(m->rows()) * m->q8().groups();
  }
  matrix.values = std::make_unique<DeviceBuffer>(value_bytes);
  matrix.scales = std::make_unique<DeviceBuffer>(scale_count * sizeof(float));
  char* values = static_cast<char*>(matrix.values->get());
  char* scales = static_cast<char*>(matrix.scales->get());
  for (const WeightMatrix* m : parts) {  // Q8Matrix's rows and scales are contiguous
    const Q8Matrix& q = m->q8();
    const auto rows = static_cast<std::size_t>(q.rows());
    values = copy_to_device(q.row_values(0), rows * q.stride(), values);
    scales = copy_to_device(q.row_scales(0), rows * q.groups() * sizeof(float), scales);
  }
  return matrix;
}

void CudaModel::quantize_fp8(Matrix& matrix) {
  if (!kernels::decode_gemm_fits(1, matrix.in)) {  // its 8-byte loads of a row
    throw std::invalid_argument("--weights fp8: a matrix of " + std::to_string(matrix.in) +
                                " columns; decode_gemm_fp8 takes multiples of 8");
  }
  auto values = std::make_unique<DeviceBuffer>(static_cast<std::size_t>(matrix.out) * matrix.in);
  matrix.scales = std::make_unique<DeviceBuffer>(matrix.out * sizeof(float));
  BATON_CUDA_CHECK(kernels::quantize_fp8_rows(bf16_of(*matrix.values), matrix.out, matrix.in,
                                              static_cast<std::uint8_t*>(values->get()),
                                              static_cast<float*>(matrix.scales->get()), nullptr));
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  matrix.values = std::move(values);  // the bf16 copy goes
  matrix.format = DeviceFormat::fp8_rows;
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
    : config_(model.config()) {
  if (model.host_copies_released()) {  // its copies' pages are gone: a read would fault
    throw std::logic_error("[CudaModel] model " + model.source() +
                           ": its host copies were released after an earlier upload");
  }
  const Upload how =
      model.device_precision() == DevicePrecision::fp8 ? Upload::fp8 : Upload::as_held;
  for (const LlamaModel::Layer& l : model.layers()) {
    Layer layer;
    layer.qkv = upload_matrices({&l.q, &l.k, &l.v}, how);
    layer.o = upload_matrices({&l.o}, how);
    layer.gate_up = upload_matrices({&l.gate, &l.up}, how);
    layer.down = upload_matrices({&l.down}, how);
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
  embed_ = upload_matrices({&model.embedding()}, Upload::bf16);
  const std::size_t embedding_bytes = bytes_ - before_embedding;
  if (&model.output() != &model.embedding()) {
    lm_head_ = upload_matrices({&model.output()}, how);
  }
  final_norm_ = upload(model.final_norm());
  inverse_frequencies_ = upload(model.inverse_frequencies());
  // A step reads one embedding row per token, but the whole output matrix.
  step_bytes_ = lm_head_.values ? bytes_ - embedding_bytes : bytes_;
  // The weights now live here: the host's pages of the files go (each weight held once).
  model.release_host_pages();
}

}  // namespace baton::cuda
