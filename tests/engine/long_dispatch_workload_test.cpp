// The long dispatch of the `long-dispatch` scenario: the one-pass attention (CPU) and the
// long-attention kernel (CUDA, skipped without a GPU) against a float64 two-pass softmax.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "baton/engine/synthetic/long_dispatch_workload.h"
#include "baton/gpu/cpu/cpu_device.h"
#ifdef BATON_HAVE_CUDA
#include "baton/engine/synthetic/cuda/cuda_long_dispatch_workload.h"
#include "baton/gpu/cuda/cuda_device.h"
#include "baton/gpu/cuda/cuda_handles.h"
#endif

namespace baton {
namespace {

// Scores first, then the maximum, then the weighted sum: nothing shared with one pass.
std::vector<double> reference(const AttentionShape& s, const std::vector<float>& q,
                              const std::vector<float>& k, const std::vector<float>& v) {
  const std::size_t d = s.head_dim;
  std::vector<double> out(s.heads * d, 0.0);
  for (std::size_t h = 0; h < s.heads; ++h) {
    std::vector<double> scores(s.keys);
    for (std::size_t j = 0; j < s.keys; ++j) {
      double dot = 0.0;
      for (std::size_t i = 0; i < d; ++i) dot += double(q[h * d + i]) * k[(h * s.keys + j) * d + i];
      scores[j] = dot / std::sqrt(double(d));
    }
    const double max = *std::max_element(scores.begin(), scores.end());
    double sum = 0.0;
    for (double& x : scores) sum += (x = std::exp(x - max));
    for (std::size_t j = 0; j < s.keys; ++j) {
      for (std::size_t i = 0; i < d; ++i) {
        out[h * d + i] += scores[j] / sum * v[(h * s.keys + j) * d + i];
      }
    }
  }
  return out;
}

double worst_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(double(got[i]) - want[i]));
  }
  return worst;
}

std::vector<float> random_values(std::size_t n, unsigned seed, float spread) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-spread, spread);
  std::vector<float> x(n);
  for (float& value : x) value = dist(rng);
  return x;
}

TEST(LongDispatch, OnePassAttentionMatchesATwoPassFloat64Softmax) {
  // Scores with a spread of about 2 make the running maximum move, which the rescaling
  // must follow.
  const AttentionShape shape{.layers = 1, .heads = 3, .keys = 1000, .head_dim = 256};
  const auto q = random_values(shape.heads * shape.head_dim, 1, 2.0f);
  const auto k = random_values(shape.cache_values(), 2, 3.0f);
  const auto v = random_values(shape.cache_values(), 3, 1.0f);
  std::vector<float> out(shape.heads * shape.head_dim);
  attend_one_pass(shape, q.data(), k.data(), v.data(), out.data());
  // f32 accumulation over 1000 keys: errors of a few 1e-6 against values below 1.
  EXPECT_LT(worst_error(out, reference(shape, q, k, v)), 1e-4);
}

TEST(LongDispatch, EachLayerIsOneDispatchOnTheStream) {
  // One op per buffer: the buffers count the ops.
  cpu::CpuDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30});
  auto stream = device.create_stream("s");
  LongDispatchWorkload workload(
      AttentionShape{.layers = 3, .heads = 2, .keys = 512, .head_dim = 256});
  int yields = 0;
  workload.encode_burst(*stream, [&yields](Boundary b) {
    EXPECT_EQ(b, Boundary::layer);
    ++yields;
  });
  stream->synchronize();
  EXPECT_EQ(yields, 2);
  EXPECT_EQ(stream->stats().committed, 3u);
  EXPECT_EQ(stream->stats().completed, 3u);
  double norm = 0.0;
  for (float x : workload.output()) norm += std::abs(x);
  EXPECT_GT(norm, 0.0);
}

TEST(LongDispatch, ABadShapeIsRefusedWithTheReason) {
  EXPECT_THROW(
      LongDispatchWorkload(AttentionShape{.layers = 1, .heads = 0, .keys = 16, .head_dim = 256}),
      std::invalid_argument);
  EXPECT_THROW(
      LongDispatchWorkload(AttentionShape{.layers = 1, .heads = 1, .keys = 16, .head_dim = 12}),
      std::invalid_argument);
}

#ifdef BATON_HAVE_CUDA
TEST(LongDispatch, TheCudaKernelMatchesTheFloat64Reference) {
  if (!cuda::device_present()) GTEST_SKIP() << "no CUDA device visible";
  cuda::CudaDevice device;
  auto stream = device.create_stream("s");
  // More keys than warps x 1000, and a count no multiple of the 8 warps.
  const AttentionShape shape{.layers = 2, .heads = 5, .keys = 20011, .head_dim = 256};
  cuda::CudaLongDispatchWorkload workload(shape);
  workload.encode_burst(*stream, [](Boundary) {});
  stream->synchronize();
  const auto host = workload.copy_back();
  const std::vector<double> want = reference(shape, host.q, host.k, host.v);
  double scale = 0.0;
  for (double x : want) scale = std::max(scale, std::abs(x));
  EXPECT_GT(scale, 1e-3);
  // f32 on the device over exact bf16 inputs; __expf's relative error is about 2^-21.
  EXPECT_LT(worst_error(host.out, want), 1e-3 * scale + 1e-5);
}
#endif

}  // namespace
}  // namespace baton
