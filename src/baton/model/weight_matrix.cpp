#include "baton/model/weight_matrix.h"

#include <cstring>

#include "baton/model/model_file_error.h"

namespace baton {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (std::int64_t d : shape) text += (text.empty() ? "" : " x ") + std::to_string(d);
  return "[" + text + "]";
}

const TensorView& checked(const ModelWeights& weights, const std::string& name,
                          const std::vector<std::int64_t>& shape) {
  const TensorView& t = weights.at(name);
  if (t.shape != shape) {
    throw ModelFileError(t.file, "tensor '" + name + "' has shape " + shape_text(t.shape) +
                                     "; the config wants " + shape_text(shape));
  }
  return t;
}

}  // namespace

WeightMatrix WeightMatrix::load(const ModelWeights& weights, const std::string& name,
                                std::int64_t rows, std::int64_t cols, bool keep_bf16) {
  const TensorView& t = checked(weights, name, {rows, cols});
  WeightMatrix m;
  m.rows_ = static_cast<int>(rows);
  m.cols_ = static_cast<int>(cols);
  if (keep_bf16 && t.dtype == DType::bf16) {
    m.bf16_ = t;
  } else {
    m.f32_ = to_float(t);
  }
  return m;
}

std::size_t WeightMatrix::bytes() const {
  return is_bf16() ? bf16_.bytes.size() : f32_.size() * sizeof(float);
}

void WeightMatrix::rows_to_float(int first, int count, float* out) const {
  const std::size_t offset = static_cast<std::size_t>(first) * cols_;
  const std::size_t n = static_cast<std::size_t>(count) * cols_;
  if (is_bf16()) {
    to_float(bf16_, offset, {out, n});
  } else {
    std::memcpy(out, f32_.data() + offset, n * sizeof(float));
  }
}

std::vector<float> load_vector(const ModelWeights& weights, const std::string& name,
                               std::int64_t size) {
  return to_float(checked(weights, name, {size}));
}

}  // namespace baton
