// BackendUnavailable: the backend a user named is unknown, not built into this binary, or
// has no device here (a usage error: exit 2).
// Thread-safety: a value.
#pragma once

#include <stdexcept>

namespace baton {

class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace baton
