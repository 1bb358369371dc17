// CommitLimits: when an open command buffer is committed (the ops and bytes caps).
// The defaults copy the Metal runtime the mission learns from: 50 ops or 50 MB.
// Thread-safety: a plain value.
#pragma once

#include <cstddef>

namespace baton {

struct CommitLimits {
  std::size_t max_ops = 50;
  std::size_t max_bytes = std::size_t{50} << 20;

  // Defaults overridden by BATON_MAX_OPS_PER_BUFFER and BATON_MAX_MB_PER_BUFFER.
  // Throws std::invalid_argument when either is set to something not a positive integer.
  static CommitLimits from_env();
};

}  // namespace baton
