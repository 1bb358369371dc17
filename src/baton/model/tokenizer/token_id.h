// TokenId: an index into a model's vocabulary. Thread-safety: a value.
#pragma once

#include <cstdint>

namespace baton {

using TokenId = std::int32_t;

}  // namespace baton
