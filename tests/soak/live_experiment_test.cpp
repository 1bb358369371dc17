// Issue 51's acceptance, end to end on the CPU backend: `baton serve --experiment` (an
// in-process BatonServer with the plan) under two clients, with hangs injected only where
// two streams overlap (so `concurrent` hangs and `serialize` does not). Timing-bound (blocks
// of 1.5 s, about 15 s in all), so a soak test: run serially, not under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "baton/ledger/sqlite.h"
#include "baton/model/writer/model_writer.h"
#include "cli_util.h"
#include "server/in_process_server.h"
#include "temp_dir.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Issue 51's acceptance: a live experiment on the CPU with injected hangs that only overlap
// causes (so `concurrent` hangs and `serialize` does not): the server switches arms, no
// request fails but where a hang was, the verdict names serialize, and `baton analyze
// --experiment` agrees from the ledger alone.
TEST(LiveExperiment, ItSwitchesArmsAndItsVerdictNamesTheArmThatDoesNotHang) {
  testing::TempDir dir;
  ServeConfig cfg;
  cfg.port = 0;
  cfg.ledger = dir.path() / "ledger.db";
  cfg.shutdown_timeout_s = 5;
  for (const auto& [name, seed] : {std::pair{"a", 1}, std::pair{"b", 2}}) {
    ModelSpec spec;
    spec.name = name;
    spec.dir = dir.path() / name;
    spec.kv_budget_mb = 4;
    write_model(spec.dir, ModelArch::qwen2, model_shape("tiny", ModelArch::qwen2),
                static_cast<std::uint64_t>(seed));
    cfg.models.push_back(spec);
  }
  cfg.watchdog_deadline_s = 0.3;
  cfg.faults.hang_rate = 6.0;  // per second of overlap: none under serialize
  cfg.faults.seed = 5;
  cfg.experiment = dir.path() / "ab.toml";
  std::ofstream(cfg.experiment) << R"(name = "ab"
block_seconds = 1.5
cluster_window = "0.01s"
reduction = 5
alpha = 0.05
seed = 3
end_on = "concurrent"
[[arm]]
name = "concurrent"
policy = "concurrent"
[[arm]]
name = "serialize"
policy = "serialize"
)";
  test::InProcessServer server(std::move(cfg));
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0}, answered{0};
  std::vector<std::thread> clients;
  for (const std::string model : {"a", "b"}) {
    clients.emplace_back([&, model] {
      while (!stop) {
        int status = 0;
        server.chat(model, &status);
        ++(status == 200 ? answered : failed);
      }
    });
  }
  json state;
  for (int i = 0; i < 1200; ++i) {  // at most 60 s
    state = server.get("/v1/experiment");
    if (state.value("ended", false)) break;
    std::this_thread::sleep_for(50ms);
  }
  stop = true;
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(state.value("ended", false)) << state.dump(2);
  EXPECT_EQ(state["ended_reason"], "verdict") << state.dump(2);
  EXPECT_EQ(state["decision"], "b_better") << state.dump(2);
  EXPECT_EQ(server.get("/v1/engines")["policy"], "serialize/op+decode-first");
  EXPECT_GT(answered.load(), 0);
  const std::string metrics = server.send("GET", "/metrics").body;
  EXPECT_NE(metrics.find("baton_experiment_ended{plan=\"ab\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("baton_experiment_arm_running{plan=\"ab\",arm=\"serialize\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("baton_experiment_p_value{plan=\"ab\"} "), std::string::npos);
  EXPECT_EQ(server.stop(), 0);

  Database db(dir.path() / "ledger.db", Database::Mode::read_only);
  Statement hangs(db, "SELECT count(*) FROM events WHERE class = 'hang'");
  ASSERT_TRUE(hangs.step());
  EXPECT_LE(failed.load(), hangs.column_int(0)) << "a request failed where no hang was";
  Statement arms(db, "SELECT count(DISTINCT arm), count(*) FROM experiment_blocks");
  ASSERT_TRUE(arms.step());
  EXPECT_EQ(arms.column_int(0), 2);
  EXPECT_GE(arms.column_int(1), 2);
  const testing::CommandResult analyzed = testing::run_baton(
      "analyze --experiment --json --ledger " + (dir.path() / "ledger.db").string(), 60);
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.output;
  const json report = json::parse(analyzed.output).at(0);
  EXPECT_EQ(report["decision"], "b_better") << report.dump(2);
  EXPECT_TRUE(report["agrees"].get<bool>()) << report.dump(2);
}

}  // namespace
}  // namespace baton
