#include "baton/server/observe/metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "baton/server/observe/dual_engine_clock.h"

namespace baton {
namespace {

// Every sample line of the exposition, name{labels} -> value; checks that each family's
// samples follow its TYPE line, as the text format requires.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line, family;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const std::string key = line.substr(0, line.rfind(' '));
    EXPECT_EQ(key.rfind(family, 0), 0u) << line << " outside its family " << family;
    out[key] = std::stod(line.substr(line.rfind(' ') + 1));
  }
  return out;
}

TEST(ServerMetrics, CountsRequestsTokensAndLatencies) {
  ServerMetrics metrics({"a", "b"});
  metrics.http_request("a", "/v1/chat/completions", 200);
  metrics.http_request("a", "/v1/chat/completions", 200);
  metrics.http_request("", "/v1/models", 401);
  metrics.prompt_tokens("a", 12);
  metrics.first_token("a", 0.03);
  metrics.inter_token("a", 0.02);
  metrics.inter_token("a", 0.2);
  metrics.finished("a", "stop", 5, 0.4);
  metrics.finished("unknown", "stop", 5, 0.4);  // ignored: not a configured model
  HostGauges host;
  host.engines.push_back({"a", "chat", "recovering", 2, 3, 10, 40});
  host.overlap_s = 1.5;
  host.dual_engine_s = 2.5;
  host.faults[{"hang", "a"}] = 2;
  host.turn.clients.push_back({.name = "a",
                               .acquisitions = 7,
                               .handovers_in = 3,
                               .yields = 0,
                               .wait_s = 0.25,
                               .hold_s = 1.0,
                               .weight = 3.0,
                               .device_s = 0.75});
  host.turn.handovers = 4;
  const auto s = samples(metrics.render(host));
  EXPECT_EQ(s.at(R"(baton_http_requests_total{model_name="a",route="/v1/chat/completions",status="200"})"), 2);
  EXPECT_EQ(s.at(R"(baton_http_requests_total{model_name="",route="/v1/models",status="401"})"), 1);
  EXPECT_EQ(s.at(R"(baton_prompt_tokens_total{model_name="a"})"), 12);
  EXPECT_EQ(s.at(R"(baton_generation_tokens_total{model_name="a"})"), 5);
  EXPECT_EQ(s.at(R"(baton_generation_tokens_total{model_name="b"})"), 0);
  EXPECT_EQ(s.at(R"(baton_request_success_total{model_name="a",finished_reason="stop"})"), 1);
  // Cumulative buckets: 0.02 falls in le=0.025, 0.2 in le=0.2.
  EXPECT_EQ(s.at(R"(baton_inter_token_latency_seconds_bucket{model_name="a",le="0.01"})"), 0);
  EXPECT_EQ(s.at(R"(baton_inter_token_latency_seconds_bucket{model_name="a",le="0.025"})"), 1);
  EXPECT_EQ(s.at(R"(baton_inter_token_latency_seconds_bucket{model_name="a",le="0.2"})"), 2);
  EXPECT_EQ(s.at(R"(baton_inter_token_latency_seconds_bucket{model_name="a",le="+Inf"})"), 2);
  EXPECT_NEAR(s.at(R"(baton_inter_token_latency_seconds_sum{model_name="a"})"), 0.22, 1e-9);
  EXPECT_EQ(s.at(R"(baton_time_to_first_token_seconds_count{model_name="a"})"), 1);
  EXPECT_EQ(s.at(R"(baton_num_requests_waiting{model_name="a"})"), 2);
  EXPECT_EQ(s.at(R"(baton_num_requests_running{model_name="a"})"), 3);
  EXPECT_DOUBLE_EQ(s.at(R"(baton_kv_cache_usage_perc{model_name="a"})"), 0.25);
  EXPECT_EQ(s.at(R"(baton_engine_state{model_name="a",state="recovering"})"), 1);
  EXPECT_EQ(s.at(R"(baton_engine_state{model_name="a",state="ok"})"), 0);
  EXPECT_EQ(s.at(R"(baton_faults_total{kind="hang",engine="a"})"), 2);
  EXPECT_EQ(s.at(R"(baton_turn_waits_total{engine="a"})"), 3);
  EXPECT_EQ(s.at(R"(baton_turn_weight{engine="a"})"), 3.0);
  EXPECT_EQ(s.at(R"(baton_turn_wanted_seconds_total{engine="a"})"), 1.25);  // waited + held
  EXPECT_EQ(s.at(R"(baton_turn_device_seconds_total{engine="a"})"), 0.75);
  EXPECT_EQ(s.at("baton_turn_handovers_total"), 4);
  EXPECT_EQ(s.at("baton_overlap_seconds_total"), 1.5);
  EXPECT_EQ(s.at("baton_dual_engine_seconds_total"), 2.5);
}

