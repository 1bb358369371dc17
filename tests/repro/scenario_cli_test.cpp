// `baton repro --scenario NAME` end to end on the CPU, short: every preset runs, writes its
// variants into the ledger under "<scenario>:<variant>" and reports them; bad input is a
// usage error naming the problem.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/ledger/ledger_reader.h"
#include "baton/model/writer/model_writer.h"
#include "baton/repro/scenarios.h"
#include "cli_util.h"
#include "temp_ledger_path.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::run_baton;
using testing::TempLedgerPath;

// The JSON goes to stdout, into a file; notes and warnings go to stderr, into the output.
nlohmann::json run_scenario_json(const std::string& args, const fs::path& ledger) {
  const fs::path json_path = ledger.string() + ".json";
  const CommandResult r =
      run_baton("repro " + args + " --json --ledger " + ledger.string() + " >" + json_path.string(),
                /*timeout_s=*/240);
  std::ifstream in(json_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(json_path);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output << "\n" << text;
  nlohmann::json report = nlohmann::json::parse(text, nullptr, false);
  if (report.is_discarded()) {
    ADD_FAILURE() << args << ": not JSON:\n" << text << "\nstderr:\n" << r.output;
    return nlohmann::json::object();
  }
  return report;
}

void expect_variants_in_ledger(const nlohmann::json& report, const fs::path& ledger) {
  ASSERT_TRUE(report.contains("variants")) << report.dump();
  for (const auto& v : report["variants"]) {
    const std::string policy =
        report["scenario"].get<std::string>() + ":" + v["key"].get<std::string>();
    const LedgerContents contents = read_ledger(ledger, policy);
    // One run per process: a cross-process variant's children each record theirs.
    EXPECT_EQ(contents.runs.size(), v["processes"].get<std::size_t>()) << policy;
    EXPECT_FALSE(contents.input.intervals.empty()) << policy;
  }
}

const nlohmann::json* variant(const nlohmann::json& report, const std::string& key) {
  for (const auto& v : report["variants"]) {
    if (v["key"] == key) return &v;
  }
  return nullptr;
}

// The watchdog sees progress at buffer completions only: with the caps off a burst is one
// buffer, and a prefill burst that took over the 2 s default on a loaded machine was,
// rightly, a hang (on the H200 machine's CPU, once); so was a layer of the attend engine
// under ThreadSanitizer (1.8 s alone). A long deadline keeps the tests that are not about
// the watchdog about the variants, not about the load.
constexpr const char* kLongDeadline = " --watchdog-deadline 60";

// The resident engine of idle-resident never ran a burst, so nothing overlapped; the busy
// one did.
void expect_idle_resident_measures_its_names(const nlohmann::json& idle) {
  ASSERT_NE(variant(idle, "idle"), nullptr);
  const auto& resident = (*variant(idle, "idle"))["engines"];
  EXPECT_EQ(resident[1]["steps"], 0);
  EXPECT_EQ((*variant(idle, "idle"))["overlap_s"], 0.0);
  EXPECT_GT((*variant(idle, "busy"))["overlap_s"].get<double>(), 0.0);
}

// Serialized, long-dispatch's two engines' streams never overlap; concurrent, they do. The
// attend engine's bursts are its long dispatches: far longer than a decode step.
void expect_long_dispatch_measures_its_names(const nlohmann::json& dispatch) {
  EXPECT_EQ((*variant(dispatch, "both-serialize"))["overlap_s"], 0.0);
  EXPECT_GT((*variant(dispatch, "both-concurrent"))["overlap_s"].get<double>(), 0.0);
  const auto& alone = (*variant(dispatch, "attend"))["engines"][0];
  const auto& decode = (*variant(dispatch, "decode"))["engines"][0];
  ASSERT_GT(alone["steps"].get<int>(), 0) << alone.dump();
  ASSERT_GT(decode["steps"].get<int>(), 0) << decode.dump();
  EXPECT_GT(alone["step_ms"]["p50"].get<double>(), 3 * decode["step_ms"]["p50"].get<double>());
}

// Each preset once: its variants in the ledger, no GPU failure, and the variants measure
// what their names say.
TEST(ScenarioCli, EveryInProcessPresetRunsItsVariantsIntoTheLedger) {
  for (const char* name : {"long-dispatch", "overpacked", "idle-resident", "prefill-only"}) {
    TempLedgerPath ledger;
    const nlohmann::json report = run_scenario_json(
        std::string("--scenario ") + name + " --duration 0.5" + kLongDeadline, ledger.path());
    ASSERT_EQ(report.value("scenario", ""), name);
    const Scenario expected = make_scenario(name, ScenarioInputs{});
    ASSERT_EQ(report["variants"].size(), expected.variants.size()) << name;
    expect_variants_in_ledger(report, ledger.path());
    for (const auto& v : report["variants"]) {
      for (const auto& e : v["engines"]) {
        EXPECT_EQ(e["gpu_failures"], 0) << name << " " << v["key"] << " " << e["name"];
      }
    }
    if (std::string(name) == "idle-resident") expect_idle_resident_measures_its_names(report);
    if (std::string(name) == "long-dispatch") expect_long_dispatch_measures_its_names(report);
  }
}

TEST(ScenarioCli, CrossProcessRunsTwoProcessesThatShareTheHostWideTurn) {
  TempLedgerPath ledger;
  const nlohmann::json report =
      // 2 s: the two children start on their own, and under a loaded machine (ctest -j2)
      // one's start-up took longer than a 0.8 s run, so their runs never met.
      run_scenario_json(std::string("--scenario cross-process --duration 2") + kLongDeadline,
                        ledger.path());
  ASSERT_EQ(report["variants"].size(), 4u) << report.dump();
  expect_variants_in_ledger(report, ledger.path());
  for (const char* key : {"two-concurrent", "two-serialize"}) {
    const nlohmann::json* v = variant(report, key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ((*v)["processes"], 2);
    ASSERT_EQ((*v)["engines"].size(), 2u);
    for (const auto& e : (*v)["engines"]) EXPECT_GT(e["steps"].get<int>(), 0) << key;
  }
  // The host-wide meter sees both processes' streams: they overlap with no turn, and
  // never with the host-wide one.
  EXPECT_GT((*variant(report, "two-concurrent"))["overlap_s"].get<double>(), 0.0);
  EXPECT_EQ((*variant(report, "two-serialize"))["overlap_s"], 0.0);
  EXPECT_GT((*variant(report, "two-serialize"))["turn"]["handovers"].get<int>(), 0);
}

TEST(ScenarioCli, SeedReplayRetriesEveryFailedRequestAndAnalysesTheHangs) {
  const fs::path model =
      fs::temp_directory_path() / ("baton-scenario-model-" + std::to_string(::getpid()));
  ModelShape shape = model_shape("tiny", ModelArch::qwen2);
  write_model(model, ModelArch::qwen2, shape, 3);
  TempLedgerPath ledger;
  // A high hang rate, so that a short run sees several hangs.
  const nlohmann::json report = run_scenario_json(
      "--scenario seed-replay --model " + model.string() +
          " --prompt-tokens 256 --duration 2 --inject-hang-rate 5 --watchdog-deadline 0.1",
      ledger.path());
  fs::remove_all(model);
  ASSERT_EQ(report["variants"].size(), 1u) << report.dump();
  const auto& run = report["variants"][0];
  std::uint64_t failures = 0;
  std::uint64_t retries = 0;
  for (const auto& e : run["engines"]) {
    failures += e["gpu_failures"].get<std::uint64_t>();
    retries += e["retries"].get<std::uint64_t>();
  }
  const std::uint64_t hangs = run["faults"]["by_class"]["hang"]["detected"];
  EXPECT_GE(hangs, 1u) << run.dump();
  EXPECT_GE(failures, hangs);  // a hang fails every request in its batch
  // Every failure is retried, but the last of each client's may be cut off by the stop.
  EXPECT_LE(retries, failures);
  EXPECT_GE(retries + run["engines"].size(), failures);
  ASSERT_TRUE(report.contains("analysis"));
  EXPECT_EQ(report["analysis"]["hangs"]["total"], hangs);
  expect_variants_in_ledger(report, ledger.path());
}

TEST(ScenarioCli, BadScenarioArgumentsAreUsageErrors) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"repro --scenario nope", "--scenario"},
      {"repro --scenario seed-replay", "needs --model DIR"},
      {"repro --scenario overpacked --engine decode", "--engine"},
      {"repro --scenario overpacked --compare", "--compare"},
      {"repro --scenario seed-replay --model /nonexistent/model", "/nonexistent/model"},
  };
  for (const auto& c : cases) {
    const CommandResult r = run_baton(c.args, 60);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(Scenarios, PresetsSetWhatTheyCompare) {
  ScenarioInputs inputs;
  inputs.model_dir = "/m";
  const Scenario packed = make_scenario("overpacked", inputs);
  int uncapped = 0;
  for (const ScenarioVariant& v : packed.variants) {
    if (v.options.limits) {
      EXPECT_EQ(v.options.limits->max_ops, std::numeric_limits<std::size_t>::max());
      ++uncapped;
    }
  }
  EXPECT_EQ(uncapped, 2);
  const Scenario replay = make_scenario("seed-replay", inputs);
  ASSERT_EQ(replay.variants.size(), 1u);
  EXPECT_TRUE(replay.variants[0].options.retry_failed);
  EXPECT_GT(replay.variants[0].options.faults.hang_rate, 0.0);
  ASSERT_EQ(replay.variants[0].options.engines.size(), 2u);
  EXPECT_EQ(replay.variants[0].options.engines[0].prompt_tokens, 512u);  // the CPU's default
  const Scenario cross = make_scenario("cross-process", inputs);
  int two = 0;
  for (const ScenarioVariant& v : cross.variants) {
    if (v.processes == 2) {
      EXPECT_EQ(v.options.turn.scope, TurnScope::host);
      ++two;
    }
  }
  EXPECT_EQ(two, 2);
  const Scenario idle = make_scenario("idle-resident", inputs);
  EXPECT_TRUE(idle.variants[1].options.engines[1].idle);
  EXPECT_THROW(make_scenario("nope", inputs), std::invalid_argument);
}

}  // namespace
}  // namespace baton
