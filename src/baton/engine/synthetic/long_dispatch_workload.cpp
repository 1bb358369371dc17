#include "baton/engine/synthetic/long_dispatch_workload.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace baton {
namespace {

void check(const AttentionShape& s) {
  if (s.layers == 0 || s.heads == 0 || s.keys == 0 || s.head_dim == 0 || s.head_dim % 8 != 0) {
    throw std::invalid_argument(
        "[LongDispatchWorkload] layers, heads and keys must be positive and head_dim a "
        "multiple of 8");
  }
}

std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& x : values) x = dist(rng);
  return values;
}

}  // namespace

AttentionShape AttentionShape::cpu_default(std::size_t keys) {
  return {.layers = 4, .heads = 4, .keys = keys == 0 ? 32768 : keys, .head_dim = 256};
}

AttentionShape AttentionShape::cuda_default(std::size_t keys) {
  return {.layers = 4, .heads = 32, .keys = keys == 0 ? 229376 : keys, .head_dim = 256};
}

void attend_one_pass(const AttentionShape& s, const float* q, const float* k, const float* v,
                     float* out) {
  const std::size_t d = s.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> acc(d);
  for (std::size_t h = 0; h < s.heads; ++h) {
    const float* qh = q + h * d;
    float running_max = -INFINITY;
    float sum = 0.0f;
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (std::size_t j = 0; j < s.keys; ++j) {
      const float* kj = k + (h * s.keys + j) * d;
      const float* vj = v + (h * s.keys + j) * d;
      float score = 0.0f;
      for (std::size_t i = 0; i < d; ++i) score += qh[i] * kj[i];
      score *= scale;
      if (score > running_max) {
        const float rescale = std::exp(running_max - score);
        sum *= rescale;
        for (float& a : acc) a *= rescale;
        running_max = score;
      }
      const float weight = std::exp(score - running_max);
      sum += weight;
      for (std::size_t i = 0; i < d; ++i) acc[i] += weight * vj[i];
    }
    for (std::size_t i = 0; i < d; ++i) out[h * d + i] = acc[i] / sum;
  }
}

LongDispatchWorkload::LongDispatchWorkload(AttentionShape shape)
    : shape_((check(shape), shape)),
      q_(random_values(shape.heads * shape.head_dim, 1)),
      k_(random_values(shape.cache_values(), 2)),
      v_(random_values(shape.cache_values(), 3)),
      out_(shape.heads * shape.head_dim) {}

void LongDispatchWorkload::encode_burst(Stream& stream,
                                        const std::function<void(Boundary)>& yield_point) {
  const std::size_t bytes = 2 * shape_.cache_values() * sizeof(float);
  for (std::size_t layer = 0; layer < shape_.layers; ++layer) {
    stream.encode(
        Op{.run = [this] { attend_one_pass(shape_, q_.data(), k_.data(), v_.data(), out_.data()); },
           .bytes = bytes});
    if (layer + 1 < shape_.layers) yield_point(Boundary::layer);
  }
}

}  // namespace baton
