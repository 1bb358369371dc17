// Other GPU clients during baton's busy time (gpu_clients.h), against figures worked out
// by hand in the comments: time-weighted means over the polled busy time.
#include "baton/analysis/gpu_clients.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

GpuProcessShare own(std::int64_t pid, double sm) {
  return {.pid = pid, .process = "baton", .own = true, .sm_percent = sm, .mem_percent = 0.0};
}
GpuProcessShare other(std::int64_t pid, std::string name, double sm) {
  return {
      .pid = pid, .process = std::move(name), .own = false, .sm_percent = sm, .mem_percent = 0.0};
}

// Engines a [0, 100) and b [50, 150): busy [0, 150); the embedding engine's [150, 300) is
// not LLM work. Polls of run 1:
//   [0, 60)    baton 20; omlx (200) 90 and an unnamed pid 300 30: other 120, capped at 100
//   [60, 120)  baton 50; omlx 5: other 5
//   [120, 200) nothing
// Over the 150 polled busy seconds:
//   other mean (60*100 + 60*5 + 30*0) / 150 = 42; max 100; at least 10 %: 60/150 = 0.4
//   baton mean (60*20 + 60*50) / 150 = 28
//   omlx (60*90 + 60*5) / 150 = 38; pid 300 60*30 / 150 = 12
ExposureInput example() {
  ExposureInput input;
  input.intervals = {
      {"a", 0, 100, 10, "decode"}, {"b", 50, 150, 10, "decode"}, {"e", 150, 300, 10, "embed"}};
  input.gpu_polls = {{1, 0, 60, true, {own(100, 20), other(200, "omlx", 90), other(300, "", 30)}},
                     {1, 60, 120, true, {own(100, 50), other(200, "omlx", 5)}},
                     {1, 120, 200, true, {}}};
  return input;
}

TEST(GpuClients, TimeWeightedOverThePolledBusyTime) {
  const std::optional<GpuClients> g = measure_gpu_clients(example(), 10.0);
  ASSERT_TRUE(g.has_value());
  EXPECT_DOUBLE_EQ(g->busy_hours, 150.0 / 3600.0);
  EXPECT_DOUBLE_EQ(g->sampled_busy_hours, 150.0 / 3600.0);
  EXPECT_DOUBLE_EQ(g->other_mean_sm, 42.0);
  EXPECT_DOUBLE_EQ(g->other_max_sm, 100.0);
  EXPECT_DOUBLE_EQ(g->other_busy_share, 0.4);
  EXPECT_DOUBLE_EQ(g->baton_mean_sm, 28.0);
  EXPECT_FALSE(g->unresolved);
  ASSERT_EQ(g->top_others.size(), 2u);
  EXPECT_EQ(g->top_others[0].pid, 200);
  EXPECT_EQ(g->top_others[0].process, "omlx");
  EXPECT_DOUBLE_EQ(g->top_others[0].mean_sm_percent, 38.0);
  EXPECT_EQ(g->top_others[1].pid, 300);
  EXPECT_EQ(g->top_others[1].process, "");
  EXPECT_DOUBLE_EQ(g->top_others[1].mean_sm_percent, 12.0);
}

TEST(GpuClients, TheThresholdDecidesBusy) {
  // At 5 % the second poll counts too: (60 + 60) / 150.
  EXPECT_DOUBLE_EQ(measure_gpu_clients(example(), 5.0)->other_busy_share, 0.8);
  EXPECT_DOUBLE_EQ(measure_gpu_clients(example(), 100.0)->other_busy_share, 0.4);
}

TEST(GpuClients, NoPollIsUnknownAndBusyTimeOutsidePollsIsNotSampled) {
  ExposureInput input = example();
  input.gpu_polls.clear();
  EXPECT_FALSE(measure_gpu_clients(input).has_value());
  input.gpu_polls = {{1, 500, 600, true, {other(200, "omlx", 90)}}};
  const std::optional<GpuClients> g = measure_gpu_clients(input);
  ASSERT_TRUE(g.has_value());
  EXPECT_DOUBLE_EQ(g->busy_hours, 150.0 / 3600.0);
  EXPECT_EQ(g->sampled_busy_hours, 0.0);
  EXPECT_EQ(g->other_mean_sm, 0.0);
  EXPECT_TRUE(g->top_others.empty());
}

