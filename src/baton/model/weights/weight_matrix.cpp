#include "baton/model/weights/weight_matrix.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>

#include "baton/model/files/ggml_blocks.h"
#include "baton/model/files/half.h"
#include "baton/model/files/mapped_file.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/weights/finite_check.h"
#include "baton/model/weights/mlx_affine.h"
#include "baton/model/weights/weight_buffer.h"

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

[[noreturn]] void fail_nonfinite(const std::string& file, const std::string& name,
                                 std::size_t element, std::size_t cols) {
  throw ModelFileError(file, "tensor '" + name + "' holds an infinity or a NaN (row " +
                                 std::to_string(element / cols) + ", column " +
                                 std::to_string(element % cols) +
                                 "): a model with it would answer in NaNs");
}

// Quantizes tensor `t` [rows x cols] a few rows at a time, so that no f32 copy of the
// whole tensor (the embedding's can be hundreds of MB) is ever held.
std::shared_ptr<Q8Matrix> quantize(const TensorView& t, const std::string& name, int rows,
                                   int cols) {
  auto q = std::make_shared<Q8Matrix>(rows, cols);
  const int chunk = std::max(1, (1 << 16) / std::max(cols, 1));
  std::vector<float> buffer(static_cast<std::size_t>(chunk) * cols);
  for (int first = 0; first < rows; first += chunk) {
    const int count = std::min(chunk, rows - first);
    const std::span<float> rows_read(buffer.data(), static_cast<std::size_t>(count) * cols);
    to_float(t, static_cast<std::size_t>(first) * cols, rows_read);
    if (const auto bad = first_nonfinite(rows_read)) {
      fail_nonfinite(t.file, name, static_cast<std::size_t>(first) * cols + *bad,
                     static_cast<std::size_t>(cols));
    }
    q->quantize_rows(first, count, buffer.data());
  }
  if (!q->finite()) {  // a scale past f32's range
    throw ModelFileError(t.file, "tensor '" + name + "' holds values too large for q8's scales");
  }
  return q;
}

// GGUF's Q8_0 blocks (an f16 scale, then 32 int8 values) are Q8Matrix's groups with the
// scale widened: copied exactly, where quantizing their values again could move them.
std::shared_ptr<Q8Matrix> copy_q8_0(const TensorView& t, const std::string& name, int rows,
                                    int cols) {
  constexpr int kBlockBytes = 2 + Q8Matrix::kGroup;
  auto q = std::make_shared<Q8Matrix>(rows, cols);
  const int groups = q->groups();
  std::vector<std::int8_t> values(static_cast<std::size_t>(groups) * Q8Matrix::kGroup);
  std::vector<float> scales(static_cast<std::size_t>(groups));
  const std::byte* block = t.bytes.data();
  for (int r = 0; r < rows; ++r) {
    for (int g = 0; g < groups; ++g, block += kBlockBytes) {
      std::uint16_t scale = 0;
      std::memcpy(&scale, block, sizeof scale);
      scales[static_cast<std::size_t>(g)] = f16_to_float(scale);
      std::memcpy(values.data() + static_cast<std::size_t>(g) * Q8Matrix::kGroup, block + 2,
                  Q8Matrix::kGroup);
    }
    q->set_row(r, values.data(), scales.data());
  }
  if (!q->finite()) {
    throw ModelFileError(t.file, "tensor '" + name + "' has an infinite or NaN Q8_0 scale");
  }
  return q;
}

// Bytes copied, converted or checked at a time: a slice is checked while still in cache.
constexpr std::size_t kSliceBytes = std::size_t{256} << 10;

// Checks bf16 tensor `t` where it lies (its first read: the pages come in now, not at the
// first request).
void check_bf16(const TensorView& t, const std::string& name, std::size_t cols) {
  if (const auto bad = first_nonfinite_bf16(t.bytes)) fail_nonfinite(t.file, name, *bad, cols);
}

