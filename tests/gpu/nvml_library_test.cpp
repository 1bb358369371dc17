// NVML opened at run time: the fake library (fake_nvml.cpp) loaded by path as the real one
// is by its soname, and the typed "unavailable" results for a library that is missing, one
// that lacks a function, and one whose nvmlInit_v2 fails.
#include "baton/gpu/nvml_library.h"

#include <gtest/gtest.h>

#include "gpu/fake_nvml.h"

namespace baton {
namespace {

using testing::FakeNvml;
using testing::kFakeNvml;
using testing::kFakeNvmlBusId;
using testing::kFakeNvmlPartial;

std::string unavailable(const NvmlOpenResult& result) {
  const auto* u = std::get_if<NvmlUnavailable>(&result);
  return u != nullptr ? u->message() : "available";
}

std::unique_ptr<NvmlLibrary> opened(NvmlOpenResult result) {
  if (auto* u = std::get_if<NvmlUnavailable>(&result)) ADD_FAILURE() << u->message();
  auto* library = std::get_if<std::unique_ptr<NvmlLibrary>>(&result);
  return library != nullptr ? std::move(*library) : nullptr;
}

TEST(NvmlLibrary, AMissingLibraryIsUnavailable) {
  const std::string message = unavailable(NvmlLibrary::open("/nonexistent/libnvidia-ml.so.1"));
  EXPECT_EQ(message.rfind("NVML unavailable: ", 0), 0u) << message;
  EXPECT_NE(message.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << message;
}

TEST(NvmlLibrary, ALibraryWithoutTheFunctionIsUnavailable) {
  EXPECT_EQ(unavailable(NvmlLibrary::open(kFakeNvmlPartial)),
            "NVML unavailable: " + kFakeNvmlPartial + " has no nvmlDeviceGetProcessUtilization");
}

TEST(NvmlLibrary, AFailedInitIsUnavailable) {
  FakeNvml fake;
  fake.set_init_result(9);
  EXPECT_EQ(unavailable(NvmlLibrary::open(kFakeNvml)),
            "NVML unavailable: nvmlInit_v2: Driver Not Loaded (9)");
  EXPECT_EQ(fake.initialised(), 0);
}

TEST(NvmlLibrary, FindsTheDeviceByBusIdAndShutsDownWhenDestroyed) {
  FakeNvml fake;
  {
    const auto nvml = opened(NvmlLibrary::open(kFakeNvml));
    ASSERT_NE(nvml, nullptr);
    EXPECT_EQ(fake.initialised(), 1);
    EXPECT_NE(nvml->device(kFakeNvmlBusId).handle, nullptr);
    EXPECT_NE(nvml->device("").handle, nullptr);  // NVML's device 0
    try {
      (void)nvml->device("0000:01:00.0");
      ADD_FAILURE() << "no such device, yet found";
    } catch (const NvmlError& e) {
      EXPECT_EQ(e.code(), 6);
      EXPECT_STREQ(e.what(),
                   "[nvml] nvmlDeviceGetHandleByPciBusId_v2(0000:01:00.0): Not Found (6)");
    }
  }
  EXPECT_EQ(fake.initialised(), 0);
}

TEST(NvmlLibrary, ReadsTheSamplesNewerThanItsTimestampAfterSizingTheBuffer) {
  FakeNvml fake;
  fake.add_sample(10, 100, 50, 5);
  fake.add_sample(11, 200, 90, 1);
  fake.add_sample(10, 300, 70, 7);
  const auto nvml = opened(NvmlLibrary::open(kFakeNvml));
  ASSERT_NE(nvml, nullptr);
  const NvmlDevice device = nvml->device(kFakeNvmlBusId);
  const std::vector<NvmlProcessSample> samples = nvml->process_utilization(device, 150);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].pid, 11u);
  EXPECT_EQ(samples[0].time_us, 200u);
  EXPECT_EQ(samples[0].sm_percent, 90u);
  EXPECT_EQ(samples[0].mem_percent, 1u);
  EXPECT_EQ(samples[1].pid, 10u);
  EXPECT_EQ(samples[1].time_us, 300u);
  EXPECT_EQ(samples[1].sm_percent, 70u);
  EXPECT_EQ(samples[1].mem_percent, 7u);
  EXPECT_EQ(fake.utilization_calls(), 2);  // the size, then the samples
  EXPECT_EQ(fake.last_since(), 150u);
  EXPECT_TRUE(nvml->process_utilization(device, 300).empty());  // NVML_ERROR_NOT_FOUND
}

TEST(NvmlLibrary, AFailedCallIsATypedError) {
  FakeNvml fake;
  const auto nvml = opened(NvmlLibrary::open(kFakeNvml));
  ASSERT_NE(nvml, nullptr);
  fake.fail_next(15);
  try {
    (void)nvml->process_utilization(nvml->device(kFakeNvmlBusId), 0);
    ADD_FAILURE() << "the call failed, yet returned";
  } catch (const NvmlError& e) {
    EXPECT_EQ(e.code(), 15);
    EXPECT_STREQ(e.what(), "[nvml] nvmlDeviceGetProcessUtilization: GPU is lost (15)");
  }
}

}  // namespace
}  // namespace baton
