// The long dispatch of the `long-dispatch` scenario on the GPU: one kernel that attends
// one query per head over every cached key (bf16 K and V, [heads][keys][head_dim]), one
// thread block per head and no split along the keys, so its length grows with the keys.
// Returns the launch's status (the caller checks it; this file has no C++ deps).
// Thread-safety: launch from the thread that owns `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace baton::cuda {

inline constexpr std::size_t kLongAttentionHeadDim = 256;

// q: [heads][256] f32; k, v: [heads][keys][256] bf16; out: [heads][256] f32.
cudaError_t launch_long_attention(cudaStream_t stream, const float* q, const void* k, const void* v,
                                  float* out, std::size_t heads, std::size_t keys);

}  // namespace baton::cuda