// A 64-byte-aligned copy of bf16 tensor `t`, checked slice by slice as it is copied.
std::shared_ptr<const std::byte> checked_copy(const TensorView& t, const std::string& name,
                                              std::size_t cols) {
  std::shared_ptr<std::byte> copy = allocate_weight_buffer(t.bytes.size());
  for (std::size_t at = 0; at < t.bytes.size(); at += kSliceBytes) {
    const std::size_t n = std::min(kSliceBytes, t.bytes.size() - at);
    std::memcpy(copy.get() + at, t.bytes.data() + at, n);
    if (const auto bad = first_nonfinite_bf16({copy.get() + at, n})) {
      fail_nonfinite(t.file, name, at / 2 + *bad, cols);
    }
  }
  return copy;
}

// Tensor `t` (bf16, f16 or f32) widened to f32, checked slice by slice as it is widened.
std::vector<float> checked_floats(const TensorView& t, const std::string& name, std::size_t cols) {
  std::vector<float> values(t.element_count());
  constexpr std::size_t kSlice = kSliceBytes / sizeof(float);
  for (std::size_t at = 0; at < values.size(); at += kSlice) {
    const std::span<float> slice(values.data() + at, std::min(kSlice, values.size() - at));
    to_float(t, at, slice);
    if (const auto bad = first_nonfinite(slice)) fail_nonfinite(t.file, name, at + *bad, cols);
  }
  return values;
}

// `values` rounded to bf16 in a 64-byte-aligned buffer, checked slice by slice: a value
// that is not finite, or too large for bf16, is refused.
std::shared_ptr<const std::byte> checked_bf16(const std::vector<float>& values,
                                              const std::string& name, const std::string& file,
                                              std::size_t cols) {
  std::shared_ptr<std::byte> out = allocate_weight_buffer(values.size() * 2);
  constexpr std::size_t kSlice = kSliceBytes / 2;
  for (std::size_t at = 0; at < values.size(); at += kSlice) {
    const std::size_t n = std::min(kSlice, values.size() - at);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t bits = float_to_bf16(values[at + i]);
      std::memcpy(out.get() + (at + i) * 2, &bits, 2);
    }
    if (const auto bad = first_nonfinite_bf16({out.get() + at * 2, n * 2})) {
      fail_nonfinite(file, name, at + *bad, cols);
    }
  }
  return out;
}

}  // namespace

WeightMatrix WeightMatrix::load(const ModelWeights& weights, const std::string& name,
                                std::int64_t rows, std::int64_t cols, WeightFormat format,
                                WeightUse use) {
  if (is_mlx_affine(weights, name)) {  // its codes, scales and biases released there
    return from_values(dequantize_mlx_affine(weights, name, rows, cols), name,
                       weights.at(name).file, rows, cols, format);
  }
  const TensorView& t = weights.at(name);
  check_shape(t, name, {rows, cols});
  const auto width = static_cast<std::size_t>(cols);
  WeightMatrix m;
  if (t.ggml_type && format != WeightFormat::q8) {  // GGUF blocks: dequantized, as MLX's
    m = from_values(to_float(t), name, t.file, rows, cols, format);
  } else if (format == WeightFormat::q8 && t.ggml_type == kGgmlQ8_0 &&
             cols % Q8Matrix::kGroup == 0) {
    m.q8_ = copy_q8_0(t, name, static_cast<int>(rows), static_cast<int>(cols));
  } else if (format == WeightFormat::q8) {
    m.q8_ = quantize(t, name, static_cast<int>(rows), static_cast<int>(cols));
  } else if (format == WeightFormat::bf16 && t.dtype == DType::bf16) {
    m.bf16_ = t;
    // Read in place where aligned, or where a device takes it (read once, to upload).
    if (reinterpret_cast<std::uintptr_t>(t.bytes.data()) % 64 == 0 || use == WeightUse::upload) {
      check_bf16(t, name, width);
      m.rows_ = static_cast<int>(rows);
      m.cols_ = static_cast<int>(cols);
      return m;  // the map's pages are the weight
    }
    m.aligned_ = checked_copy(t, name, width);
    m.bf16_.bytes = {m.aligned_.get(), t.bytes.size()};
  } else {
    m.f32_ = checked_floats(t, name, width);
  }
  m.rows_ = static_cast<int>(rows);
  m.cols_ = static_cast<int>(cols);
  release_mapped_pages(t.bytes);  // held once: in its copy
  return m;
}

