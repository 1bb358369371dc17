#include "baton/gpu/commit_limits.h"

#include "baton/common/env.h"

namespace baton {

CommitLimits CommitLimits::from_env() {
  CommitLimits limits;
  limits.max_ops = static_cast<std::size_t>(
      positive_int_from_env("BATON_MAX_OPS_PER_BUFFER", static_cast<std::int64_t>(limits.max_ops)));
  auto mb = positive_int_from_env("BATON_MAX_MB_PER_BUFFER",
                                  static_cast<std::int64_t>(limits.max_bytes >> 20));
  limits.max_bytes = static_cast<std::size_t>(mb) << 20;
  return limits;
}

}  // namespace baton
