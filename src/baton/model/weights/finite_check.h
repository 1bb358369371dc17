// finite_check: where a weight holds a NaN or an infinity, found in the pass that load
// already makes over it (a copy, a conversion), so that a model that would answer in NaNs
// is refused at load naming the tensor.
//   bf16: exponent bits all ones (0x7f80 set); f32 likewise (0x7f800000).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace baton {

// The index of the first bf16 value (little-endian pairs of bytes) that is a NaN or an
// infinity, or nothing.
std::optional<std::size_t> first_nonfinite_bf16(std::span<const std::byte> bytes);

// The index of the first value that is a NaN or an infinity, or nothing.
std::optional<std::size_t> first_nonfinite(std::span<const float> values);

}  // namespace baton
