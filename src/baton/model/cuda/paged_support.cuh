// What the two paged decode-attention kernels share (attention_kernels.cu: a warp a key;
// paged_slots.cu: key slots of a few lanes each): where a row's keys start, how they are
// cut into ranges, and the block's last step (its warps' softmax states merged and its
// output or its range's partial stored, in the layout combine_splits_kernel reads).
// Internal to model/cuda/'s .cu files. Thread-safety: device code.
#pragma once

#include <cfloat>

#include "baton/model/cuda/kernel_support.cuh"
#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels::detail {

// The first key a row at `position` sees (its window's start).
__device__ inline int first_key(const AttentionShape& s, int position) {
  return s.window > 0 ? max(0, position - s.window + 1) : 0;
}

// The ranges a row of `length` keys is cut into: `splits` for every row, or with
// split_keys one per split_keys keys (at most `splits`, which the caller makes at least
// every row's count), so that a row's ranges depend on its own length alone.
__device__ inline int row_splits(const PagedAttention& a, int length) {
  return a.split_keys > 0 ? min(a.splits, (length + a.split_keys - 1) / a.split_keys) : a.splits;
}

// The keys [begin, end) of range `split` of a row at `position`; empty (begin >= end) for
// a range the row does not have (split >= splits) and for one past its keys (a row of
// fewer keys than ranges), whose empty state the merge still needs.
struct KeyRange {
  int begin = 0;
  int end = 0;
  int splits = 1;
};
__device__ inline KeyRange key_range(const PagedAttention& a, const AttentionShape& s, int position,
                                     int split) {
  const int first = first_key(s, position);
  const int splits = row_splits(a, position + 1 - first);
  if (split >= splits) return {.begin = 0, .end = 0, .splits = splits};
  const int length = (position + 1 - first + splits - 1) / splits;
  const int begin = first + split * length;
  return {.begin = begin, .end = min(position + 1, begin + length), .splits = splits};
}

// After __syncthreads: each warp's maximum, sum and unnormalised output per query head of
// the group (GM x DM arrays) merged in warp order; one range whole goes to `out`, one of
// several to the partial scratch with its maximum and sum.
template <int GM, int DM>
__device__ void merge_warps_and_store(const float (&warp_m)[kAttentionWarps][GM],
                                      const float (&warp_l)[kAttentionWarps][GM],
                                      const float (&warp_o)[kAttentionWarps][GM][DM],
                                      const PagedAttention& a, const AttentionShape& s, int item,
                                      int r, int g, int split, int splits) {
  const int group = s.heads / s.kv_heads;
  const int d = s.head_dim;
  for (int i = threadIdx.x; i < group * d; i += blockDim.x) {
    const int gi = i / d;
    const int c = i % d;
    float best = -FLT_MAX;
    for (int w = 0; w < kAttentionWarps; ++w) best = fmaxf(best, warp_m[w][gi]);
    float total = 0.0f;
    float value = 0.0f;
    for (int w = 0; w < kAttentionWarps; ++w) {
      if (warp_l[w][gi] == 0.0f) continue;  // a warp that saw no key
      const float f = expf(warp_m[w][gi] - best);
      total += warp_l[w][gi] * f;
      value += warp_o[w][gi][c] * f;
    }
    if (splits == 1) {
      const std::size_t out = (static_cast<std::size_t>(r) * s.heads + g * group + gi) * d + c;
      a.out[out] = __float2bfloat16(total > 0.0f ? value / total : 0.0f);
    } else {
      float* p =
          a.partial +
          ((static_cast<std::size_t>(item) * s.kv_heads + g) * a.splits + split) * group * (d + 2);
      p[gi * d + c] = value;
      if (c == 0) {
        p[group * d + 2 * gi] = best;
        p[group * d + 2 * gi + 1] = total;
      }
    }
  }
}

// The key-slot kernel (paged_slots.cu): whether it takes this shape (head sizes 64, 128
// and 256), and its launch (the merge of several ranges is the caller's).
bool paged_slots_fit(const AttentionShape& s);
void launch_paged_slots(const PagedAttention& a, const RowMap& map, const AttentionShape& s,
                        cudaStream_t stream);

}  // namespace baton::cuda::kernels::detail
