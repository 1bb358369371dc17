// SyntheticWorkload: real CPU work with the shape of a transformer's bursts, for
// reproductions. A burst is `layers` matrix products [rows x k] * [k x n], one per layer,
// each layer with its own weights (f32, BLAS sgemm), split into `ops_per_layer` ops over
// column blocks (as a real layer is several GEMMs: q/k/v, o, gate/up, down):
//  - decode: rows = 8 (a small batch), memory-bound: every step streams all weights;
//  - prefill: rows = chunk tokens, compute-bound;
//  - embed: a short call on a small model.
// Thread-safety: one engine thread encodes; the stream's executor runs the ops. Buffers
// are reused across bursts, so the caller must synchronize before the next burst.
#pragma once

#include <cstddef>
#include <vector>

#include "baton/engine/synthetic/workload.h"

namespace baton {

// Chosen so that one prefill layer takes ~1.5x a whole decode step on the 2-core
// development machine, as an 8K-token chunk does on the H200 (docs/benchmarks.md).
inline constexpr std::size_t kPrefillDefaultTokens = 1408;

struct SyntheticShape {
  BurstKind kind = BurstKind::decode;
  std::size_t layers = 32;
  std::size_t rows = 8;           // tokens in the burst
  std::size_t k = 1024;           // weight rows
  std::size_t n = 512;            // weight columns
  std::size_t ops_per_layer = 4;  // must divide n

  std::size_t weight_bytes() const { return layers * k * n * sizeof(float); }
  double flops_per_burst() const { return 2.0 * double(layers) * double(rows * k * n); }

  // Defaults that keep the H200 lab's proportions on a CPU stream (see docs/benchmarks.md).
  static SyntheticShape decode_default();
  static SyntheticShape prefill_default(std::size_t tokens = 0);
  static SyntheticShape embed_default();
};

class SyntheticWorkload final : public Workload {
 public:
  explicit SyntheticWorkload(SyntheticShape shape);
  BurstKind kind() const override { return shape_.kind; }
  std::size_t context_tokens() const override { return shape_.rows; }
  const SyntheticShape& shape() const { return shape_; }
  void encode_burst(Stream& stream, const std::function<void(Boundary)>& yield_point) override;

 private:
  SyntheticShape shape_;
  std::vector<float> weights_;  // layers * k * n
  std::vector<float> input_;    // rows * k
  std::vector<float> output_;   // rows * n
};

}  // namespace baton
