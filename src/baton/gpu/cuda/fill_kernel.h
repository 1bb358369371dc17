// Synthetic weights on the device: fills `count` bf16 values with a deterministic
// pseudo-random pattern in [-1, 1) (never zeros, which would time faster than real data).
// Returns the launch's status (the caller checks it; this file has no C++ deps).
// Thread-safety: launch from the thread that owns `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace baton::cuda {

cudaError_t launch_fill_bf16(cudaStream_t stream, void* data, std::size_t count,
                             std::uint32_t seed);

}  // namespace baton::cuda
