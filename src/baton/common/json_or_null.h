// A value, or JSON null where it is absent: how baton's answers and reports write an
// optional field.
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace baton {

template <typename T>
nlohmann::json json_or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace baton
