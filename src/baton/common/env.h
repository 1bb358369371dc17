// Reading named limits and switches from the environment (BATON_* overrides).
// Thread-safety: reads the process environment; call during start-up, not while
// another thread may call setenv().
#pragma once

#include <cstdint>
#include <string_view>

namespace baton {

// Returns the value of `name` as a positive integer, or `fallback` when unset.
// Throws std::invalid_argument naming the variable when set to anything else.
std::int64_t positive_int_from_env(const char* name, std::int64_t fallback);
// As positive_int_from_env(), and 0 too (a setting that 0 turns off).
std::int64_t non_negative_int_from_env(const char* name, std::int64_t fallback);

// An on/off switch: `when_unset` when `name` is unset, true when 1, false when 0. Throws
// std::invalid_argument naming the variable when set to anything else.
bool switch_from_env(const char* name, bool when_unset = true);

}  // namespace baton
