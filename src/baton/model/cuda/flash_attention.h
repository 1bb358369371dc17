// flash_attention: causal (and windowed) attention of one prefill chunk over its sequence's
// contiguous keys and values, in tiles on the tensor cores (WMMA, bf16 in, f32 out), with
// an online softmax: no score matrix in memory, and key tiles past a row's position are
// never read. It replaces the cuBLAS scores / softmax / values path for the head sizes it
// is built for (flash_fits); the other sizes keep that path.
// Thread-safety: a reentrant launcher; the buffers belong to the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {

// True for the head sizes the kernel is instantiated for: 16, 32, 64, 128 and 256.
bool flash_fits(int head_dim);

struct FlashChunk {
  const bf16* q = nullptr;       // grouped, over all `rows` of the step
  const bf16* keys = nullptr;    // [length x kv_heads x head_dim], the sequence's positions 0..
  const bf16* values = nullptr;  // as keys
  int rows = 0;                  // the step's rows
  int first_row = 0;             // the chunk's first row in the step
  int count = 0;                 // the chunk's rows
  int start = 0;                 // the position of its first row
  bf16* out = nullptr;           // [rows x heads x head_dim]; rows of the chunk are written
};
cudaError_t flash_attention(const FlashChunk& c, const AttentionShape& shape, cudaStream_t stream);

}  // namespace baton::cuda::kernels
