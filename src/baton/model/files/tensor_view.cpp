// TensorView: element count and the bf16/f16/f32 -> float conversion.
// Thread-safety: pure functions.
#include "baton/model/files/tensor_view.h"

#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "baton/model/files/ggml_blocks.h"
#include "baton/model/files/half.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host needs byte swaps here");

template <float (*Convert)(std::uint16_t)>
void convert_16bit(const std::byte* source, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, source + i * sizeof bits, sizeof bits);
    out[i] = Convert(bits);
  }
}

float bf16_value(std::uint16_t bits) { return bf16_to_float(bits); }
float f16_value(std::uint16_t bits) { return f16_to_float(bits); }

void check_range(const TensorView& tensor, std::size_t first, std::size_t count) {
  const std::size_t available = tensor.bytes.size() / dtype_size(tensor.dtype);
  if (first > available || count > available - first) {
    throw std::out_of_range("tensor '" + tensor.name + "': elements [" + std::to_string(first) +
                            ", " + std::to_string(first) + " + " + std::to_string(count) +
                            ") beyond its " + std::to_string(available) + " elements");
  }
}

}  // namespace

std::size_t TensorView::element_count() const {
  std::size_t count = 1;
  for (const std::int64_t dim : shape) count *= static_cast<std::size_t>(dim);
  return count;
}

// Whole blocks of a quantized GGUF tensor.
void blocks_to_float(const TensorView& tensor, std::size_t first, std::span<float> out) {
  const std::optional<GgmlBlock> block = ggml_block(*tensor.ggml_type);
  const std::size_t total = tensor.element_count();
  if (!block || first % block->values != 0 || out.size() % block->values != 0 || first > total ||
      out.size() > total - first) {
    throw std::out_of_range("tensor '" + tensor.name + "': elements [" + std::to_string(first) +
                            ", +" + std::to_string(out.size()) + ") are not whole blocks of it");
  }
  ggml_to_float(*tensor.ggml_type,
                tensor.bytes.subspan(first / block->values * block->bytes,
                                     out.size() / block->values * block->bytes),
                out);
}

void to_float(const TensorView& tensor, std::size_t first, std::span<float> out) {
  if (tensor.ggml_type) {
    blocks_to_float(tensor, first, out);
    return;
  }
  if (!is_float_readable(tensor.dtype)) {
    throw ModelFileError(tensor.file, "tensor '" + tensor.name + "': unsupported dtype " +
                                          std::string(dtype_name(tensor.dtype)) +
                                          " (readable as float: BF16, F16, F32)");
  }
  check_range(tensor, first, out.size());
  const std::byte* source = tensor.bytes.data() + first * dtype_size(tensor.dtype);
  switch (tensor.dtype) {
    case DType::bf16:
      convert_16bit<bf16_value>(source, out);
      break;
    case DType::f16:
      convert_16bit<f16_value>(source, out);
      break;
    default:  // f32
      if (!out.empty()) std::memcpy(out.data(), source, out.size_bytes());
      break;
  }
}

std::vector<float> to_float(const TensorView& tensor) {
  std::vector<float> values(tensor.ggml_type ? tensor.element_count()
                                             : tensor.bytes.size() / dtype_size(tensor.dtype));
  to_float(tensor, 0, values);
  return values;
}

}  // namespace baton