WeightMatrix WeightMatrix::with_rounded_rows(
    const WeightMatrix& m, const std::string& name,
    const std::function<void(float* row, int cols)>& round) {
  std::vector<float> values(static_cast<std::size_t>(m.rows()) * m.cols());
  m.rows_to_float(0, m.rows(), values.data());
  for (int r = 0; r < m.rows(); ++r)
    round(values.data() + static_cast<std::size_t>(r) * m.cols(), m.cols());
  return from_values(std::move(values), name, "", m.rows(), m.cols(), WeightFormat::f32);
}

WeightMatrix WeightMatrix::from_values(std::vector<float> values, const std::string& name,
                                       const std::string& file, std::int64_t rows,
                                       std::int64_t cols, WeightFormat format) {
  TensorView view{.name = name,
                  .dtype = DType::f32,
                  .shape = {rows, cols},
                  .bytes = std::as_bytes(std::span<const float>(values)),
                  .file = file};
  const auto width = static_cast<std::size_t>(cols);
  WeightMatrix m;
  m.rows_ = static_cast<int>(rows);
  m.cols_ = static_cast<int>(cols);
  if (format == WeightFormat::q8) {
    m.q8_ = quantize(view, name, m.rows_, m.cols_);
  } else if (format == WeightFormat::bf16) {
    m.aligned_ = checked_bf16(values, name, file, width);
    m.bf16_ = TensorView{.name = name,
                         .dtype = DType::bf16,
                         .shape = {rows, cols},
                         .bytes = {m.aligned_.get(), values.size() * 2},
                         .file = file};
  } else {
    if (const auto bad = first_nonfinite(values)) fail_nonfinite(file, name, *bad, width);
    m.f32_ = std::move(values);
  }
  return m;
}

std::size_t WeightMatrix::releasable_bytes() const {
  if (is_q8()) return q8_->releasable_bytes();
  return weight_buffer_mapped_bytes(aligned_) > 0 ? bf16_.bytes.size() : 0;
}

std::size_t WeightMatrix::release_host_copy() {
  if (is_q8()) return q8_->release_host_copy();
  return release_weight_buffer(aligned_);  // none for a bf16 matrix read in place
}

WeightFormat WeightMatrix::format() const {
  if (is_q8()) return WeightFormat::q8;
  return is_bf16() ? WeightFormat::bf16 : WeightFormat::f32;
}

std::size_t WeightMatrix::bytes() const {
  if (is_q8()) return q8_->bytes();
  return is_bf16() ? bf16_.bytes.size() : f32_.size() * sizeof(float);
}

void WeightMatrix::rows_to_float(int first, int count, float* out) const {
  const std::size_t offset = static_cast<std::size_t>(first) * cols_;
  const std::size_t n = static_cast<std::size_t>(count) * cols_;
  if (is_q8()) {
    q8_->dequantize_rows(first, count, out);
  } else if (is_bf16()) {
    to_float(bf16_, offset, {out, n});
  } else {
    std::memcpy(out, f32_.data() + offset, n * sizeof(float));
  }
}

const Q8Matrix& WeightMatrix::q8() const {
  if (!is_q8()) throw std::logic_error("q8() of a " + std::string(to_string(format())) + " matrix");
  return *q8_;
}

std::vector<float> load_vector(const ModelWeights& weights, const std::string& name,
                               std::int64_t size) {
  const TensorView& t = weights.at(name);
  check_shape(t, name, {size});
  std::vector<float> values = to_float(t);
  if (const auto bad = first_nonfinite(values)) {
    throw ModelFileError(t.file, "tensor '" + name + "' holds an infinity or a NaN (element " +
                                     std::to_string(*bad) + ")");
  }
  release_mapped_pages(t.bytes);
  return values;
}

}  // namespace baton
