// The experiment's TOML file: a good file gives every field (each arm's turn starting from the
// server's), and every bad key or value is refused with a message naming the file and the key.
#include "baton/experiment/experiment_plan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>

#include "temp_dir.h"

namespace baton::experiment_plan_test {
namespace {

constexpr std::string_view kArms = R"(
[[arm]]
name = "concurrent"
policy = "concurrent"

[[arm]]
name = "serialize"
policy = "serialize"
)";

TurnOptions server_turn() {
  TurnOptions base;
  base.spin = std::chrono::microseconds(7);
  base.scope = TurnScope::host;
  base.host_name = "lab";
  base.max_hold_ms = 2.0;
  return base;
}

// The message of the std::invalid_argument that parsing `text` throws; fails when none does.
std::string error_of(const std::string& text, std::string_view file = "experiment.toml") {
  try {
    parse_experiment_plan(text, file, server_turn());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(ExperimentPlan, ReadsAGoodFile) {
  const std::string text = R"(
name = "hang-study"
block_minutes = 30
planned_hours = 120.5
reduction = 4
alpha = 0.01
cluster_window = "15m"
seed = 42
end_on = "serialize"

[[arm]]
name = "concurrent"
policy = "concurrent"

[[arm]]
name = "serialize"
policy = "serialize"
quantum = "layer"
max_hold_ms = 1.5
decode_first = false
prefill_share = 0.3
)";
  const ExperimentPlan plan = parse_experiment_plan(text, "lab/exp.toml", server_turn());
  EXPECT_EQ(plan.name, "hang-study");
  EXPECT_DOUBLE_EQ(plan.block_s, 1800.0);
  EXPECT_DOUBLE_EQ(plan.planned_hours, 120.5);
  EXPECT_DOUBLE_EQ(plan.reduction, 4.0);
  EXPECT_DOUBLE_EQ(plan.alpha, 0.01);
  EXPECT_DOUBLE_EQ(plan.cluster_window_s, 900.0);
  EXPECT_EQ(plan.seed, 42u);
  EXPECT_EQ(plan.end_arm, 1u);
  ASSERT_EQ(plan.arms.size(), 2u);
  const TurnOptions& a = plan.arms[0].turn;
  const TurnOptions& b = plan.arms[1].turn;
  EXPECT_EQ(plan.arms[0].name, "concurrent");
  EXPECT_EQ(a.policy, TurnPolicy::concurrent);
  EXPECT_DOUBLE_EQ(a.max_hold_ms, 2.0);  // the server's, not set by the arm
  EXPECT_EQ(plan.arms[1].name, "serialize");
  EXPECT_EQ(b.policy, TurnPolicy::serialize);
  EXPECT_EQ(b.quantum, Quantum::layer);
  EXPECT_DOUBLE_EQ(b.max_hold_ms, 1.5);
  EXPECT_FALSE(b.decode_first);
  ASSERT_TRUE(b.prefill_share.has_value());
  EXPECT_DOUBLE_EQ(*b.prefill_share, 0.3);
  for (const ExperimentArm& arm : plan.arms) {  // what the arms do not set stays the server's
    EXPECT_EQ(arm.turn.spin, std::chrono::microseconds(7));
    EXPECT_EQ(arm.turn.scope, TurnScope::host);
    EXPECT_EQ(arm.turn.host_name, "lab");
  }
}

TEST(ExperimentPlan, DefaultsAndTheFilesStemAsName) {
  const ExperimentPlan plan =
      parse_experiment_plan(std::string(kArms), "/etc/baton/night-run.toml", TurnOptions{});
  const ExperimentPlan defaults;
  EXPECT_EQ(plan.name, "night-run");
  EXPECT_DOUBLE_EQ(plan.block_s, 3600.0);
  EXPECT_DOUBLE_EQ(plan.planned_hours, 0.0);
  EXPECT_DOUBLE_EQ(plan.reduction, defaults.reduction);
  EXPECT_DOUBLE_EQ(plan.alpha, defaults.alpha);
  EXPECT_DOUBLE_EQ(plan.cluster_window_s, 2700.0);
  EXPECT_EQ(plan.seed, defaults.seed);
  EXPECT_EQ(plan.end_arm, 0u);
}

TEST(ExperimentPlan, BlockSecondsForShortRunsAndPartitionShares) {
  const ExperimentPlan plan = parse_experiment_plan(std::string(R"(
block_seconds = 0.025
cluster_window = "90s"
[[arm]]
name = "auto"
policy = "partition"
prefill_share = "auto"
[[arm]]
name = "weights"
policy = "partition"
prefill_share = "weights"
)"),
                                                    "x.toml", TurnOptions{});
  EXPECT_DOUBLE_EQ(plan.block_s, 0.025);
  EXPECT_DOUBLE_EQ(plan.cluster_window_s, 90.0);
  EXPECT_TRUE(plan.arms[0].turn.prefill_share_auto);
  EXPECT_FALSE(plan.arms[1].turn.prefill_share_auto);
  EXPECT_FALSE(plan.arms[1].turn.prefill_share.has_value());
}

TEST(ExperimentPlan, ReadsTheFileFromDisk) {
  const testing::TempDir dir;
  const auto path = dir.path() / "weekend.toml";
  std::ofstream(path) << "cluster_window = \"1h\"\n" << kArms;
  const ExperimentPlan plan = read_experiment_plan(path, TurnOptions{});
  EXPECT_EQ(plan.name, "weekend");
  EXPECT_DOUBLE_EQ(plan.cluster_window_s, 3600.0);
  const std::string missing = (dir.path() / "none.toml").string();
  try {
    read_experiment_plan(missing, TurnOptions{});
    ADD_FAILURE() << "no error for a missing file";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

// Each bad value: the message names the file, the key and what is wrong.
TEST(ExperimentPlan, EachBadValueIsNamed) {
  const std::string arms(kArms);
  const struct {
    std::string top;
    std::string expected;
  } cases[] = {
      {"block_minutes = 0", "experiment.toml: block_minutes: 0 is not in"},
      {"block_minutes = -5", "experiment.toml: block_minutes: -5 is not in"},
      {"block_minutes = 2000", "experiment.toml: block_minutes: 2000 is not in"},
      {"block_minutes = nan", "experiment.toml: block_minutes: nan is not a finite number"},
      {"block_seconds = 0.001", "experiment.toml: block_seconds: 0.001 is not in"},
      {"block_seconds = inf", "experiment.toml: block_seconds: inf is not a finite number"},
      {"block_minutes = \"60\"", "experiment.toml: block_minutes: must be a number"},
      {"block_minutes = 30\nblock_seconds = 10", "block_seconds: give one of block_minutes and"},
      {"planned_hours = -1", "experiment.toml: planned_hours: -1 is negative"},
      {"reduction = 1", "experiment.toml: reduction: 1 is not above 1"},
      {"reduction = 0.5", "experiment.toml: reduction: 0.5 is not above 1"},
      {"alpha = 0", "experiment.toml: alpha: 0 is not in (0, 0.5)"},
      {"alpha = 0.5", "experiment.toml: alpha: 0.5 is not in (0, 0.5)"},
      {"seed = -3", "experiment.toml: seed: -3 is negative"},
      {"seed = 1.5", "experiment.toml: seed: must be an integer"},
      {"name = \"\"", "experiment.toml: name: must not be empty"},
      {"name = 5", "experiment.toml: name: must be a string"},
      {"end_on = \"partition\"", "experiment.toml: end_on: 'partition' is not an arm"},
      {"cluster_window = \"45 minutes\"",
       "experiment.toml: cluster_window: '45 minutes' is not a duration"},
      {"cluster_window = \"-5m\"", "experiment.toml: cluster_window: '-5m' is not a duration"},
      {"cluster_window = 45", "experiment.toml: cluster_window: must be a duration string"},
  };
  for (const auto& c : cases) {
    const std::string message = error_of(c.top + "\n" + arms);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << c.top << "\n  gave: " << message << "\n  expected: " << c.expected;
  }
}

// Arm `index` of a file whose other arm is fine, with `keys` as its body.
std::string with_arm(const std::string& keys) {
  return "[[arm]]\nname = \"a\"\npolicy = \"concurrent\"\n[[arm]]\n" + keys + "\n";
}

TEST(ExperimentPlan, EachBadArmKeyIsNamed) {
  const struct {
    std::string keys;
    std::string expected;
  } cases[] = {
      {"name = \"b\"\npolicy = \"serial\"",
       "experiment.toml: arm[1].policy: 'serial' is not a policy (concurrent, serialize, "
       "partition)"},
      {"name = \"b\"\npolicy = 1", "experiment.toml: arm[1].policy: must be a string"},
      {"name = \"b\"\npolicy = \"serialize\"\nquantum = \"layers\"",
       "experiment.toml: arm[1].quantum: 'layers' is not a quantum (burst, layer, op)"},
      {"name = \"b\"\npolicy = \"serialize\"\nmax_hold_ms = 0.01",
       "experiment.toml: arm[1].max_hold_ms: 0.01 is not in [0.05, 10000]"},
      {"name = \"b\"\npolicy = \"serialize\"\nmax_hold_ms = \"1\"",
       "experiment.toml: arm[1].max_hold_ms: must be a number"},
      {"name = \"b\"\npolicy = \"serialize\"\ndecode_first = 1",
       "experiment.toml: arm[1].decode_first: must be a boolean"},
      {"name = \"b\"\npolicy = \"partition\"\nprefill_share = 1.5",
       "experiment.toml: arm[1].prefill_share: '1.5' is not a prefill share"},
      {"name = \"b\"\npolicy = \"partition\"\nprefill_share = \"half\"",
       "experiment.toml: arm[1].prefill_share: 'half' is not a prefill share"},
      {"name = \"b\"", "experiment.toml: arm[1].policy: missing"},
      {"policy = \"serialize\"", "experiment.toml: arm[1].name: missing or empty"},
      {"name = \"\"\npolicy = \"serialize\"", "experiment.toml: arm[1].name: missing or empty"},
      {"name = \"a\"\npolicy = \"serialize\"",
       "experiment.toml: arm[1].name: 'a' names arm[0] too"},
      {"name = \"b\"\npolicy = \"serialize\"\nscope = \"host\"",
       "experiment.toml: arm[1].scope: unknown key (known: name, policy, quantum"},
  };
  for (const auto& c : cases) {
    const std::string message = error_of(with_arm(c.keys));
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << c.keys << "\n  gave: " << message << "\n  expected: " << c.expected;
  }
}

TEST(ExperimentPlan, UnknownTopLevelKeyIsNamed) {
  const std::string message = error_of("blocks = 3\n" + std::string(kArms));
  EXPECT_NE(message.find("experiment.toml: blocks: unknown key (known: name, block_minutes"),
            std::string::npos)
      << message;
}

TEST(ExperimentPlan, TwoArmsExactly) {
  EXPECT_NE(error_of("name = \"x\"\n").find("experiment.toml: arm: 0 arms"), std::string::npos);
  EXPECT_NE(error_of("[[arm]]\nname = \"a\"\npolicy = \"concurrent\"\n")
                .find("experiment.toml: arm: 1 arms; an experiment compares exactly two"),
            std::string::npos);
  const std::string three = std::string(kArms) + "[[arm]]\nname = \"c\"\npolicy = \"partition\"\n";
  EXPECT_NE(error_of(three).find("experiment.toml: arm: 3 arms"), std::string::npos);
  EXPECT_NE(error_of("[arm]\nname = \"a\"\n").find("experiment.toml: arm: must be an array"),
            std::string::npos);
}

TEST(ExperimentPlan, SyntaxErrorsNameTheFileAndLine) {
  const std::string message = error_of("name = \"x\"\nblock_minutes = = 3\n", "lab.toml");
  EXPECT_EQ(message.rfind("lab.toml:2:", 0), 0u) << message;
}

TEST(ExperimentPlan, ToJsonShowsTheDesignAndTheArms) {
  const ExperimentPlan plan = parse_experiment_plan("end_on = \"serialize\"\n" + std::string(kArms),
                                                    "e.toml", TurnOptions{});
  const nlohmann::json j = to_json(plan);
  EXPECT_EQ(j.at("name"), "e");
  EXPECT_EQ(j.at("end_arm"), "serialize");
  EXPECT_DOUBLE_EQ(j.at("block_s").get<double>(), 3600.0);
  ASSERT_EQ(j.at("arms").size(), 2u);
  EXPECT_EQ(j.at("arms")[0].at("name"), "concurrent");
  EXPECT_EQ(j.at("arms")[1].at("describe"), describe(plan.arms[1].turn));
  EXPECT_EQ(j.at("arms")[1].at("turn").at("policy"), "serialize");
}

TEST(ExperimentPlan, ValidateRefusesPlansBuiltInCode) {
  ExperimentPlan plan = parse_experiment_plan(std::string(kArms), "e.toml", TurnOptions{});
  EXPECT_NO_THROW(validate(plan));
  ExperimentPlan bad = plan;
  bad.alpha = 0.7;
  EXPECT_THROW(validate(bad), std::invalid_argument);
  bad = plan;
  bad.end_arm = 2;
  EXPECT_THROW(validate(bad), std::invalid_argument);
  bad = plan;
  bad.arms.pop_back();
  EXPECT_THROW(validate(bad), std::invalid_argument);
  bad = plan;
  bad.block_s = 0.0;
  EXPECT_THROW(validate(bad), std::invalid_argument);
}

}  // namespace
}  // namespace baton::experiment_plan_test
