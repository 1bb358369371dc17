// flash_attention (both kernels) against attention computed in double on the host: every
// head size it takes, query groups of 1-4, lengths around the 64-key tiles, chunks that
// start mid-sequence and sit mid-step, a sliding window, keys split into ranges, and a
// piece of the KV heads (the other heads' output left alone). Tolerance: 8e-3 absolute on
// outputs of magnitude up to 1 (the probabilities are rounded to bf16 before they weigh
// the values, 2^-9 relative each, and the output to bf16, 2^-9; a wrong mask or fragment
// is off by 0.05 or more here).
// Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include "baton/model/cuda/flash_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/cuda/device_data.h"

namespace baton::cuda::kernels {
namespace flash_attention_test {
namespace {

using test_data::download;
using test_data::Matrix;
using test_data::random_matrix;
using test_data::upload;
using test_data::widen;

std::string kernel_name(FlashKernel kernel) {
  switch (kernel) {
    case FlashKernel::mma:
      return "mma";
    case FlashKernel::mma8:
      return "mma8";
    case FlashKernel::wmma:
      return "wmma";
  }
  return "?";
}

constexpr std::uint16_t kUntouched = 0x7fc1;  // a NaN: output the kernel must not write

struct Case {
  AttentionShape shape;
  int length = 0;  // keys: positions 0 .. length - 1
  int count = 0;   // the chunk's rows: the last `count` positions
  int splits = 1;
  int first_kv_head = 0;
  int kv_head_count = 0;  // 0: all
  FlashKernel kernel = FlashKernel::mma;

