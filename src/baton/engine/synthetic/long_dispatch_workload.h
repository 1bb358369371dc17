// LongDispatchWorkload: bursts made of single very long dispatches, to tell "a long single
// dispatch" apart from "concurrent submission" (the `long-dispatch` scenario). Each layer
// is one op: the attention of one query per head over `keys` cached keys of head_dim 256,
// in one pass with an online softmax, never split along the keys (a decode step of a
// model at a 100K-230K context whose attention kernel has no split-K).
// Thread-safety: one engine thread encodes; the stream's executor runs the ops. Buffers are
// reused across bursts, so the caller synchronizes before the next burst.
#pragma once

#include <cstddef>
#include <vector>

#include "baton/engine/synthetic/workload.h"

namespace baton {

struct AttentionShape {
  std::size_t layers = 4;  // dispatches per burst
  std::size_t heads = 4;   // one query each
  std::size_t keys = 32768;
  std::size_t head_dim = 256;

  // K and V of one layer (all layers read the same cache: the dispatch's length matters,
  // not the memory it fills), f32 on the CPU.
  std::size_t cache_values() const { return heads * keys * head_dim; }
  // The CPU's and the H200's defaults (`attend` in `baton repro --engine`).
  static AttentionShape cpu_default(std::size_t keys = 0);
  static AttentionShape cuda_default(std::size_t keys = 0);
};

// out[h][d] = sum_j softmax_j(q[h] . k[h][j] / sqrt(D)) v[h][j][d], in one pass over the
// keys with a running maximum (what one dispatch of the CPU backend computes).
void attend_one_pass(const AttentionShape& shape, const float* q, const float* k, const float* v,
                     float* out);

class LongDispatchWorkload final : public Workload {
 public:
  explicit LongDispatchWorkload(AttentionShape shape);
  BurstKind kind() const override { return BurstKind::decode; }
  std::size_t context_tokens() const override { return shape_.keys; }
  void encode_burst(Stream& stream, const std::function<void(Boundary)>& yield_point) override;
  const std::vector<float>& output() const { return out_; }

 private:
  AttentionShape shape_;
  std::vector<float> q_, k_, v_, out_;
};

}  // namespace baton
