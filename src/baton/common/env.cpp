#include "baton/common/env.h"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace baton {

namespace {

std::int64_t int_from_env(const char* name, std::int64_t fallback, std::int64_t least,
                          const char* expected) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return fallback;
  std::string_view text(raw);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < least) {
    throw std::invalid_argument(std::string("[env] ") + name + "=" + raw + ": expected " +
                                expected);
  }
  return value;
}

}  // namespace

std::int64_t positive_int_from_env(const char* name, std::int64_t fallback) {
  return int_from_env(name, fallback, 1, "a positive integer");
}

std::int64_t non_negative_int_from_env(const char* name, std::int64_t fallback) {
  return int_from_env(name, fallback, 0, "a whole number, 0 or more");
}

bool switch_from_env(const char* name, bool when_unset) {
  const char* value = std::getenv(name);
  if (value == nullptr) return when_unset;
  if (std::string_view(value) == "1") return true;
  if (std::string_view(value) == "0") return false;
  throw std::invalid_argument(std::string(name) + " must be 0 or 1, not '" + value + "'");
}

}  // namespace baton
