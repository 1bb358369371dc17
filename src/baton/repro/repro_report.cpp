#include "baton/repro/repro_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "baton/ledger/write_status_json.h"

namespace baton {
namespace {

// The classes "by_class" holds, written and read back in this order.
constexpr FaultKind kReportedKinds[] = {FaultKind::hang, FaultKind::timeout,
                                        FaultKind::submissions_ignored, FaultKind::other,
                                        FaultKind::slowdown};

nlohmann::json latency_json(const LatencySummary& s) {
  return {{"p50", s.p50}, {"p99", s.p99}, {"mean", s.mean}, {"max", s.max}};
}

nlohmann::json faults_json(const FaultReport& faults) {
  nlohmann::json by_class = nlohmann::json::object();
  for (FaultKind kind : kReportedKinds) {
    auto it = faults.by_kind.find(kind);
    const FaultReport::Counts counts =
        it != faults.by_kind.end() ? it->second : FaultReport::Counts{};
    by_class[std::string(to_string(kind))] = {{"injected", counts.injected},
                                              {"detected", counts.detected}};
  }
  return {{"injected", faults.injected()},
          {"detected", faults.detected()},
          {"recovered", faults.recovered},
          {"fatal", faults.fatal},
          {"fatal_detail", faults.fatal_detail},
          {"by_class", std::move(by_class)},
          {"hang_rate", {{"arrived", faults.hangs_arrived}, {"dropped", faults.hangs_dropped}}},
          {"slowdown_episodes",
           {{"injected", faults.slowdown_episodes},
            {"detected", faults.slowdown_episodes_detected},
            {"flagged_outside", faults.slowdowns_outside_episodes}}}};
}

LatencySummary latency_from(const nlohmann::json& j) {
  LatencySummary s;
  s.p50 = j.at("p50");
  s.p99 = j.at("p99");
  s.mean = j.at("mean");
  s.max = j.at("max");
  return s;
}

FaultReport faults_from(const nlohmann::json& j) {
  FaultReport f;
  for (FaultKind kind : kReportedKinds) {
    const nlohmann::json& counts = j.at("by_class").at(std::string(to_string(kind)));
    f.by_kind[kind] = {counts.at("injected"), counts.at("detected")};
  }
  f.recovered = j.at("recovered");
  f.fatal = j.at("fatal");
  f.fatal_detail = j.at("fatal_detail");
  return f;
}

std::string scenario_name(const ReproResult& run) { return describe(run.turn); }

const ClientTurnStats* client_stats(const ReproResult& run, const std::string& name) {
  for (const auto& c : run.turn_stats.clients) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

void print_engine_rows(std::ostream& out, const ReproResult& run, const std::string& scenario,
                       const std::vector<ReproResult>* solo) {
  bool first = true;
  for (const EngineResult& e : run.engines) {
    const double base = solo != nullptr ? solo_p50_ms(*solo, e.name) : 0.0;
    const ClientTurnStats* c = client_stats(run, e.name);
    fmt::print(out, "{:<24} {:<11} {:>7} {:>9.3f} {:>9.3f} {:>8} {:>9.2f}\n", first ? scenario : "",
               e.name, e.steps, e.step_ms.p50, e.step_ms.p99,
               base > 0 ? fmt::format("{:.2f}x", e.step_ms.p50 / base) : "-",
               c != nullptr ? c->wait_s : 0.0);
    first = false;
  }
}

void print_header(std::ostream& out) {
  fmt::print(out, "{:<24} {:<11} {:>7} {:>9} {:>9} {:>8} {:>9}\n", "scenario", "engine", "steps",
             "p50 ms", "p99 ms", "vs solo", "wait s");
}

void print_footer(std::ostream& out, const ReproResult& run, const std::vector<ReproResult>* solo) {
  fmt::print(out,
             "{:<24} overlap {:.3f} s ({} episodes), hand-overs {} (p50 {:.1f} us, p99 {:.1f} us)",
             "", run.overlap_s, run.overlap_episodes, run.turn_stats.handovers,
             run.turn_stats.handover_us.p50, run.turn_stats.handover_us.p99);
  if (solo != nullptr) fmt::print(out, ", aggregate {:.2f}", aggregate_throughput(run, *solo));
  fmt::print(out, "\n");
  const FaultReport& f = run.faults;
  if (f.injected() + f.detected() == 0) return;
  fmt::print(out, "{:<24} faults: injected {}, detected {}, recovered {}", "", f.injected(),
             f.detected(), f.recovered);
  for (const auto& [kind, counts] : f.by_kind) {
    if (counts.injected + counts.detected > 0) {
      fmt::print(out, "; {} {}/{}", to_string(kind), counts.detected, counts.injected);
    }
  }
  if (f.detect_latency_ms.count > 0) {
    fmt::print(out, "; hang detection p50 {:.0f} ms, max {:.0f} ms", f.detect_latency_ms.p50,
               f.detect_latency_ms.max);
  }
  fmt::print(out, "\n");
  if (f.hangs_arrived > 0) {
    fmt::print(out, "{:<24} hang rate: {} arrived in overlap, {} never landed\n", "",
               f.hangs_arrived, f.hangs_dropped);
  }
  if (f.slowdown_episodes > 0) {
    fmt::print(out, "{:<24} slowdown episodes: {} injected, {} detected, {} flagged outside\n", "",
               f.slowdown_episodes, f.slowdown_episodes_detected, f.slowdowns_outside_episodes);
  }
  if (f.fatal) fmt::print(out, "{:<24} FATAL: {}\n", "", f.fatal_detail);
}

}  // namespace

nlohmann::json to_json(const ReproResult& run) {
  nlohmann::json engines = nlohmann::json::array();
  for (const EngineResult& e : run.engines) {
    nlohmann::json entry = {{"name", e.name},
                            {"kind", e.model.empty() ? std::string(to_string(e.kind)) : e.model},
                            {"steps", e.steps},
                            {"steps_per_s", e.steps_per_s},
                            {"failed_requests", e.failed_requests},
                            {"gpu_failures", e.gpu_failures},
                            {"retries", e.retries},
                            {"hangs", e.hangs},
                            {"step_ms", latency_json(e.step_ms)},
                            {"decode_steps", e.decode_step_ms.count},
                            {"decode_step_ms", latency_json(e.decode_step_ms)},
                            {"prefill_pieces", e.prefill_pieces},
                            {"prefill_piece_layers", e.prefill_piece_layers},
                            {"longest_piece_ms", e.longest_piece_ms},
                            {"warm_up_ms", e.warm_up_ms}};
    if (const ClientTurnStats* c = client_stats(run, e.name)) {
      entry["turn"] = {{"acquisitions", c->acquisitions},
                       {"handovers_in", c->handovers_in},
                       {"yields", c->yields},
                       {"wait_s", c->wait_s},
                       {"hold_s", c->hold_s},
                       {"weight", c->weight},
                       {"wanted_s", c->wanted_s()},
                       {"device_s", c->device_s}};
    }
    engines.push_back(std::move(entry));
  }
  nlohmann::json out = {
      {"backend", run.backend},
      {"policy", std::string(to_string(run.turn.policy))},
      {"scenario", scenario_name(run)},
      {"quantum", std::string(to_string(run.turn.quantum))},
      {"decode_first", run.turn.decode_first},
      {"turn_scope", std::string(to_string(run.turn.scope))},
      {"duration_s", run.duration_s},
      {"overlap_s", run.overlap_s},
      {"overlap_episodes", run.overlap_episodes},
      {"engines", std::move(engines)},
      {"turn",
       {{"handovers", run.turn_stats.handovers},
        {"handover_us_p50", run.turn_stats.handover_us.p50},
        {"handover_us_p99", run.turn_stats.handover_us.p99},
        {"handover_us_mean", run.turn_stats.handover_us.mean},
        {"handover_us_max", run.turn_stats.handover_us.max},
        {"prefill_share", run.turn_stats.prefill_share}}},
      {"faults", faults_json(run.faults)},
      {"detect_latency_ms",
       {{"p50", run.faults.detect_latency_ms.p50}, {"max", run.faults.detect_latency_ms.max}}}};
  if (run.ledger) out["ledger"] = to_json(*run.ledger);
  return out;
}

nlohmann::json to_json(const ReproComparison& comparison) {
  nlohmann::json solo = nlohmann::json::array();
  for (const ReproResult& run : comparison.solo) solo.push_back(to_json(run));
  nlohmann::json runs = nlohmann::json::array();
  for (const ReproResult& run : comparison.runs) {
    nlohmann::json entry = to_json(run);
    entry["aggregate"] = aggregate_throughput(run, comparison.solo);
    runs.push_back(std::move(entry));
  }
  return {{"solo", std::move(solo)}, {"runs", std::move(runs)}};
}

ReproResult result_from_json(const nlohmann::json& json) {
  ReproResult run;
  run.backend = json.at("backend");
  run.turn.policy = parse_turn_policy(json.at("policy").get<std::string>()).value();
  run.turn.quantum = parse_quantum(json.at("quantum").get<std::string>()).value();
  run.turn.decode_first = json.at("decode_first");
  run.turn.scope = parse_turn_scope(json.at("turn_scope").get<std::string>()).value();
  run.duration_s = json.at("duration_s");
  run.overlap_s = json.at("overlap_s");
  run.overlap_episodes = json.at("overlap_episodes");
  for (const nlohmann::json& e : json.at("engines")) {
    EngineResult r;
    r.name = e.at("name");
    r.steps = e.at("steps");
    r.steps_per_s = e.at("steps_per_s");
    r.failed_requests = e.at("failed_requests");
    r.gpu_failures = e.at("gpu_failures");
    r.retries = e.at("retries");
    r.hangs = e.at("hangs");
    r.step_ms = latency_from(e.at("step_ms"));
    r.step_ms.count = r.steps;
    r.decode_step_ms = latency_from(e.at("decode_step_ms"));
    r.decode_step_ms.count = e.at("decode_steps");
    r.prefill_pieces = e.value("prefill_pieces", std::uint64_t{0});
    r.prefill_piece_layers = e.value("prefill_piece_layers", 0.0);
    r.longest_piece_ms = e.value("longest_piece_ms", 0.0);
    r.warm_up_ms = e.value("warm_up_ms", 0.0);
    if (e.contains("turn")) {
      const nlohmann::json& t = e.at("turn");
      run.turn_stats.clients.push_back({.name = r.name,
                                        .acquisitions = t.at("acquisitions"),
                                        .handovers_in = t.at("handovers_in"),
                                        .yields = t.at("yields"),
                                        .wait_s = t.at("wait_s"),
                                        .hold_s = t.at("hold_s"),
                                        .weight = t.value("weight", 1.0),
                                        .device_s = t.value("device_s", 0.0)});
    }
    run.engines.push_back(std::move(r));
  }
  run.turn_stats.handovers = json.at("turn").at("handovers");
  run.turn_stats.handover_us.p50 = json.at("turn").at("handover_us_p50");
  run.turn_stats.handover_us.p99 = json.at("turn").at("handover_us_p99");
  run.turn_stats.handover_us.mean = json.at("turn").value("handover_us_mean", 0.0);
  run.turn_stats.handover_us.max = json.at("turn").value("handover_us_max", 0.0);
  run.turn_stats.prefill_share = json.at("turn").value("prefill_share", 0.0);
  run.faults = faults_from(json.at("faults"));
  return run;
}

void print_table(std::ostream& out, const ReproResult& run) {
  fmt::print(out, "baton repro: backend {}, {:.1f} s\n", run.backend, run.duration_s);
  print_header(out);
  print_engine_rows(out, run, scenario_name(run), nullptr);
  print_footer(out, run, nullptr);
}

void print_table(std::ostream& out, const ReproComparison& comparison) {
  const ReproResult& any =
      comparison.runs.empty() ? comparison.solo.front() : comparison.runs.front();
  fmt::print(out, "baton repro --compare: backend {}, {:.1f} s per scenario\n", any.backend,
             any.duration_s);
  print_header(out);
  for (const ReproResult& run : comparison.solo) {
    print_engine_rows(out, run, "solo", &comparison.solo);
  }
  for (const ReproResult& run : comparison.runs) {
    print_engine_rows(out, run, scenario_name(run), &comparison.solo);
    print_footer(out, run, &comparison.solo);
  }
}

}  // namespace baton
