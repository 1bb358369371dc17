#include "baton/engine/synthetic/synthetic_workload.h"

#include <cblas.h>

#include <random>
#include <stdexcept>

namespace baton {

SyntheticShape SyntheticShape::decode_default() {
  return {
      .kind = BurstKind::decode, .layers = 32, .rows = 8, .k = 1024, .n = 512, .ops_per_layer = 4};
}

SyntheticShape SyntheticShape::prefill_default(std::size_t tokens) {
  return {.kind = BurstKind::prefill,
          .layers = 32,
          .rows = tokens == 0 ? kPrefillDefaultTokens : tokens,
          .k = 1024,
          .n = 512,
          .ops_per_layer = 4};
}

SyntheticShape SyntheticShape::embed_default() {
  return {
      .kind = BurstKind::embed, .layers = 4, .rows = 64, .k = 512, .n = 512, .ops_per_layer = 1};
}

SyntheticWorkload::SyntheticWorkload(SyntheticShape shape) : shape_(shape) {
  if (shape_.layers == 0 || shape_.rows == 0 || shape_.k == 0 || shape_.n == 0 ||
      shape_.ops_per_layer == 0 || shape_.n % shape_.ops_per_layer != 0) {
    throw std::invalid_argument(
        "[SyntheticWorkload] dimensions must be positive and ops_per_layer must divide n");
  }
  weights_.resize(shape_.layers * shape_.k * shape_.n);
  input_.resize(shape_.rows * shape_.k);
  output_.resize(shape_.rows * shape_.n);
  // Small random values: the work must touch real, non-constant memory.
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-0.01f, 0.01f);
  for (float& w : weights_) w = dist(rng);
  for (float& x : input_) x = dist(rng);
}

void SyntheticWorkload::encode_burst(Stream& stream,
                                     const std::function<void(Boundary)>& yield_point) {
  const int m = static_cast<int>(shape_.rows);
  const int k = static_cast<int>(shape_.k);
  const int n = static_cast<int>(shape_.n);
  const std::size_t block = shape_.n / shape_.ops_per_layer;  // output columns per op
  const std::size_t op_bytes =
      (shape_.k * block + shape_.rows * (shape_.k + block)) * sizeof(float);
  for (std::size_t layer = 0; layer < shape_.layers; ++layer) {
    for (std::size_t part = 0; part < shape_.ops_per_layer; ++part) {
      const float* w = weights_.data() + layer * shape_.k * shape_.n + part * block;
      const float* a = input_.data();
      float* c = output_.data() + part * block;
      const int cols = static_cast<int>(block);
      stream.encode(Op{.run =
                           [=] {
                             cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, cols, k,
                                         1.0f, a, k, w, n, 0.0f, c, n);
                           },
                       .bytes = op_bytes});
      if (part + 1 < shape_.ops_per_layer) yield_point(Boundary::op);
    }
    if (layer + 1 < shape_.layers) yield_point(Boundary::layer);
  }
}

}  // namespace baton