// Two baton processes on one GPU see each other: run 2's own pid 500 in run 1's poll is
// baton while run 2 ran, and another program's once it had ended ([200, 300): the pid
// taken again). Busy [0, 100) and [200, 300): other mean (100*0 + 100*40) / 200 = 20.
TEST(GpuClients, AnotherBatonRunIsNotAnotherClient) {
  ExposureInput input;
  input.intervals = {{"a", 0, 100, 10, "decode"}, {"a", 200, 300, 10, "decode"}};
  input.gpu_polls = {{1, 0, 100, true, {own(100, 30), other(500, "baton", 40)}},
                     {2, 10, 90, true, {own(500, 40), other(100, "baton", 30)}},
                     {1, 200, 300, true, {own(100, 30), other(500, "other", 40)}}};
  const std::optional<GpuClients> g = measure_gpu_clients(input, 10.0);
  ASSERT_TRUE(g.has_value());
  EXPECT_DOUBLE_EQ(g->sampled_busy_hours, 200.0 / 3600.0);
  EXPECT_DOUBLE_EQ(g->other_mean_sm, 20.0);
  EXPECT_DOUBLE_EQ(g->other_busy_share, 0.5);
  // Baton: 70 over [0, 100) (either run's view), 30 over [200, 300).
  EXPECT_DOUBLE_EQ(g->baton_mean_sm, 50.0);
  ASSERT_EQ(g->top_others.size(), 1u);
  EXPECT_EQ(g->top_others[0].process, "other");
}

// Polls of two runs overlap: the one with the more other use counts. P [0, 100) other 20,
// Q [50, 150) other 80, busy [0, 150): (50*20 + 100*80) / 150 = 60.
TEST(GpuClients, OverlappingPollsCountTheBusierView) {
  ExposureInput input;
  input.intervals = {{"a", 0, 150, 10, "decode"}};
  input.gpu_polls = {{1, 0, 100, true, {other(7, "x", 20)}},
                     {2, 50, 150, true, {other(8, "y", 80)}}};
  const std::vector<GpuUsePiece> pieces = gpu_use_pieces(input.gpu_polls);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].start, 0.0);
  EXPECT_EQ(pieces[0].end, 50.0);
  EXPECT_EQ(pieces[0].poll, 0u);
  EXPECT_EQ(pieces[1].start, 50.0);
  EXPECT_EQ(pieces[1].end, 150.0);
  EXPECT_EQ(pieces[1].poll, 1u);
  EXPECT_DOUBLE_EQ(measure_gpu_clients(input)->other_mean_sm, 60.0);
}

// Inside a PID namespace of its own baton cannot tell its pid: 60 + 50 is 110, capped at
// 100, all of it unresolved, none of it "other".
TEST(GpuClients, PidsOfAnotherNamespaceAreUnresolved) {
  ExposureInput input;
  input.intervals = {{"a", 0, 50, 10, "decode"}};
  input.gpu_polls = {{1, 0, 100, false, {{7, "", false, 60, 0}, {8, "", false, 50, 0}}}};
  const std::optional<GpuClients> g = measure_gpu_clients(input);
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->unresolved);
  EXPECT_DOUBLE_EQ(g->unresolved_mean_sm, 100.0);
  EXPECT_DOUBLE_EQ(g->unresolved_max_sm, 100.0);
  EXPECT_DOUBLE_EQ(g->unresolved_busy_share, 1.0);
  EXPECT_EQ(g->other_mean_sm, 0.0);
  EXPECT_EQ(other_client_state(gpu_use_pieces(input.gpu_polls)[0], 10.0), "unresolved");
}

TEST(GpuClients, StatesOfPieces) {
  const std::vector<GpuUsePiece> pieces = gpu_use_pieces(example().gpu_polls);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(other_client_state(pieces[0], 10.0), "busy");
  EXPECT_EQ(other_client_state(pieces[1], 10.0), "idle");
  EXPECT_EQ(other_client_state(pieces[1], 5.0), "busy");
  EXPECT_EQ(other_client_state(pieces[2], 10.0), "idle");
}

}  // namespace
}  // namespace baton
