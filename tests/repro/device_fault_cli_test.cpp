// A device fault in a child process, end to end: `baton repro` sees it as fatal, records
// it and closes its ledger run, exits 70, and `baton supervise` restarts it. On CUDA the
// fault is real (a kernel writes to an illegal address: a sticky error that poisons the
// context, which is why it runs in a child); the CPU backend fails the buffer the same way.
#include <gtest/gtest.h>

#include <string>

#include "baton/ledger/ledger_reader.h"
#include "cli_util.h"
#include "temp_ledger_path.h"
#ifdef BATON_HAVE_CUDA
#include "baton/gpu/cuda/cuda_handles.h"
#endif

namespace baton {
namespace {

using testing::CommandResult;
using testing::run_baton;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class DeviceFault : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cuda") {
#ifdef BATON_HAVE_CUDA
      if (!cuda::device_present()) GTEST_SKIP() << "no CUDA device visible";
#else
      GTEST_SKIP() << "built without CUDA";
#endif
    }
  }
  std::string repro(const std::string& ledger) const {
    return "repro --backend " + GetParam() +
           " --engine decode --engine prefill --duration 60 --inject-device-fault-after 0.5"
           " --ledger " + ledger;
  }
};

TEST_P(DeviceFault, IsFatalTheLedgerIsClosedAndSuperviseRestarts) {
  testing::TempLedgerPath ledger;
  const CommandResult r = run_baton(repro(ledger.path().string()), 120);
  ASSERT_EQ(r.exit_code, 70) << r.output;
  EXPECT_TRUE(contains(r.output, "the device can no longer be used")) << r.output;
  if (GetParam() == "cuda") {
    EXPECT_TRUE(contains(r.output, "cudaErrorIllegalAddress")) << r.output;
  }

  LedgerContents contents = read_ledger(ledger.path());
  ASSERT_EQ(contents.runs.size(), 1u);
  EXPECT_EQ(contents.runs[0].exit_code, 70);
  EXPECT_TRUE(contents.runs[0].stop.has_value());
  bool recorded = false;
  for (const HangRecord& event : contents.input.hangs) {
    recorded = recorded || event.error_class == "submissions_ignored";
  }
  EXPECT_TRUE(recorded) << "the fatal event is not in the ledger";

  const CommandResult s = run_baton("supervise --backoff 10ms --max-restarts 1 -- " +
                                        std::string(BATON_BINARY) + " " +
                                        repro(ledger.path().string()),
                                    240);
  EXPECT_EQ(s.exit_code, 70) << s.output;
  EXPECT_TRUE(contains(s.output, "restart 1 of 1")) << s.output;
  EXPECT_TRUE(contains(s.output, "giving up")) << s.output;
  contents = read_ledger(ledger.path());
  ASSERT_EQ(contents.runs.size(), 3u);  // the first run, then one start and one restart
  for (const LedgerRun& run : contents.runs) EXPECT_EQ(run.exit_code, 70);
}

std::string backend_name(const ::testing::TestParamInfo<std::string>& backend) {
  return backend.param;
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceFault,
                         ::testing::Values(std::string("cpu"), std::string("cuda")), backend_name);

}  // namespace
}  // namespace baton
