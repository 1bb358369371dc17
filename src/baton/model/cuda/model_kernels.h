// The CUDA kernels of the LLM forward pass that cuBLAS does not cover: embedding lookup,
// RMSNorm, the q/k/v epilogue (bias, qwen3's q/k norm, RoPE, the store into the paged KV
// blocks), SwiGLU, attention over the paged blocks (decode and short chunks, split along
// the sequence for long contexts), and the pieces of the cuBLAS attention of prefill
// chunks (gathering a sequence's keys, the causal softmax, the head layout), and greedy
// picks from the logits (so that no logits need to cross to the host). Activations
// are bf16 where a matrix product reads them and f32 in the residual stream; every kernel
// accumulates in f32. Each launcher returns the launch's status (cudaGetLastError).
//
// Layouts: the KV blocks of a layer are [block][slot][kv_head][head_dim] bf16; queries are
// kept "grouped", [kv_head][row][group][head_dim] bf16 (group = heads / kv_heads), so that
// the query heads sharing one kv head are one contiguous matrix per sequence.
// Thread-safety: launchers are reentrant; the buffers belong to the caller's stream.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace baton::cuda::kernels {

using bf16 = __nv_bfloat16;

// Where each row of a step lives: its position, its sequence, and the sequences' block
// tables ([sequences x max_blocks]); device pointers.
struct RowMap {
  const int* position = nullptr;
  const int* sequence = nullptr;
  const int* block_table = nullptr;
  int max_blocks = 0;
  int block_tokens = 0;
};

struct AttentionShape {
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int window = 0;  // sliding window; 0: none
};

// x[r] = table[tokens[r]] widened to f32; rows of `hidden`.
cudaError_t embed(const bf16* table, const int* tokens, int rows, int hidden, float* x,
                  cudaStream_t stream);

// out[r] = x[rows_of ? rows_of[r] : r] / rms * weight, as bf16 (or f32 with rms_norm_f32).
cudaError_t rms_norm(const float* x, const int* rows_of, int rows, int hidden, const float* weight,
                     float eps, bf16* out, cudaStream_t stream);
cudaError_t rms_norm_f32(const float* x, int rows, int hidden, const float* weight, float eps,
                         float* out, cudaStream_t stream);

// The epilogue of the fused q/k/v projection qkv [rows x (heads + 2 kv_heads) * head_dim]:
// adds `bias` (may be null), applies the per-head RMSNorm of q and k (q_norm, k_norm may
// be null), rotates q and k for each row's position, writes q grouped (q_out, [kv_heads x
// rows x group x head_dim]) and k and v into the layer's blocks.
struct QkvEpilogue {
  const float* qkv = nullptr;
  const float* bias = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  float eps = 1e-6f;
  const float* inverse_frequencies = nullptr;  // head_dim / 2
  bf16* q_out = nullptr;
  bf16* keys = nullptr;    // the layer's key blocks
  bf16* values = nullptr;  // the layer's value blocks
};
// Of rows [first, first + count) of a step of `rows` rows (the grouped q's layout).
cudaError_t qkv_epilogue(const QkvEpilogue& e, const RowMap& map, const AttentionShape& shape,
                         int first, int count, int rows, cudaStream_t stream);

// Attention of the listed rows (row_list, `count` of them) over their sequences' blocks,
// causal and windowed, into out [rows x heads x head_dim] bf16. `splits` > 1 (at most
// kMaxSplits) cuts each row's keys into that many equal ranges (`partial` as scratch:
// count * kv_heads * splits * group * (head_dim + 2) floats), combined afterwards.
struct PagedAttention {
  const bf16* q = nullptr;  // grouped, over all `rows` of the step
  const bf16* keys = nullptr;
  const bf16* values = nullptr;
  const int* row_list = nullptr;
  int count = 0;
  int rows = 0;
  int splits = 1;
  // > 0: each row cut into ranges of this many keys (at most `splits`, which must be at
  // least every listed row's count), so that its result does not depend on the other rows
  // (`--deterministic`); 0: every row into `splits`.
  int split_keys = 0;
  float* partial = nullptr;
  bf16* out = nullptr;
  // The key-slot kernel (paged_slots.cu: several keys a warp at once, the next ones' loads
  // in flight) where it takes the head size, instead of the warp-a-key one (the runner's
  // default; BATON_CUDA_PAGED_SLOTS=0 turns it off).
  bool key_slots = false;
};
cudaError_t paged_attention(const PagedAttention& a, const RowMap& map, const AttentionShape& shape,
                            cudaStream_t stream);
// The largest group (heads per kv head) and head_dim paged_attention supports.
constexpr int kMaxGroup = 8;
constexpr int kMaxHeadDim = 256;
constexpr int kMaxSplits = 64;

// Copies positions [first, length) of sequence `sequence`'s keys and values from the
// blocks into contiguous [length x kv_heads x head_dim] buffers (at the same positions).
cudaError_t gather_kv(const bf16* keys, const bf16* values, const RowMap& map, int sequence,
                      int first, int length, int kv_dim, bf16* keys_out, bf16* values_out,
                      cudaStream_t stream);

// scores [kv_heads x (count * group) x length] f32 (already scaled) -> probabilities bf16
// of the same shape; row (g, t, j) sees keys [first, start + t] (causal, windowed).
cudaError_t causal_softmax(const float* scores, int kv_heads, int count, int group, int length,
                           int start, int window, bf16* probabilities, cudaStream_t stream);

// grouped [kv_heads x count x group x head_dim] -> out rows [first_row, first_row + count)
// of [rows x heads x head_dim].
cudaError_t ungroup(const bf16* grouped, int kv_heads, int count, int group, int head_dim,
                    int first_row, bf16* out, cudaStream_t stream);

// gate_up [rows x 2 inner] (gate, then up) -> out [rows x inner] = silu(gate) * up.
cudaError_t silu_mul(const bf16* gate_up, int rows, int inner, bf16* out, cudaStream_t stream);

// The most likely token of each row of logits [rows x vocab] (the lowest id among ties),
// its log-probability, and whether every logit was finite. Two passes: slices of each
// row (at most kGreedySlices, scratch: rows * kGreedySlices partials), then their merge.
struct GreedyPick {
  int token = 0;
  float logprob = 0.0f;
  int finite = 1;
};
struct GreedyPartial {
  float best = 0.0f;
  int token = 0;
  float total = 0.0f;  // sum of exp(logit - best) over the slice
  int finite = 1;
};
constexpr int kGreedySlices = 64;
cudaError_t greedy(const float* logits, int rows, int vocab, GreedyPartial* scratch,
                   GreedyPick* out, cudaStream_t stream);

}  // namespace baton::cuda::kernels
