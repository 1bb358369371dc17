// BurstKind: what an engine does while it holds the GPU turn.
// Thread-safety: a plain value.
#pragma once

#include <string_view>

namespace baton {

// decode: one decode step of a running batch; prefill: one prefill chunk;
// embed: one call of an embedding model on the shared executor.
enum class BurstKind { decode, prefill, embed };

// Where inside a burst a yield point sits: between two ops of a layer, or between layers.
// queued_op: between two ops, the next already committed behind the running one, so that
// the device never waits for the host between them; the turn waits for the running op
// only, and drains the queued one only to hand over.
enum class Boundary { op, queued_op, layer };

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
