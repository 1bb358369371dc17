// DType: the element types a safetensors header may name, with their sizes and names.
// Only bf16, f16 and f32 can be read as floats (tensor_view.h); the others are accepted
// in a header so that a file holding, say, an i64 buffer still opens.
// Sub-byte types (F4, F6_*) are not known: a header naming one is rejected.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace baton {

enum class DType {
  boolean,
  u8,
  i8,
  f8_e5m2,
  f8_e4m3,
  f8_e8m0,
  i16,
  u16,
  f16,
  bf16,
  i32,
  u32,
  f32,
  f64,
  i64,
  u64,
};

// Bytes per element.
std::size_t dtype_size(DType dtype);

// The safetensors spelling: "BF16", "F8_E4M3", "BOOL", ...
std::string_view dtype_name(DType dtype);

// The DType spelled `name` in a safetensors header; nullopt for an unknown name.
std::optional<DType> parse_dtype(std::string_view name);

// Whether to_float (tensor_view.h) can read it: bf16, f16, f32.
bool is_float_readable(DType dtype);

}  // namespace baton
