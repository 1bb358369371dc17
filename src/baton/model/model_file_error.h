// ModelFileError: a model file that cannot be used (missing, truncated, malformed, or
// describing a model this build does not run). The message names the file and the
// problem. Thread-safety: a value.
#pragma once

#include <stdexcept>

namespace baton {

class ModelFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace baton
