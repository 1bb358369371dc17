// Reading named limits from the environment (BATON_* overrides).
// Thread-safety: reads the process environment; call during start-up, not while
// another thread may call setenv().
#pragma once

#include <cstdint>
#include <string_view>

namespace baton {

// Returns the value of `name` as a positive integer, or `fallback` when unset.
// Throws std::invalid_argument naming the variable when set to anything else.
std::int64_t positive_int_from_env(const char* name, std::int64_t fallback);

}  // namespace baton
