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

// Returns nothing: a reference returned from a call that takes a temporary shape would
// look dangling to newer compilers (-Wdangling-reference).
void check_shape(const TensorView& t, const std::string& name,
                 const std::vector<std::int64_t>& shape) {
  if (t.shape != shape) {
    throw ModelFileError(t.file, "tensor '" + name + "' has shape " + shape_text(t.shape) +
                                     "; the config wants " + shape_text(shape));
  }
}

}  // namespace

WeightMatrix WeightMatrix::load(const ModelWeights& weights, const std::string& name,
                                std::int64_t rows, std::int64_t cols, bool keep_bf16) {
  const TensorView& t = weights.at(name);
  check_shape(t, name, {rows, cols});
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
  const TensorView& t = weights.at(name);
  check_shape(t, name, {size});
  return to_float(t);
}

}  // namespace baton
