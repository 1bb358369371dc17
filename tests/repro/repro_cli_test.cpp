// End-to-end checks of the `baton repro` command line: exit codes and the JSON shape.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"
#ifdef BATON_HAVE_CUDA
#include "baton/gpu/cuda/cuda_handles.h"
#endif

namespace {

using baton::testing::CommandResult;
using baton::testing::run_baton;

TEST(ReproCli, BadArgumentsExitWithCode2AndAClearMessage) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"repro --engine decode --policy fastest", "--policy"},
      {"repro --engine decode --quantum token", "--quantum"},
      {"repro --engine dance", "expected decode, prefill[:TOKENS] or embed"},
      {"repro --engine llm:", "llm: needs a model directory"},
      {"repro --engine llm:/nonexistent/model", "/nonexistent/model"},
      {"repro --engine llm:/x:0", "TOKENS must be an integer"},
      {"repro --engine prefill:zero", "TOKENS must be an integer"},
      {"repro --engine decode:8", "only prefill takes :TOKENS"},
      {"repro --engine decode --duration -1", "--duration"},
      {"repro --duration 1", "--engine is required"},
      {"repro --engine decode --backend metal", "--backend"},
      {"repro --engine prefill/0", "/OPS must be"},
      {"repro --engine decode@0", "@SMS must be"},
      {"repro --engine decode --duration nan", "--duration"},
      {"repro --engine decode --duration inf", "--duration"},
      {"repro --engine decode --inject-hang-rate nan", "--inject-hang-rate"},
      {"repro --engine decode --watchdog-deadline nan", "--watchdog-deadline"},
      {"repro --engine decode --max-hold-ms 0", "--max-hold-ms"},
      {"repro --engine decode --prefill-share half", "neither weights, auto nor a number"},
      {"repro --engine decode --prefill-share 0", "neither weights, auto nor a number"},
      {"repro --engine llm:/x:128+weight=high", "+weight=W takes W as a number in 0.01..100"},
      {"repro --engine llm:/x+weight=101", "+weight=W takes W as a number in 0.01..100"},
      {"repro --engine decode+weight=0", "+weight=W takes W as a number in 0.01..100"},
      {"repro --engine llm:/x+priority=1", "+priority=N was replaced by +weight=W"},
      {"no-such-verb", "no-such-verb"},
  };
  for (const auto& c : cases) {
    const CommandResult r = run_baton(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(ReproCli, TheCudaBackendWithoutAGpuIsAUsageError) {
#ifdef BATON_HAVE_CUDA
  if (baton::cuda::device_present()) GTEST_SKIP() << "a CUDA device is visible";
#endif
  const CommandResult r = run_baton("repro --engine decode --backend cuda --duration 0.2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cuda backend"), std::string::npos) << r.output;
}

TEST(ReproCli, JsonReportHasTheDocumentedKeys) {
  const CommandResult r = run_baton(
      "repro --backend cpu --policy serialize --quantum layer --decode-first --engine decode "
      "--engine embed --duration 0.6 --seed 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("policy"), "serialize");
  EXPECT_EQ(j.at("quantum"), "layer");
  EXPECT_EQ(j.at("decode_first"), true);
  EXPECT_GE(j.at("duration_s").get<double>(), 0.6);
  const CommandResult fifo = run_baton(
      "repro --backend cpu --policy serialize --decode-first=false --engine decode "
      "--duration 0.3 --json");
  ASSERT_EQ(fifo.exit_code, 0) << fifo.output;
  EXPECT_EQ(nlohmann::json::parse(fifo.output).at("decode_first"), false);
  EXPECT_EQ(j.at("overlap_s").get<double>(), 0.0);
  ASSERT_EQ(j.at("engines").size(), 2u);
  const auto& decode = j.at("engines").at(0);
  EXPECT_EQ(decode.at("name"), "decode-1");
  EXPECT_EQ(decode.at("kind"), "decode");
  EXPECT_GT(decode.at("steps").get<int>(), 0);
  EXPECT_GT(decode.at("step_ms").at("p50").get<double>(), 0.0);
  EXPECT_GE(decode.at("step_ms").at("p99").get<double>(),
            decode.at("step_ms").at("p50").get<double>());
  EXPECT_EQ(j.at("engines").at(1).at("kind"), "embed");
  EXPECT_TRUE(j.at("turn").contains("handovers"));
  EXPECT_TRUE(j.at("turn").contains("handover_us_p50"));
}

TEST(ReproCli, AFatalDeviceStateEndsTheProcessWithCode70) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_baton(
      "repro --engine decode --engine embed --duration 30 --inject-fatal-after 0.3 --json");
  EXPECT_EQ(r.exit_code, 70) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20))
      << "the run did not end early";
  EXPECT_NE(r.output.find("exiting with 70"), std::string::npos) << r.output;
  const auto json_start = r.output.find('{');
  ASSERT_NE(json_start, std::string::npos);
  const auto json_end = r.output.rfind('}');
  const nlohmann::json j =
      nlohmann::json::parse(r.output.substr(json_start, json_end - json_start + 1));
  EXPECT_EQ(j.at("faults").at("fatal"), true);
  EXPECT_EQ(j.at("faults").at("by_class").at("submissions_ignored").at("detected"), 1);
}

TEST(ReproCli, JsonReportsInjectedAndDetectedFaults) {
  const CommandResult r = run_baton(
      "repro --engine decode --engine decode --duration 3 --inject-hang-rate 2 "
      "--watchdog-deadline 0.2 --fault-seed 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  const auto& faults = j.at("faults");
  for (const char* key : {"injected", "detected", "recovered", "fatal", "by_class"}) {
    EXPECT_TRUE(faults.contains(key)) << key;
  }
  const auto& hang = faults.at("by_class").at("hang");
  EXPECT_GT(hang.at("injected").get<int>(), 0);
  EXPECT_EQ(hang.at("detected"), hang.at("injected"));
  EXPECT_TRUE(j.at("detect_latency_ms").contains("p50"));
  EXPECT_TRUE(j.at("detect_latency_ms").contains("max"));
  int blamed = 0;
  for (const auto& e : j.at("engines")) blamed += e.at("hangs").get<int>();
  EXPECT_EQ(blamed, hang.at("detected").get<int>());
}

TEST(ReproCli, HelpExitsWithZeroAndSaysWhatEachFlagDoes) {
  const CommandResult r = run_baton("repro --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--quantum"), std::string::npos);
  EXPECT_NE(r.output.find("serialize/op"), std::string::npos) << r.output;  // --compare
  EXPECT_NE(r.output.find("/OPS"), std::string::npos) << r.output;          // --engine
  EXPECT_NE(r.output.find("on the CPU backend"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--no-gpu-sampling"), std::string::npos) << r.output;
}

TEST(ReproCli, PartitionOnTheCpuSaysWhatItDoes) {
  const CommandResult r =
      run_baton("repro --policy partition --engine decode --engine prefill --duration 0.2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("partition on the cpu backend runs the engines side by side"),
            std::string::npos)
      << r.output;
}

}  // namespace