TEST(ServerMetrics, ReportsEachModelsLifecycleAndTheBudget) {
  ServerMetrics metrics({"a", "b"});
  HostGauges host;
  host.models = {{"a", "ready", 3u << 20, 2u << 20, "auto"}, {"b", "loading", 1u << 20}};
  host.memory_budget_bytes = 8u << 20;
  const auto s = samples(metrics.render(host));
  // The KV budget of a loaded chat model only, with where it came from.
  EXPECT_EQ(s.at(R"(baton_model_kv_budget_bytes{model_name="a",source="auto"})"), 2u << 20);
  EXPECT_FALSE(s.contains(R"(baton_model_kv_budget_bytes{model_name="b",source=""})"));
  EXPECT_EQ(s.at(R"(baton_model_state{model_name="a",state="ready"})"), 1);
  EXPECT_EQ(s.at(R"(baton_model_state{model_name="a",state="unloaded"})"), 0);
  EXPECT_EQ(s.at(R"(baton_model_state{model_name="b",state="loading"})"), 1);
  EXPECT_EQ(s.at(R"(baton_model_memory_bytes{model_name="a"})"), 3u << 20);
  EXPECT_EQ(s.at("baton_memory_budget_bytes"), 8u << 20);
}

TEST(ServerMetrics, ReportsEachModelsHostAndDeviceMemory) {
  ServerMetrics metrics({"a"});
  HostGauges host;
  host.models = {{.model = "a",
                  .state = "ready",
                  .memory_bytes = 5u << 20,
                  .host_memory_bytes = 1u << 20,
                  .device_memory_bytes = 4u << 20}};
  const auto s = samples(metrics.render(host));
  EXPECT_EQ(s.at(R"(baton_model_host_memory_bytes{model_name="a"})"), 1u << 20);
  EXPECT_EQ(s.at(R"(baton_model_device_memory_bytes{model_name="a"})"), 4u << 20);
}

TEST(ServerMetrics, CountsANameNoModelHasAsNoModel) {
  ServerMetrics metrics({"a"});
  for (int i = 0; i < 100; ++i) {
    metrics.http_request("made-up-" + std::to_string(i), "/v1/chat/completions", 404);
  }
  metrics.http_request("a", "/v1/chat/completions", 503);
  const auto s = samples(metrics.render({}));
  int series = 0;
  for (const auto& [key, value] : s) series += key.rfind("baton_http_requests_total", 0) == 0;
  EXPECT_EQ(series, 2);
  EXPECT_EQ(s.at(R"(baton_http_requests_total{model_name="",route="/v1/chat/completions",status="404"})"), 100);
  EXPECT_EQ(s.at(R"(baton_http_requests_total{model_name="a",route="/v1/chat/completions",status="503"})"), 1);
}

TEST(ServerMetrics, EscapesLabelValues) {
  EXPECT_EQ(label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(DualEngineClock, CountsOnlyTimeWithTwoEnginesBusy) {
  DualEngineClock clock;
  const TimePoint t0{};
  const auto at = [&](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  clock.begin("a", at(0));
  clock.begin("a", at(1));  // a second request of the same engine changes nothing
  clock.begin("b", at(2));
  clock.end("a", at(3));    // a still has one
  clock.end("a", at(4));
  EXPECT_NEAR(clock.dual_seconds(at(10)), 2.0, 1e-9);
  clock.begin("c", at(5));  // b and c
  EXPECT_NEAR(clock.dual_seconds(at(6)), 3.0, 1e-9);  // an open stretch counts up to now
  clock.end("b", at(7));
  clock.end("c", at(8));
  clock.end("c", at(9));  // more ends than begins are ignored
  EXPECT_NEAR(clock.dual_seconds(at(20)), 4.0, 1e-9);
}

}  // namespace
}  // namespace baton
