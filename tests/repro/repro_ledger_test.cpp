// `baton repro --ledger`: every burst becomes a busy interval and every fault an event.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <nlohmann/json.hpp>

#include "baton/ledger/sqlite.h"
#include "baton/repro/repro_run.h"
#include "cli_util.h"
#include "temp_ledger_path.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

TEST(ReproLedger, RecordsEveryBurstAndEveryFault) {
  const fs::path path =
      fs::temp_directory_path() / ("baton-repro-ledger-" + std::to_string(::getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);

  ReproOptions options;
  options.duration_s = 1.5;
  options.engines = {{"decode-1", {BurstKind::decode, 8, 8, 256, 256, 2}},
                     {"decode-2", {BurstKind::decode, 8, 8, 256, 256, 2}}};
  options.faults.hang_rate = 4.0;
  options.faults.seed = 3;
  options.watchdog.deadline = std::chrono::milliseconds(100);
  options.ledger_path = path.string();
  const ReproResult r = run_repro(options);

  Database db(path);
  for (const EngineResult& e : r.engines) {
    Statement intervals(db,
                        "SELECT sum(bursts) FROM intervals WHERE engine = ? AND kind = 'decode'");
    intervals.bind(1, e.name);
    ASSERT_TRUE(intervals.step());
    // Each hang failed exactly one burst of the engine it was blamed on; those count too.
    // Consecutive bursts may be merged into one interval; `bursts` counts them.
    EXPECT_EQ(intervals.column_int(0), static_cast<std::int64_t>(e.steps + e.hangs)) << e.name;
  }
  Statement events(db, "SELECT count(*) FROM events WHERE class = 'hang'");
  ASSERT_TRUE(events.step());
  EXPECT_EQ(events.column_int(0),
            static_cast<std::int64_t>(r.faults.by_kind.at(FaultKind::hang).detected));
  Statement runs(db, "SELECT backend, policy, exit_code, stop > start FROM runs");
  ASSERT_TRUE(runs.step());
  EXPECT_EQ(runs.column_text(0), "cpu");
  EXPECT_EQ(runs.column_text(1), "concurrent");
  EXPECT_EQ(runs.column_int(2), 0);
  EXPECT_EQ(runs.column_int(3), 1);
  Statement bad(db, "SELECT count(*) FROM intervals WHERE end < start");
  ASSERT_TRUE(bad.step());
  EXPECT_EQ(bad.column_int(0), 0);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
}

TEST(ReproLedger, AFileThatIsNotALedgerExitsWith2AndIsLeftAlone) {
  testing::TempLedgerPath text;
  std::ofstream(text.path()) << "not a database\n";
  testing::TempLedgerPath other;
  {
    Database db(other.path());
    db.exec("CREATE TABLE t (x)");
  }
  for (const fs::path& path : {text.path(), other.path()}) {
    const auto r =
        testing::run_baton("repro --engine decode --duration 0.1 --ledger " + path.string());
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(path.string() + " is not a baton ledger"), std::string::npos)
        << r.output;
  }
  Database db(other.path());
  Statement tables(db, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'");
  ASSERT_TRUE(tables.step());
  EXPECT_EQ(tables.column_int(0), 0);  // another program's database gained no baton table
}

// Waits (up to 60 s) until the run's row is in the ledger at `path`: the run has begun.
bool wait_for_run_row(const fs::path& path) {
  for (int i = 0; i < 6000; ++i) {
    try {
      Database db(path, Database::Mode::read_only);
      Statement runs(db, "SELECT count(*) FROM runs");
      if (runs.step() && runs.column_int(0) > 0) return true;
    } catch (const SqliteError&) {
      // Not there yet, or not yet a ledger.
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The ledger is damaged while the run goes on (its events table renamed away by another
// connection: every commit fails, as on a full disk or a corrupt file). The hangs detected
// meanwhile cannot be written: a warning at once, the count at the end, exit 74.
TEST(ReproLedger, ALedgerThatStopsTakingWritesMidRunIsWarnedCountedAndExits74) {
  testing::TempLedgerPath ledger;
  const std::string path = ledger.path().string();
  auto run = std::async(std::launch::async, [&] {
    return testing::run_baton("repro --engine decode --engine decode --inject-hang-rate 8 "
                              "--watchdog-deadline 0.1 --duration 2 --ledger " + path, 120);
  });
  ASSERT_TRUE(wait_for_run_row(ledger.path()));
  {
    Database db(ledger.path());
    db.exec("ALTER TABLE events RENAME TO events_away");
  }
  const testing::CommandResult r = run.get();
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find("baton: warning: ledger " + path + ": cannot write "),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no such table: events"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("baton: the ledger " + path + " is incomplete: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" rows were never written ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" of them fault events)"), std::string::npos) << r.output;  // hangs
  EXPECT_NE(r.output.find("exiting 74"), std::string::npos) << r.output;
}

// Runs `baton repro ... --json --ledger` and `baton analyze --json` on that ledger.
struct RunAndAnalysis {
  nlohmann::json repro;
  nlohmann::json analysis;
};

RunAndAnalysis repro_then_analyze(const std::string& policy,
                                  const std::string& engines = "--engine decode --engine prefill",
                                  const std::string& duration_s = "1") {
  testing::TempLedgerPath ledger;
  const auto run = testing::run_baton("repro " + policy + " " + engines + " --duration " +
                                          duration_s + " --json --ledger " + ledger.path().string(),
                                      300);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const auto analyze = testing::run_baton("analyze --json --ledger " + ledger.path().string());
  EXPECT_EQ(analyze.exit_code, 0) << analyze.output;
  return {.repro = nlohmann::json::parse(run.output, nullptr, false),
          .analysis = nlohmann::json::parse(analyze.output, nullptr, false)};
}

// Under serialize an engine that waits for the turn has a request in progress, so the
// engines are often busy together; but no two streams ever have work in flight at once,
// which is what repro's overlap meter measures. The ledger must tell the two apart.
TEST(ReproLedger, SerializeHasEngineDualTimeButNoStreamDualTime) {
  const RunAndAnalysis r = repro_then_analyze("--policy serialize --quantum layer");
  ASSERT_TRUE(r.analysis.contains("stream_exposure")) << r.analysis.dump(2);
  EXPECT_EQ(r.analysis["exposure"], "engine");
  EXPECT_GT(r.analysis["dual_hours"].get<double>(), 0.0);
  const nlohmann::json& stream = r.analysis["stream_exposure"];
  ASSERT_TRUE(stream.is_object()) << r.analysis.dump(2);
  EXPECT_GT(stream["busy_hours"].get<double>(), 0.0);
  EXPECT_EQ(r.repro["overlap_s"].get<double>(), 0.0);
  EXPECT_LE(stream["dual_hours"].get<double>() * 3600.0, 1e-6) << stream.dump();
}

TEST(ReproLedger, ConcurrentHasBothAndStreamDualTimeIsTheOverlap) {
  const RunAndAnalysis r = repro_then_analyze("--policy concurrent");
  ASSERT_TRUE(r.analysis.contains("stream_exposure")) << r.analysis.dump(2);
  EXPECT_GT(r.analysis["dual_hours"].get<double>(), 0.0);
  const nlohmann::json& stream = r.analysis["stream_exposure"];
  ASSERT_TRUE(stream.is_object()) << r.analysis.dump(2);
  const double overlap_s = r.repro["overlap_s"].get<double>();
  EXPECT_GT(overlap_s, 0.0);
  EXPECT_NEAR(stream["dual_hours"].get<double>() * 3600.0, overlap_s, 0.01 + 0.02 * overlap_s)
      << stream.dump();
}

// Real models' LLM and embedding engines beside a synthetic prefill engine: their steps
// and calls are the ledger's busy intervals of those engines, and under serialize no two
// streams overlap.
const std::string kModelEngines =
    "--engine llm:" + std::string(BATON_TEST_DATA) +
    "/models/qwen2:24 --engine embedding:" + std::string(BATON_TEST_DATA) +
    "/models/qwen3 --engine prefill";

const nlohmann::json* engine_named(const nlohmann::json& engines, const std::string& name) {
  for (const nlohmann::json& e : engines) {
    // repro's engines carry "name", the analysis's "engine".
    for (const char* key : {"name", "engine"}) {
      if (e.contains(key) && e[key] == name) return &e;
    }
  }
  return nullptr;
}

TEST(ReproLedger, RealModelsStepsAreTheirBusyIntervals) {
  for (const std::string policy : {"--policy concurrent", "--policy serialize --quantum layer"}) {
    // 3 s: under ThreadSanitizer, beside a prefill engine on two cores, the embedding
    // client's ~20 ms calls take long enough that 1 s held as few as 3 of them.
    const RunAndAnalysis r = repro_then_analyze(policy, kModelEngines, "3");
    for (const auto& [name, kind] :
         {std::pair{"llm-1", "llm"}, std::pair{"embedding-1", "embedding"}}) {
      const nlohmann::json* engine = engine_named(r.repro["engines"], name);
      ASSERT_NE(engine, nullptr) << r.repro.dump(2);
      EXPECT_EQ((*engine)["kind"], kind);
      EXPECT_GT((*engine)["steps"].get<int>(), 5) << name << " " << policy;
      // At most the request in progress when the run ended (EngineStopped).
      EXPECT_LE((*engine)["failed_requests"].get<int>(), 1) << name << " " << policy;
      if (std::string(kind) == "embedding") continue;  // not an LLM's exposure: analysis skips it
      // Each request's prompt is a step of its own (prefill), the rest are decode steps.
      EXPECT_GT((*engine)["decode_steps"].get<int>(), 0) << name << " " << policy;
      EXPECT_LT((*engine)["decode_steps"].get<int>(), (*engine)["steps"].get<int>()) << name;
      const nlohmann::json* busy = engine_named(r.analysis["by_engine"], name);
      ASSERT_NE(busy, nullptr) << r.analysis.dump(2);
      EXPECT_GT((*busy)["alone_hours"].get<double>() + (*busy)["with_others_hours"].get<double>(),
                0.0);
    }
    if (policy.find("serialize") != std::string::npos) {
      EXPECT_EQ(r.repro["overlap_s"].get<double>(), 0.0);
      EXPECT_LE(r.analysis["stream_exposure"]["dual_hours"].get<double>() * 3600.0, 1e-6);
    } else {
      EXPECT_GT(r.repro["overlap_s"].get<double>(), 0.0);
    }
  }
}

}  // namespace
}  // namespace baton
