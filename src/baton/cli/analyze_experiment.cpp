#include "baton/cli/analyze_experiment.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "baton/analysis/sequential_rate_test.h"
#include "baton/common/exit_codes.h"
#include "baton/common/json_or_null.h"
#include "baton/ledger/experiment_reader.h"

namespace baton {
namespace {

using nlohmann::json;

struct Report {
  json plan;
  SequentialVerdict verdict;
  std::string recorded;  // the server's decision; empty: none recorded
  int blocks_ended = 0;
};

Report report_of(const RecordedExperiment& e) {
  Report r{.plan = json::parse(e.plan_json), .verdict = {}, .recorded = "", .blocks_ended = 0};
  const SequentialDesign design{.alpha = r.plan.at("alpha").get<double>(),
                                .planned_hours = r.plan.at("planned_hours").get<double>(),
                                .reduction = r.plan.at("reduction").get<double>(),
                                .cluster_window_s = r.plan.at("cluster_window_s").get<double>()};
  std::vector<ExperimentBlock> blocks;
  for (const RecordedBlock& b : e.blocks) {
    if (!b.exposure_hours) continue;  // a block that never ended was never tested
    ++r.blocks_ended;
    std::vector<double> times;
    for (const double t : b.hang_times) times.push_back(t - e.start);
    blocks.push_back({.arm = static_cast<int>(b.arm),
                      .hours = *b.exposure_hours,
                      .hang_times_s = std::move(times)});
  }
  r.verdict = sequential_verdict(blocks, design);
  if (!e.verdict_json.empty()) {
    r.recorded = json::parse(e.verdict_json).value("decision", "");
  }
  return r;
}

json to_json(const RecordedExperiment& e, const Report& r) {
  const SequentialVerdict& v = r.verdict;
  const json& arms = r.plan.at("arms");
  return {{"name", e.name},
          {"start", e.start},
          {"stop", json_or_null(e.stop)},
          {"blocks_ended", r.blocks_ended},
          {"arms",
           {{{"name", arms.at(0).at("name")},
             {"hours", v.hours_a},
             {"hangs", v.hangs_a},
             {"clusters", v.clusters_a}},
            {{"name", arms.at(1).at("name")},
             {"hours", v.hours_b},
             {"hangs", v.hangs_b},
             {"clusters", v.clusters_b}}}},
          {"ratio", json_or_null(v.ratio)},
          {"ratio_low", v.ratio_low},
          {"ratio_high", json_or_null(v.ratio_high)},
          {"p_value", v.p_value},
          {"decision", std::string(to_string(v.decision))},
          {"recorded_decision", r.recorded.empty() ? json(nullptr) : json(r.recorded)},
          {"agrees", r.recorded.empty() || r.recorded == std::string(to_string(v.decision))}};
}

void print(std::ostream& out, const json& j) {
  out << fmt::format("experiment {} ({} blocks ended{})\n", j["name"].get<std::string>(),
                     j["blocks_ended"].get<int>(), j["stop"].is_null() ? ", not ended" : "");
  out << fmt::format("{:<24} {:>10} {:>6} {:>9}\n", "arm", "hours", "hangs", "clusters");
  for (const json& arm : j["arms"]) {
    out << fmt::format("{:<24} {:>10.3f} {:>6} {:>9}\n", arm["name"].get<std::string>(),
                       arm["hours"].get<double>(), arm["hangs"].get<std::int64_t>(),
                       arm["clusters"].get<std::int64_t>());
  }
  const auto bound = [](const json& v) {
    return v.is_null() ? std::string("unbounded") : fmt::format("{:.3g}", v.get<double>());
  };
  out << fmt::format("rate ratio ({} / {}): {} [{}, {}], always-valid p = {:.4g}\n",
                     j["arms"][1]["name"].get<std::string>(),
                     j["arms"][0]["name"].get<std::string>(), bound(j["ratio"]),
                     fmt::format("{:.3g}", j["ratio_low"].get<double>()), bound(j["ratio_high"]),
                     j["p_value"].get<double>());
  out << "decision: " << j["decision"].get<std::string>();
  if (!j["recorded_decision"].is_null()) {
    out << " (the server recorded " << j["recorded_decision"].get<std::string>()
        << (j["agrees"].get<bool>() ? ": agrees)" : ": DIFFERS)");
  }
  out << "\n";
}

}  // namespace

int analyze_experiments(const std::string& ledger, bool as_json, std::ostream& out,
                        std::ostream& err) {
  const std::vector<RecordedExperiment> experiments = read_experiments(ledger);
  if (experiments.empty()) {
    err << "baton analyze: " << ledger << " holds no experiment (baton serve --experiment)\n";
    return kExitFailure;
  }
  json all = json::array();
  for (const RecordedExperiment& e : experiments) all.push_back(to_json(e, report_of(e)));
  if (as_json) {
    out << all.dump(2) << "\n";
  } else {
    for (const json& j : all) print(out, j);
  }
  return kExitOk;
}

}  // namespace baton
