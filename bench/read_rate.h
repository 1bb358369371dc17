// A plain streaming read of `bytes` (a multiple of 16) by `blocks` blocks of 512 threads;
// `sink` holds a word per block. Used to measure the device's read rate.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

cudaError_t launch_read(const void* data, std::size_t bytes, unsigned* sink, int blocks,
                        cudaStream_t stream);
