// `baton analyze --by ... --prometheus URL` end to end against a stand-in Prometheus
// (fake_prometheus.h): a week read in pieces, a server that never answers, data that is
// not what the API promises, a selector that matches nothing, an IPv6 address.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/fake_prometheus.h"
#include "cli_util.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::FakePrometheus;
using testing::PrometheusQuery;
using testing::run_baton;

constexpr double kScrape = 15.0;  // seconds between samples

// The metric name and the window (seconds) of a query "name{labels}[window]".
std::pair<std::string, double> name_and_window(const std::string& query) {
  const std::size_t open = query.find('[');
  const std::string name = query.substr(0, std::min(query.find('{'), open));
  const std::string window = query.substr(open + 1, query.find(']') - open - 1);
  const double number = std::stod(window);
  const double seconds = window.ends_with("ms")  ? number / 1000.0
                         : window.ends_with("d") ? number * 86400.0
                                                 : number;
  return {name, seconds};
}

std::string success(const json& result) {
  return json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}
      .dump();
}

// One host scraped every 15 s: 12 exposure series (busy 1, 2, 3+ by prefill by long
// context), series i counting (i + 1) seconds of exposure a second, no fault, and a
// process that started long before. A week of it is about 12 MB of JSON.
std::string fleet_of_one(const PrometheusQuery& q) {
  const auto [name, window] = name_and_window(q.query);
  const double first = std::floor((q.time - window) / kScrape) * kScrape + kScrape;
  json result = json::array();
  const auto add_series = [&](json labels, double per_second) {
    std::string values = "[";
    for (double t = first; t <= q.time; t += kScrape) {
      values += (values.size() > 1 ? "," : "") +
                json::array({t, std::to_string(std::llround(t * per_second))}).dump();
    }
    result.push_back({{"metric", std::move(labels)}, {"values", json::parse(values + "]")}});
  };
  if (name == "baton_exposure_seconds_total") {
    int i = 0;
    for (const char* busy : {"1", "2", "3+"}) {
      for (const char* prefill : {"false", "true"}) {
        for (const char* long_context : {"false", "true"}) {
          add_series({{"instance", "h1:8000"},
                      {"busy", busy},
                      {"prefill_in_flight", prefill},
                      {"long_context", long_context},
                      {"policy", "concurrent"},
                      {"backend", "cpu"}},
                     ++i);
        }
      }
    }
  } else if (name == "baton_process_start_time_seconds") {
    add_series({{"instance", "h1:8000"}}, 0.0);
  }
  return success(result);
}

double total_hours(const json& report) {
  double hours = 0.0;
  for (const json& cell : report["cells"]) hours += cell["hours"].get<double>();
  return hours;
}

// The default --range 7d of one host's raw samples is over the 8 MiB response limit in
// one query: it is read a day at a time (each piece's range at most a day, the pieces
// tiling the week) and merged.
TEST(AnalyzePrometheusCli, AWeekIsReadInPiecesThatTileIt) {
  const FakePrometheus prometheus(fleet_of_one);
  const auto r = run_baton("analyze --by busy --json --prometheus " + prometheus.url(), 120);
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 2000);
  // 1 + 2 + ... + 12 = 78 exposure-seconds a second from the window's first sample to its
  // last, a scrape less than the week.
  EXPECT_NEAR(total_hours(json::parse(r.output)), 78.0 * (7 * 86400.0 - kScrape) / 3600.0, 1e-6);

  std::vector<std::pair<double, double>> pieces;  // (start, end] of the exposure queries
  for (const PrometheusQuery& q : prometheus.queries()) {
    const auto [name, window] = name_and_window(q.query);
    EXPECT_LE(window, 86400.0 + 1e-3) << q.query;
    if (name == "baton_exposure_seconds_total") pieces.emplace_back(q.time - window, q.time);
  }
  ASSERT_GE(pieces.size(), 7u);
  std::sort(pieces.begin(), pieces.end());
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    EXPECT_NEAR(pieces[i].first, pieces[i - 1].second, 1e-3) << "piece " << i;
  }
  EXPECT_NEAR(pieces.back().second - pieces.front().first, 7 * 86400.0, 1e-3);
}

