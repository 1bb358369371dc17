// flash_attention: causal (and windowed) attention of one prefill chunk over its sequence's
// contiguous keys and values, in tiles on the tensor cores (bf16 in, f32 out), with an
// online softmax: no score matrix in memory, and key tiles past a row's position are never
// read. Head sizes up to 128 run on mma.m16n8k16 with the scores in registers and the
// tiles loaded asynchronously (flash_mma.cuh); 256 on WMMA (flash_wmma.cuh). It replaces the cuBLAS
// scores / softmax / values path for the head sizes it is built for (flash_fits); the other sizes
// keep that path. A chunk too short to fill the chip (a prefill piece of a few dozen rows at a long
// context) splits its keys into ranges, one block each, whose partial results a second kernel
// merges (flash_splits). Thread-safety: a reentrant launcher; the buffers belong to the caller's
// stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {

// True for the head sizes the kernel is instantiated for: 16, 32, 64, 128 and 256.
bool flash_fits(int head_dim);

// Which kernel: mma where the head size allows (the default; mma8: 8 warps, 128 query
// vectors a block), or the WMMA kernel that came before it (kept for head size 256, and
// for comparisons).
enum class FlashKernel { mma, mma8, wmma };

struct FlashChunk {
  const bf16* q = nullptr;       // grouped, over all `rows` of the step
  const bf16* keys = nullptr;    // [length x kv_heads x head_dim], the sequence's positions 0..
  const bf16* values = nullptr;  // as keys
  int rows = 0;                  // the step's rows
  int first_row = 0;             // the chunk's first row in the step
  int count = 0;                 // the chunk's rows
  int start = 0;                 // the position of its first row
  bf16* out = nullptr;           // [rows x heads x head_dim]; rows of the chunk are written
  int splits = 1;                // key ranges; > 1 needs `partial`
  float* partial = nullptr;      // flash_partial_floats(...) floats of scratch
  int first_kv_head = 0;         // the KV heads attended: a piece of attention cut by heads
  int kv_head_count = 0;         // 0: all from first_kv_head
  FlashKernel kernel = FlashKernel::mma;
};
cudaError_t flash_attention(const FlashChunk& c, const AttentionShape& shape, cudaStream_t stream);

// The flash kernel's blocks at `head_dim` that the device holds at once (its
// multiprocessors times the blocks resident on each); 0 for a head size it is not built for.
int flash_slots(int head_dim, int multiprocessors);
// The key ranges for a chunk of `count` rows ending at position `length` - 1, over
// `kv_head_count` KV heads (0: all): key_splits.h's choice for the device's `slots`, each
// range at least kFlashMinSplitTiles tiles.
int flash_splits(int count, int length, const AttentionShape& shape, int slots,
                 int kv_head_count = 0);
// The scratch any chunk split by flash_splits(..., slots) needs.
std::size_t flash_partial_floats(int slots, int head_dim);
constexpr int kFlashMinSplitTiles = 2;  // of 64 keys
constexpr int kFlashMaxSplits = 32;

}  // namespace baton::cuda::kernels