  std::string name() const {
    return "D " + std::to_string(shape.head_dim) + " heads " + std::to_string(shape.heads) + "/" +
           std::to_string(shape.kv_heads) + " window " + std::to_string(shape.window) + " length " +
           std::to_string(length) + " count " + std::to_string(count) + " splits " +
           std::to_string(splits) + " kv heads from " + std::to_string(first_kv_head) + " " +
           kernel_name(kernel);
  }
};

// The step has 2 rows before the chunk and 3 after it, so that first_row and rows matter.
constexpr int kRowsBefore = 2;
constexpr int kRowsAfter = 3;

struct Inputs {
  Matrix q;       // [kv heads][rows][group][D]
  Matrix keys;    // [length][kv heads][D]
  Matrix values;  // as keys
};

Inputs random_inputs(const Case& c) {
  const AttentionShape& s = c.shape;
  const std::size_t rows = kRowsBefore + c.count + kRowsAfter;
  // Queries 4x larger than keys: scores spread over a few units, so that the softmax
  // weighs some keys far above others and a wrong mask shows.
  return {
      .q = random_matrix(rows * s.heads * s.head_dim, 11, 4.0f),
      .keys = random_matrix(static_cast<std::size_t>(c.length) * s.kv_heads * s.head_dim, 12),
      .values = random_matrix(static_cast<std::size_t>(c.length) * s.kv_heads * s.head_dim, 13)};
}

// Output of query head `head` at chunk row r, in double.
std::vector<double> reference(const Case& c, const Inputs& in, int r, int head) {
  const AttentionShape& s = c.shape;
  const int d = s.head_dim;
  const int group = s.heads / s.kv_heads;
  const int kv = head / group;
  const int rows = kRowsBefore + c.count + kRowsAfter;
  const int position = c.length - c.count + r;
  const int first = s.window > 0 ? std::max(0, position - s.window + 1) : 0;
  const float* q = &in.q.values[((static_cast<std::size_t>(kv) * rows + kRowsBefore + r) * group +
                                 head % group) *
                                d];
  std::vector<double> scores;
  double best = -1e300;
  for (int j = first; j <= position; ++j) {
    const float* k = &in.keys.values[(static_cast<std::size_t>(j) * s.kv_heads + kv) * d];
    double dot = 0.0;
    for (int x = 0; x < d; ++x) dot += static_cast<double>(q[x]) * k[x];
    scores.push_back(dot / std::sqrt(static_cast<double>(d)));
    best = std::max(best, scores.back());
  }
  std::vector<double> out(d, 0.0);
  double total = 0.0;
  for (int j = first; j <= position; ++j) {
    const double p = std::exp(scores[j - first] - best);
    total += p;
    const float* v = &in.values.values[(static_cast<std::size_t>(j) * s.kv_heads + kv) * d];
    for (int x = 0; x < d; ++x) out[x] += p * v[x];
  }
  for (double& x : out) x /= total;
  return out;
}

// Runs the kernel; returns the step's whole output [rows x heads x D] as bf16 bits.
std::vector<std::uint16_t> run(const Case& c, const Inputs& in) {
  const AttentionShape& s = c.shape;
  const std::size_t rows = kRowsBefore + c.count + kRowsAfter;
  const auto q = upload(in.q.bits.data(), in.q.bits.size() * 2);
  const auto keys = upload(in.keys.bits.data(), in.keys.bits.size() * 2);
  const auto values = upload(in.values.bits.data(), in.values.bits.size() * 2);
  const std::vector<std::uint16_t> untouched(rows * s.heads * s.head_dim, kUntouched);
  const auto out = upload(untouched.data(), untouched.size() * 2);
  const std::size_t partial_floats =
      static_cast<std::size_t>(c.splits) * s.heads * c.count * (s.head_dim + 2);
  DeviceBuffer partial(partial_floats * sizeof(float));
  const FlashChunk chunk{.q = static_cast<const bf16*>(q->get()),
                         .keys = static_cast<const bf16*>(keys->get()),
                         .values = static_cast<const bf16*>(values->get()),
                         .rows = static_cast<int>(rows),
                         .first_row = kRowsBefore,
                         .count = c.count,
                         .start = c.length - c.count,
                         .out = static_cast<bf16*>(out->get()),
                         .splits = c.splits,
                         .partial = static_cast<float*>(partial.get()),
                         .first_kv_head = c.first_kv_head,
                         .kv_head_count = c.kv_head_count,
                         .kernel = c.kernel};
  BATON_CUDA_CHECK(flash_attention(chunk, s, nullptr));
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  return download<std::uint16_t>(*out, untouched.size());
}

void expect_matches_reference(const Case& c) {
  SCOPED_TRACE(c.name());
  const AttentionShape& s = c.shape;
  const Inputs in = random_inputs(c);
  const std::vector<std::uint16_t> out = run(c, in);
  const int group = s.heads / s.kv_heads;
  const int kv_end = c.kv_head_count > 0 ? c.first_kv_head + c.kv_head_count : s.kv_heads;
  const int rows = kRowsBefore + c.count + kRowsAfter;
  for (int row = 0; row < rows; ++row) {
    for (int head = 0; head < s.heads; ++head) {
      const std::size_t at = (static_cast<std::size_t>(row) * s.heads + head) * s.head_dim;
      const int r = row - kRowsBefore;
      const bool written =
          r >= 0 && r < c.count && head / group >= c.first_kv_head && head / group < kv_end;
      if (!written) {
        for (int x = 0; x < s.head_dim; ++x)
          ASSERT_EQ(out[at + x], kUntouched) << row << " " << head;
        continue;
      }
      const std::vector<double> expected = reference(c, in, r, head);
      for (int x = 0; x < s.head_dim; ++x) {
        ASSERT_NEAR(widen(out[at + x]), expected[x], 8e-3)
            << "row " << r << " head " << head << " column " << x;
      }
    }
  }
}

class FlashAttention : public ::testing::TestWithParam<FlashKernel> {};

TEST_P(FlashAttention, MatchesADoubleReferenceAtEveryHeadSizeAndLengthsAroundTiles) {
  SKIP_WITHOUT_GPU();
  for (const int d : {16, 32, 64, 128, 256}) {
    for (const int length : {1, 63, 64, 65, 200}) {
      for (const int count : {1, 17, length}) {
        if (count > length) continue;
        expect_matches_reference({.shape = {.heads = 4, .kv_heads = 1, .head_dim = d},
                                  .length = length,
                                  .count = count,
                                  .kernel = GetParam()});
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(FlashAttention, GroupsOfQueryHeadsAndAWindow) {
  SKIP_WITHOUT_GPU();
  for (const int kv_heads : {1, 2, 4}) {
    for (const int window : {0, 5, 70}) {
      expect_matches_reference(
          {.shape = {.heads = 4, .kv_heads = kv_heads, .head_dim = 128, .window = window},
           .length = 333,
           .count = 150,
           .kernel = GetParam()});
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(FlashAttention, KeysSplitIntoRangesMergeToTheSameAnswer) {
  SKIP_WITHOUT_GPU();
  for (const int d : {64, 128}) {
    for (const int splits : {2, 3, 7}) {
      expect_matches_reference({.shape = {.heads = 8, .kv_heads = 2, .head_dim = d},
                                .length = 777,
                                .count = 9,
                                .splits = splits,
                                .kernel = GetParam()});
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(FlashAttention, APieceOfTheKvHeadsWritesOnlyTheirOutput) {
  SKIP_WITHOUT_GPU();
  for (const int splits : {1, 3}) {
    expect_matches_reference({.shape = {.heads = 8, .kv_heads = 4, .head_dim = 128},
                              .length = 300,
                              .count = 40,
                              .splits = splits,
                              .first_kv_head = 1,
                              .kv_head_count = 2,
                              .kernel = GetParam()});
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, FlashAttention,
                         ::testing::Values(FlashKernel::mma, FlashKernel::wmma),
                         [](const auto& param_info) {
                           return std::string(param_info.param == FlashKernel::mma ? "mma"
                                                                                   : "wmma");
                         });

}  // namespace
}  // namespace flash_attention_test
}  // namespace baton::cuda::kernels
#endif  // BATON_HAVE_CUDA
