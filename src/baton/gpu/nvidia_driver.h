// The NVIDIA driver's version ("580.159.04"), as the kernel module reports it in
// /proc/driver/nvidia/version: what a ledger run records so that hangs can be compared
// across driver versions (analyze --by driver). Read from the file, not through NVML or the
// CUDA driver API, so that it needs no library and reads the same whoever asks.
// Thread-safety: pure functions, and a read of one file.
#pragma once

#include <string>
#include <string_view>

namespace baton {

// The version in the text of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX
// x86_64 Kernel Module  580.159.04  Wed ..."); empty when it names none.
std::string nvidia_driver_version(std::string_view proc_text);

// The installed driver's version; empty when there is no NVIDIA driver (no such file).
std::string installed_nvidia_driver();

}  // namespace baton
