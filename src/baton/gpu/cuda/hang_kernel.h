// A real GPU hang on demand: a one-thread kernel that spins until a host-mapped counter
// reaches `release_at`. The watchdog sees its stream make no progress; the stream's reset
// raises the counter and the kernel returns, so detection and in-place recovery run on
// the real device.
// Both return the launch's status (the caller checks it; this file has no C++ deps).
// Thread-safety: launch from the stream's owner thread.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace baton::cuda {

cudaError_t launch_hang(cudaStream_t stream, const volatile std::uint32_t* counter,
                        std::uint32_t release_at);

// Fills `count` bf16 values with a deterministic pseudo-random pattern in [-1, 1)
// (synthetic weights: never zeros, which would time faster than real data).
cudaError_t launch_fill_bf16(cudaStream_t stream, void* data, std::size_t count,
                             std::uint32_t seed);

}  // namespace baton::cuda
