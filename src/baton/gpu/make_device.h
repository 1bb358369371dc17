// make_device: opens the backend a user names ("cpu"; "cuda" once that backend exists).
// Thread-safety: a pure factory.
#pragma once

#include <memory>
#include <stdexcept>
#include <string_view>

#include "baton/gpu/device.h"

namespace baton {

// The backend is unknown or not built into this binary.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `faults` (may be null) must outlive the device.
std::unique_ptr<Device> make_device(std::string_view backend, FaultHooks* faults = nullptr);

}  // namespace baton
