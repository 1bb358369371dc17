// BurstKind: what an engine does while it holds the GPU turn.
// Thread-safety: a plain value.
#pragma once

#include <string_view>

namespace baton {

// decode: one decode step of a running batch; prefill: one prefill chunk;
// embed: one call of an embedding model on the shared executor.
enum class BurstKind { decode, prefill, embed };

// Where inside a burst a yield point sits: between two ops of a layer, or between layers.
enum class Boundary { op, layer };

constexpr std::string_view to_string(BurstKind kind) {
  switch (kind) {
    case BurstKind::decode:
      return "decode";
    case BurstKind::prefill:
      return "prefill";
    case BurstKind::embed:
      return "embed";
  }
  return "decode";
}

}  // namespace baton
