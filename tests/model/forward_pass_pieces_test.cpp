// ForwardPass::run_rows: a layer run in pieces of rows (what the engine does under
// serialize/op while another engine waits) computes what the whole layer computes, for a
// prefill chunk alone and for a step that mixes a chunk with decode rows. Within 1e-4, not
// bit for bit: OpenBLAS's sgemm rounds a row differently for different row counts (between
// 120 rows at once and pieces of 16-64, 10-45 % of the products' elements differ in the
// last bits; the logits here by up to 1.2e-5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "baton/model/cpu/forward_pass.h"
#include "test_data.h"

namespace baton {
namespace {

using testing::kModels;

std::vector<TokenId> piece_tokens(int count, int salt) {
  std::vector<TokenId> t;
  for (int i = 0; i < count; ++i) t.push_back((i * 29 + salt * 13) % 250 + 3);
  return t;
}

// Two sequences: `history` tokens already in the cache, then `fresh` new ones each.
struct Batch {
  Batch(const LlamaModel& model, const std::vector<int>& history, const std::vector<int>& fresh)
      : pool(model.config(), 16, KvBlockPool::block_bytes(model.config(), 16) * 64),
        memory(model.config(), pool),
        sequences(history.size()) {
    for (std::size_t s = 0; s < history.size(); ++s) {
      for (int b = 0; b < 16; ++b) sequences[s].blocks.push_back(*pool.allocate());
      const std::vector<TokenId> all = piece_tokens(history[s] + fresh[s], static_cast<int>(s));
      if (history[s] > 0) {
        ForwardPass warm(model, memory, {{{all.begin(), all.begin() + history[s]}, &sequences[s]}},
                         LogitsFor::last_token);
        for (int i = 0; i < warm.layers(); ++i) warm.run_layer(i);
        (void)warm.finish();
      }
      steps.push_back({{all.begin() + history[s], all.end()}, &sequences[s]});
    }
  }
  KvBlockPool pool;
  KvMemory memory;
  std::vector<KvSequence> sequences;
  std::vector<SequenceStep> steps;
};

// The every-token logits of the batch's step, each layer cut at `cuts` (row offsets).
std::vector<float> logits_in_pieces(const LlamaModel& model, const std::vector<int>& history,
                                    const std::vector<int>& fresh, const std::vector<int>& cuts) {
  Batch batch(model, history, fresh);
  ForwardPass pass(model, batch.memory, batch.steps, LogitsFor::every_token);
  for (int layer = 0; layer < pass.layers(); ++layer) {
    int first = 0;
    for (const int cut : cuts) {
      pass.run_rows(layer, first, cut - first);
      first = cut;
    }
    pass.run_rows(layer, first, pass.rows() - first);
  }
  return pass.finish();
}

void expect_same_logits(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  float largest = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i] - b[i]));
  EXPECT_LT(largest, 1e-4f) << "of " << a.size() << " logits";
}

TEST(ForwardPassPieces, AChunkInPiecesGivesTheWholeLayersLogits) {
  const LlamaModel model = LlamaModel::load(kModels / "qwen2");
  const std::vector<float> whole = logits_in_pieces(model, {40}, {120}, {});
  expect_same_logits(logits_in_pieces(model, {40}, {120}, {32, 64, 96}), whole);
  expect_same_logits(logits_in_pieces(model, {40}, {120}, {17, 100}), whole);
}

TEST(ForwardPassPieces, AMixedStepInPiecesGivesTheWholeLayersLogits) {
  const LlamaModel model = LlamaModel::load(kModels / "qwen3");
  // A decode row (sequence 0) and a 90-token chunk after 30 cached ones (sequence 1).
  const std::vector<float> whole = logits_in_pieces(model, {25, 30}, {1, 90}, {});
  expect_same_logits(logits_in_pieces(model, {25, 30}, {1, 90}, {33, 70}), whole);
  // The piece boundary right after the decode row (a one-row piece: the direct kernel).
  expect_same_logits(logits_in_pieces(model, {25, 30}, {1, 90}, {1}), whole);
}

TEST(ForwardPassPieces, RowsOutsideTheStepAreRefused) {
  const LlamaModel model = LlamaModel::load(kModels / "qwen2");
  Batch batch(model, {0}, {20});
  ForwardPass pass(model, batch.memory, batch.steps, LogitsFor::last_token);
  EXPECT_THROW(pass.run_rows(0, 10, 11), std::out_of_range);
  EXPECT_THROW(pass.run_rows(0, -1, 5), std::out_of_range);
}

}  // namespace
}  // namespace baton
