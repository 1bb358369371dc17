#include "baton/model/weight_matrix.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>

#include "baton/model/files/ggml_blocks.h"
#include "baton/model/files/half.h"
#include "baton/model/mlx_affine.h"
#include "baton/model/files/model_file_error.h"

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

// Quantizes tensor `t` [rows x cols] a few rows at a time, so that no f32 copy of the
// whole tensor (the embedding's can be hundreds of MB) is ever held.
std::shared_ptr<const Q8Matrix> quantize(const TensorView& t, const std::string& name, int rows,
                                         int cols) {
  auto q = std::make_shared<Q8Matrix>(rows, cols);
  const int chunk = std::max(1, (1 << 16) / std::max(cols, 1));
  std::vector<float> buffer(static_cast<std::size_t>(chunk) * cols);
  for (int first = 0; first < rows; first += chunk) {
    const int count = std::min(chunk, rows - first);
    to_float(t, static_cast<std::size_t>(first) * cols,
             {buffer.data(), static_cast<std::size_t>(count) * cols});
    q->quantize_rows(first, count, buffer.data());
  }
  if (!q->finite()) {
    throw ModelFileError(t.file, "tensor '" + name +
                                     "' holds an infinity or a NaN, which q8 cannot hold "
                                     "(load it as bf16 or f32)");
  }
  return q;
}

// GGUF's Q8_0 blocks (an f16 scale, then 32 int8 values) are Q8Matrix's groups with the
// scale widened: copied exactly, where quantizing their values again could move them.
std::shared_ptr<const Q8Matrix> copy_q8_0(const TensorView& t, const std::string& name, int rows,
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

// A copy of `bytes` on a 64-byte boundary, or a 2 MiB one with huge pages asked for when
// it is that large (fewer TLB misses while a decode step streams it).
std::shared_ptr<const std::byte> aligned_copy(std::span<const std::byte> bytes) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t align = bytes.size() >= kHugePage ? kHugePage : 64;
  const std::size_t size = (bytes.size() + align - 1) / align * align;
  auto* raw = static_cast<std::byte*>(std::aligned_alloc(align, size));
  if (raw == nullptr) throw std::bad_alloc();
  std::shared_ptr<const std::byte> owner(
      raw, [](const std::byte* p) { std::free(const_cast<std::byte*>(p)); });
  // Only a hint: without huge pages the copy works the same.
  if (align == kHugePage) static_cast<void>(::madvise(raw, size, MADV_HUGEPAGE));
  std::memcpy(raw, bytes.data(), bytes.size());
  return owner;
}

}  // namespace

WeightMatrix WeightMatrix::load(const ModelWeights& weights, const std::string& name,
                                std::int64_t rows, std::int64_t cols, WeightFormat format) {
  if (is_mlx_affine(weights, name)) {
    return from_values(dequantize_mlx_affine(weights, name, rows, cols), name,
                       weights.at(name).file, rows, cols, format);
  }
  const TensorView& t = weights.at(name);
  check_shape(t, name, {rows, cols});
  if (t.ggml_type && format != WeightFormat::q8) {  // GGUF blocks: dequantized, as MLX's
    return from_values(to_float(t), name, t.file, rows, cols, format);
  }
  WeightMatrix m;
  m.rows_ = static_cast<int>(rows);
  m.cols_ = static_cast<int>(cols);
  if (format == WeightFormat::q8 && t.ggml_type == kGgmlQ8_0 && cols % Q8Matrix::kGroup == 0) {
    m.q8_ = copy_q8_0(t, name, m.rows_, m.cols_);
  } else if (format == WeightFormat::q8) {
    m.q8_ = quantize(t, name, m.rows_, m.cols_);
  } else if (format == WeightFormat::bf16 && t.dtype == DType::bf16) {
    m.bf16_ = t;
    if (reinterpret_cast<std::uintptr_t>(t.bytes.data()) % 64 != 0) {
      m.aligned_ = aligned_copy(t.bytes);
      m.bf16_.bytes = {m.aligned_.get(), t.bytes.size()};
    }
  } else {
    m.f32_ = to_float(t);
  }
  return m;
}

WeightMatrix WeightMatrix::from_values(std::vector<float> values, const std::string& name,
                                       const std::string& file, std::int64_t rows,
                                       std::int64_t cols, WeightFormat format) {
  TensorView view{.name = name,
                  .dtype = DType::f32,
                  .shape = {rows, cols},
                  .bytes = std::as_bytes(std::span<const float>(values)),
                  .file = file};
  WeightMatrix m;
  m.rows_ = static_cast<int>(rows);
  m.cols_ = static_cast<int>(cols);
  if (format == WeightFormat::q8) {
    m.q8_ = quantize(view, name, m.rows_, m.cols_);
  } else if (format == WeightFormat::bf16) {
    std::vector<std::uint16_t> bf16(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bf16[i] = float_to_bf16(values[i]);
    const auto bytes = std::as_bytes(std::span<const std::uint16_t>(bf16));
    m.aligned_ = aligned_copy(bytes);
    m.bf16_ = TensorView{.name = name,
                         .dtype = DType::bf16,
                         .shape = {rows, cols},
                         .bytes = {m.aligned_.get(), bytes.size()},
                         .file = file};
  } else {
    m.f32_ = std::move(values);
  }
  return m;
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
  return to_float(t);
}

}  // namespace baton
