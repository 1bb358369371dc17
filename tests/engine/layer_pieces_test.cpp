// LayerPieces: a layer's parts walked in order, each unit exactly once; a part over the
// budget cut alone, parts under it packed while their predicted times fit together, and
// a packed piece's time shared among its parts. The costs are a model of the 8B layer at
// 8K context on an H100 (per unit and fixed per piece), not a device's.
#include "baton/engine/llm/layer_pieces.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace baton {
namespace {

struct PartCost {
  double fixed_ms = 0.0;
  double per_unit_ms = 0.0;
};

// The parts of an 8B-shaped layer in the CUDA runner's wide cut.
std::vector<PartCut> eight_b_layer() {
  return {{.part = LayerPart::qkv, .units = 6144, .align = 128},
          {.part = LayerPart::attention, .units = 8, .align = 1},
          {.part = LayerPart::out_proj, .units = 4096, .align = 128},
          {.part = LayerPart::gate_up, .units = 28672, .align = 128},
          {.part = LayerPart::down, .units = 4096, .align = 128}};
}

// The costs of that layer's parts (about 2.4 ms in all, attention 0.17 ms a head).
const std::map<LayerPart, PartCost> kEightBCosts = {
    {LayerPart::qkv, {.fixed_ms = 0.02, .per_unit_ms = 0.2 / 6144}},
    {LayerPart::attention, {.fixed_ms = 0.02, .per_unit_ms = 0.17}},
    {LayerPart::out_proj, {.fixed_ms = 0.02, .per_unit_ms = 0.13 / 4096}},
    {LayerPart::gate_up, {.fixed_ms = 0.02, .per_unit_ms = 0.9 / 28672}},
    {LayerPart::down, {.fixed_ms = 0.02, .per_unit_ms = 0.45 / 4096}}};

struct LayerRun {
  int pieces = 0;
  double longest_ms = 0.0;
  double share = 0.0;  // layer_share summed over the layer's pieces
};

// One layer walked with `budget_ms`: checks that every unit of every part runs once, in
// order, and returns what its pieces cost under `costs`.
LayerRun walk_layer(PieceSizer& sizer, const std::vector<PartCut>& parts,
                    const std::map<LayerPart, PartCost>& costs, double budget_ms) {
  LayerPieces walk(sizer, parts, 8000, budget_ms);
  LayerRun run;
  std::size_t part = 0;
  int next_unit = 0;
  while (!walk.done()) {
    const std::vector<PieceSegment> piece = walk.next();
    EXPECT_FALSE(piece.empty());
    double ms = 0.0;
    for (const PieceSegment& s : piece) {
      if (next_unit == parts[part].units) {
        ++part;
        next_unit = 0;
      }
      EXPECT_EQ(s.part, part);
      EXPECT_EQ(s.kind, parts[part].part);
      EXPECT_EQ(s.first, next_unit);
      EXPECT_GT(s.count, 0);
      next_unit += s.count;
      EXPECT_LE(next_unit, parts[part].units);
      const PartCost& cost = costs.at(parts[s.part].part);
      ms += cost.fixed_ms + cost.per_unit_ms * s.count;
    }
    walk.record(piece, ms);
    ++run.pieces;
    run.longest_ms = std::max(run.longest_ms, ms);
    run.share += walk.layer_share(piece);
  }
  EXPECT_EQ(part + 1, parts.size());
  EXPECT_EQ(next_unit, parts.back().units);
  return run;
}

TEST(LayerPieces, EveryUnitRunsOnceAndPiecesLearnTheBudget) {
  PieceSizer sizer;
  LayerRun run;
  for (int layer = 0; layer < 12; ++layer)
    run = walk_layer(sizer, eight_b_layer(), kEightBCosts, 0.5);
  EXPECT_NEAR(run.share, 1.0, 1e-9);
  // Once learned, no piece is over the budget but one that cannot be cut below it, and the
  // layer is not cut finer than its cost asks: about 2.4 ms / 0.5 ms, plus the parts'
  // own edges.
  EXPECT_LE(run.longest_ms, 0.5);
  EXPECT_LE(run.pieces, 14);
  EXPECT_GE(run.pieces, 5);
}

TEST(LayerPieces, ALayerUnderTheBudgetBecomesOnePiece) {
  PieceSizer sizer;
  std::map<LayerPart, PartCost> small;
  for (const auto& [part, cost] : kEightBCosts) {
    small[part] = {.fixed_ms = 0.005, .per_unit_ms = cost.per_unit_ms / 100};
  }
  LayerRun run;
  for (int layer = 0; layer < 12; ++layer) run = walk_layer(sizer, eight_b_layer(), small, 0.5);
  EXPECT_EQ(run.pieces, 1);
  EXPECT_NEAR(run.share, 1.0, 1e-9);
}

TEST(LayerPieces, APartNeverMeasuredRunsAloneInItsFirstPiece) {
  PieceSizer sizer;
  const std::vector<PartCut> parts = {{.part = LayerPart::qkv, .units = 64, .align = 128},
                                      {.part = LayerPart::attention, .units = 1, .align = 1}};
  LayerPieces walk(sizer, parts, 100, 10.0);
  const std::vector<PieceSegment> first = walk.next();
  ASSERT_EQ(first.size(), 1u);  // qkv whole (64 < one alignment), attention not packed
  EXPECT_EQ(first[0].count, 64);
  walk.record(first, 0.1);
  EXPECT_EQ(walk.next().size(), 1u);
  EXPECT_TRUE(walk.done());
}

TEST(LayerPieces, APackedPieceSharesItsTimeByThePredictions) {
  PieceSizer sizer;
  const PieceShape qkv{.part = LayerPart::qkv, .align = 128, .context = 100};
  const PieceShape out{.part = LayerPart::out_proj, .align = 128, .context = 100};
  sizer.record(qkv, 64, 0.1);
  sizer.record(out, 64, 0.3);
  const std::vector<PartCut> parts = {{.part = LayerPart::qkv, .units = 64, .align = 128},
                                      {.part = LayerPart::out_proj, .units = 64, .align = 128}};
  LayerPieces walk(sizer, parts, 100, 1.0);
  const std::vector<PieceSegment> piece = walk.next();
  ASSERT_EQ(piece.size(), 2u);
  EXPECT_TRUE(walk.done());
  EXPECT_DOUBLE_EQ(walk.layer_share(piece), 1.0);
  walk.record(piece, 0.8);  // twice the predictions: each part's share doubles
  EXPECT_NEAR(*sizer.predict(qkv, 64), 0.1 + 0.3 * (0.2 - 0.1), 1e-12);
  EXPECT_NEAR(*sizer.predict(out, 64), 0.3 + 0.3 * (0.6 - 0.3), 1e-12);
}

TEST(LayerPieces, PartsWithoutUnitsAreSkipped) {
  PieceSizer sizer;
  LayerPieces empty(sizer, {{.part = LayerPart::rows, .units = 0, .align = 32}}, 100, 1.0);
  EXPECT_TRUE(empty.done());
  EXPECT_TRUE(empty.next().empty());
}

}  // namespace
}  // namespace baton
