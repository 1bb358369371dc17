// DType names and sizes: one table.
// Thread-safety: pure functions over a constant table.
#include "baton/model/files/dtype.h"

#include <array>

namespace baton {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 16> kDTypes{{
    {DType::boolean, "BOOL", 1},
    {DType::u8, "U8", 1},
    {DType::i8, "I8", 1},
    {DType::f8_e5m2, "F8_E5M2", 1},
    {DType::f8_e4m3, "F8_E4M3", 1},
    {DType::f8_e8m0, "F8_E8M0", 1},
    {DType::i16, "I16", 2},
    {DType::u16, "U16", 2},
    {DType::f16, "F16", 2},
    {DType::bf16, "BF16", 2},
    {DType::i32, "I32", 4},
    {DType::u32, "U32", 4},
    {DType::f32, "F32", 4},
    {DType::f64, "F64", 8},
    {DType::i64, "I64", 8},
    {DType::u64, "U64", 8},
}};

const DTypeInfo& info(DType dtype) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  return kDTypes.front();  // unreachable for a valid enumerator
}

}  // namespace

std::size_t dtype_size(DType dtype) { return info(dtype).size; }

std::string_view dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

bool is_float_readable(DType dtype) {
  return dtype == DType::bf16 || dtype == DType::f16 || dtype == DType::f32;
}

}  // namespace baton
