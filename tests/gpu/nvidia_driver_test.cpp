// The driver's version from /proc/driver/nvidia/version, as the proprietary and the open
// kernel modules write it (lines copied from an H200 machine and from NVIDIA's open module).
#include "baton/gpu/nvidia_driver.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(NvidiaDriver, TheVersionAfterKernelModule) {
  EXPECT_EQ(nvidia_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  "
                                  "Thu Jan 15 20:40:27 UTC 2026\nGCC version:  gcc version 12\n"),
            "580.159.04");
  EXPECT_EQ(nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                  "570.86.15  Release Build  (dvs-builder@U16)"),
            "570.86.15");
}

TEST(NvidiaDriver, NoVersionIsEmpty) {
  EXPECT_EQ(nvidia_driver_version(""), "");
  EXPECT_EQ(nvidia_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module"), "");
  EXPECT_EQ(nvidia_driver_version("something else entirely"), "");
}

}  // namespace
}  // namespace baton
