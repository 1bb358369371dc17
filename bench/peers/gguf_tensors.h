// The tensor data of bench/peers/gguf_writer.cpp: a safetensors tensor (bf16, f16 or f32)
// re-encoded row by row as a ggml type, optionally with its rows reordered.
//   F32, F16 (IEEE binary16, rounded to nearest even), BF16 (rounded to nearest even);
//   Q8_0: blocks of 32 values, each an f16 scale d = max|x| / 127 followed by 32 int8
//   round(x / d) (all zero when the block is).
// A row of the safetensors tensor is its last dimension; a 1-D tensor is one row.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "baton/model/files/tensor_view.h"
#include "gguf_file.h"

namespace baton::peers {

// IEEE binary16 bits of `value`, rounded to nearest even (overflow to infinity, NaN kept).
std::uint16_t float_to_f16(float value);

// The rows of a q or k projection (heads * head_dim rows) in llama.cpp's order for its
// "llama" arch: within each head, HF's rotate-half layout (element i pairs with i + d/2)
// becomes the interleaved one (element 2i pairs with 2i + 1). Entry r is the source row of
// output row r.
std::vector<std::int64_t> interleaved_rope_rows(std::int64_t heads, std::int64_t head_dim);

// Writes `tensor` as `type`: output row r is source row rows[r], or row r when `rows` is
// empty. A 1-D tensor with a permutation has its elements reordered the same way.
void write_tensor(std::ostream& out, const TensorView& tensor, GgmlType type,
                  const std::vector<std::int64_t>& rows);

}  // namespace baton::peers
