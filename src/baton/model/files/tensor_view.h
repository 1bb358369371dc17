// TensorView: one tensor of a safetensors or GGUF file, a view of its bytes (zero-copy: the
// bytes live in the file's memory map), and its conversion to float.
// Thread-safety: a TensorView is an immutable value; the bytes stay valid as long as the
// SafetensorsFile (or ModelWeights) it came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baton/model/files/dtype.h"

namespace baton {

struct TensorView {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;   // [] is a scalar (one element)
  std::span<const std::byte> bytes;  // element_count() * dtype_size(dtype) bytes
  std::string file;                  // the file it comes from, for messages
  // A GGUF tensor stored in quantized ggml blocks (ggml_blocks.h): `bytes` are the blocks
  // of its rows (the last dimension), dtype is u8.
  std::optional<std::uint32_t> ggml_type;

  // The product of the shape. A view from SafetensorsFile has been checked: every
  // dimension is >= 0, the product does not overflow, and it matches bytes.size().
  std::size_t element_count() const;
};

// Converts elements [first, first + out.size()) of `tensor` (little-endian bf16, f16 or
// f32) to float into `out`, exactly (half.h); of ggml blocks, whole blocks only.
// Throws ModelFileError "file: tensor 'name': unsupported dtype I64 ..." for any other
// dtype, and std::out_of_range when the range does not fit in the tensor's bytes.
void to_float(const TensorView& tensor, std::size_t first, std::span<float> out);

// The whole tensor as floats; same errors.
std::vector<float> to_float(const TensorView& tensor);

}  // namespace baton
