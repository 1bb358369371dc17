// make_device: opens the backend a user names ("cpu" or "cuda").
// Thread-safety: a pure factory.
#pragma once

#include <memory>
#include <string_view>

#include "baton/gpu/backend_unavailable.h"
#include "baton/gpu/device.h"

namespace baton {

// `faults` (may be null) must outlive the device.
std::unique_ptr<Device> make_device(std::string_view backend, FaultHooks* faults = nullptr,
                                    CommitLimits limits = CommitLimits::from_env());

}  // namespace baton
