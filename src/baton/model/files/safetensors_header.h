// The JSON header of a safetensors file (see safetensors.h for the format), parsed and
// each tensor entry checked against the data section: field types, dtype, shape, offsets
// within the data, byte size. Overlaps between tensors are checked by the caller.
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/files/tensor_view.h"

namespace baton {

struct SafetensorsHeader {
  std::vector<TensorView> tensors;  // sorted by name; bytes are views into the data section
  std::map<std::string, std::string, std::less<>> metadata;
};

// Parses `json_text` (the N header bytes) for a file whose data section is `data`. `file`
// starts every message; throws ModelFileError.
SafetensorsHeader parse_safetensors_header(std::string_view json_text,
                                           std::span<const std::byte> data,
                                           const std::string& file);

}  // namespace baton