// A server that accepts and never answers: analyze ends within its --timeout with a
// clear error and exit code 1 (try again), instead of waiting for ever.
TEST(AnalyzePrometheusCli, AServerThatNeverAnswersTimesOut) {
  const FakePrometheus silent([](const PrometheusQuery&) { return std::string(); },
                              FakePrometheus::Family::ipv4, false);
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_baton("analyze --by dual --prometheus " + silent.url() + " --timeout 1", 60);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Prometheus at " + silent.url() + ": no answer within 1"),
            std::string::npos)
      << r.output;
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(
      run_baton("analyze --by dual --prometheus " + silent.url() + " --timeout soon").exit_code, 2);
}

TEST(AnalyzePrometheusCli, ASelectorThatMatchesNothingHasNoBusyTime) {
  const FakePrometheus empty([](const PrometheusQuery&) { return success(json::array()); });
  const auto r = run_baton(
      "analyze --by dual --prometheus " + empty.url() + " --selector '{job=\"none\"}' --range 1h",
      60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no busy time in the window"), std::string::npos) << r.output;
}

// Samples that are not [time, "number"]: the message says which series and what is
// wrong, not "stod" or nlohmann's type_error.
TEST(AnalyzePrometheusCli, BadSamplesAreNamedNotLeakedAsLibraryErrors) {
  for (const json& sample : {json::array({1.0, 5}), json::array({1.0, "lots"}),
                             json::array({"one", "5"}), json::array({1.0})}) {
    const FakePrometheus bad([&](const PrometheusQuery&) {
      return success(json::array(
          {{{"metric", {{"busy", "1"}, {"instance", "h1"}}}, {"values", json::array({sample})}}}));
    });
    const auto r = run_baton("analyze --by dual --prometheus " + bad.url() + " --range 1h", 60);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("series {busy=\"1\",instance=\"h1\"} has a sample " + sample.dump()),
              std::string::npos)
        << r.output;
    for (const char* leak : {"stod", "type_error", "json.exception"}) {
      EXPECT_EQ(r.output.find(leak), std::string::npos) << r.output;
    }
  }
  const FakePrometheus odd([](const PrometheusQuery&) {
    return json{{"status", 1}, {"error", {{"why", "no"}}}}.dump();
  });
  const auto r = run_baton("analyze --by dual --prometheus " + odd.url() + " --range 1h", 60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("refused the query: (no message)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("type_error"), std::string::npos) << r.output;
}

TEST(AnalyzePrometheusCli, ABracketedIpv6HostIsReached) {
  std::unique_ptr<FakePrometheus> prometheus;
  try {
    prometheus = std::make_unique<FakePrometheus>(fleet_of_one, FakePrometheus::Family::ipv6);
  } catch (const std::runtime_error&) {
    GTEST_SKIP() << "no IPv6 loopback here";
  }
  ASSERT_EQ(prometheus->url().rfind("http://[::1]:", 0), 0u);
  const auto r =
      run_baton("analyze --by busy --json --range 1h --prometheus " + prometheus->url(), 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NEAR(total_hours(json::parse(r.output)), 78.0 * (3600.0 - kScrape) / 3600.0, 1e-6);
  const auto unbracketed = run_baton("analyze --by dual --prometheus http://::1:9090");
  EXPECT_EQ(unbracketed.exit_code, 2) << unbracketed.output;
  EXPECT_NE(unbracketed.output.find("in brackets"), std::string::npos) << unbracketed.output;
}

// --range, --selector and --timeout without --prometheus would be ignored: a usage error.
// A range of no time is one too.
TEST(AnalyzePrometheusCli, PrometheusFlagsWithoutPrometheusAndAnEmptyRangeExit2) {
  for (const char* flags : {" --range 7d", " --selector '{job=\"x\"}'", " --timeout 5s"}) {
    const auto r = run_baton(std::string("analyze --by dual --ledger /nonexistent.db") + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.output;
    EXPECT_NE(r.output.find("go with --prometheus"), std::string::npos) << r.output;
  }
  for (const char* range : {"0d", "0s", "00m"}) {
    const auto r = run_baton(std::string("analyze --by dual --prometheus http://127.0.0.1:9 "
                                         "--range ") +
                             range);
    EXPECT_EQ(r.exit_code, 2) << range << ": " << r.output;
    EXPECT_NE(r.output.find("--range"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace baton
