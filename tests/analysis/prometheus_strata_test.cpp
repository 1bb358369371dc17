// A fleet's strata from Prometheus's raw samples: increases without extrapolation, a
// restart inside the window, a process started inside it, and the labels read back.
#include "baton/analysis/prometheus_strata.h"

#include <gtest/gtest.h>

#include "baton/analysis/prometheus_matrix.h"

namespace baton {
namespace {

using nlohmann::json;

json samples(std::initializer_list<std::pair<double, const char*>> points) {
  json values = json::array();
  for (const auto& [t, v] : points) values.push_back({t, v});
  return values;
}

TEST(PrometheusStrata, IncreasesCountRestartsAndNotTheBaseline) {
  EXPECT_EQ(counter_increase(samples({{0, "5"}, {1, "7"}, {2, "7"}, {3, "9"}}), false), 4.0);
  // A restart at 3: the counter began again at 0 and reached 2.
  EXPECT_EQ(counter_increase(samples({{0, "5"}, {1, "7"}, {3, "2"}, {4, "3"}}), false), 5.0);
  // A process that started inside the window: its first value counts from 0.
  EXPECT_EQ(counter_increase(samples({{0, "1"}, {1, "3"}}), true), 3.0);
  EXPECT_EQ(counter_increase(json::array(), true), 0.0);
}

json matrix(json result) { return {{"resultType", "matrix"}, {"result", std::move(result)}}; }

json series(json labels, json values) { return {{"metric", labels}, {"values", values}}; }

TEST(PrometheusStrata, TwoInstancesOneStartedInsideTheWindow) {
  const json state = {{"busy", "2"},
                      {"prefill_in_flight", "true"},
                      {"long_context", "false"},
                      {"policy", "serialize/op"},
                      {"backend", "cpu"}};
  json old_host = state, new_host = state;
  old_host["instance"] = "h1:8000";
  new_host["instance"] = "h2:8000";
  json idle = old_host;
  idle["busy"] = "0";
  PrometheusSeries data;
  data.window_start = 1000;
  data.exposure = matrix({series(old_host, samples({{1000, "3600"}, {2000, "10800"}})),
                          series(new_host, samples({{1500, "1800"}, {2000, "3600"}}))});
  json hang_old = old_host, hang_new = new_host, idle_hang = idle, slow = old_host;
  for (json* j : {&hang_old, &hang_new, &idle_hang}) (*j)["class"] = "hang";
  slow["class"] = "slowdown";
  data.faults = matrix({series(hang_old, samples({{1000, "2"}, {2000, "5"}})),
                        series(hang_new, samples({{1500, "1"}, {2000, "1"}})),
                        series(idle_hang, samples({{1000, "0"}, {2000, "1"}})),
                        series(slow, samples({{1000, "0"}, {2000, "9"}}))});
  data.starts = matrix({series({{"instance", "h1:8000"}}, samples({{1000, "10"}, {2000, "10"}})),
                        series({{"instance", "h2:8000"}}, samples({{1500, "1400"}}))});
  const Strata strata = strata_from_prometheus(data, {"hang", "timeout"});
  ASSERT_EQ(strata.strata.size(), 2u);
  EXPECT_EQ(strata.strata[0].state.host, "h1:8000");
  EXPECT_EQ(strata.strata[0].state.busy, 2);
  EXPECT_TRUE(strata.strata[0].state.prefill_in_flight);
  EXPECT_EQ(strata.strata[0].state.policy, "serialize/op");
  EXPECT_DOUBLE_EQ(strata.strata[0].hours, 2.0);  // 10800 - 3600 s
  EXPECT_EQ(strata.strata[0].hangs, 3);
  EXPECT_DOUBLE_EQ(strata.strata[1].hours, 1.0);  // started at 1400: 3600 s from 0
  EXPECT_EQ(strata.strata[1].hangs, 1);
  EXPECT_EQ(strata.hangs_while_idle, 1);
}

TEST(PrometheusStrata, RefusesWhatIsNotAMatrixOfItsCounters) {
  PrometheusSeries data;
  data.exposure = {{"resultType", "vector"}, {"result", json::array()}};
  data.faults = matrix(json::array());
  data.starts = matrix(json::array());
  EXPECT_THROW(strata_from_prometheus(data, {"hang"}), std::invalid_argument);
  data.exposure = matrix({series({{"busy", "7"}}, samples({{0, "1"}}))});
  EXPECT_THROW(strata_from_prometheus(data, {"hang"}), std::invalid_argument);
}

// Two pieces of one range: the sample at their common edge kept once, each series'
// samples in time order, a series only one piece has kept.
TEST(PrometheusMatrix, PiecesMergeBySeriesAndTime) {
  MatrixMerger merged("exposure");
  merged.add(matrix({series({{"instance", "h1"}}, samples({{100, "5"}, {115, "6"}})),
                     series({{"instance", "h2"}}, samples({{115, "1"}}))}));
  merged.add(matrix({series({{"instance", "h1"}}, samples({{85, "4"}, {100, "5"}}))}));
  const json result = merged.result();
  EXPECT_EQ(result["resultType"], "matrix");
  ASSERT_EQ(result["result"].size(), 2u);
  EXPECT_EQ(result["result"][0]["metric"]["instance"], "h1");
  EXPECT_EQ(result["result"][0]["values"], samples({{85, "4"}, {100, "5"}, {115, "6"}}));
  EXPECT_EQ(result["result"][1]["values"], samples({{115, "1"}}));
}

// What is wrong in a sample, said with its series; never a library's message (stod,
// nlohmann's type_error).
TEST(PrometheusMatrix, BadSamplesAreNamed) {
  const json s = series({{"busy", "1"}}, json::array());
  const auto message = [&](const json& sample) {
    try {
      prometheus_sample(sample, s, "exposure");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message(json::array({1.5, "x"})),
            "Prometheus: the exposure series {busy=\"1\"} has a sample [1.5,\"x\"]: its value is "
            "not a finite number");
  EXPECT_NE(message(json::array({1, 2})).find("its value is not a string"), std::string::npos);
  EXPECT_NE(message(json::array({"1", "2"})).find("its time is not a number"), std::string::npos);
  EXPECT_NE(message(json::array({1})).find("not [time, \"value\"]"), std::string::npos);
  EXPECT_NE(message(json::array({1, "NaN"})).find("not a finite number"), std::string::npos);
  EXPECT_EQ(prometheus_sample(json::array({1.5, "2e3"}), s, "exposure").value, 2000.0);
  PrometheusSeries data;
  const json labels = {{"busy", "1"}, {"prefill_in_flight", "false"}, {"long_context", "false"}};
  data.exposure = matrix({series(labels, samples({{0, "1"}, {1, "lots"}}))});
  data.faults = matrix(json::array());
  data.starts = matrix(json::array());
  try {
    strata_from_prometheus(data, {"hang"});
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has a sample [1.0,\"lots\"]"), std::string::npos)
        << e.what();
  }
  data.exposure = {{"resultType", 7}, {"result", json::array()}};
  EXPECT_THROW(strata_from_prometheus(data, {"hang"}), std::invalid_argument);
}

}  // namespace
}  // namespace baton
