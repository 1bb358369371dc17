// NvmlLibrary: NVIDIA's management library (libnvidia-ml.so.1), opened at run time with
// dlopen and never linked, so that baton builds and runs where there is none. Only the
// few functions the per-process GPU sampler needs are resolved: nvmlInit_v2,
// nvmlShutdown, nvmlErrorString, nvmlDeviceGetHandleByIndex_v2,
// nvmlDeviceGetProcessUtilization and, when the library has it,
// nvmlDeviceGetHandleByPciBusId_v2. Their types are declared in nvml_library.cpp from
// NVML's public API reference, not from nvml.h.
// A missing library, a missing function or a failed nvmlInit_v2 is an NvmlUnavailable
// result, never an exception or a crash; a later call that fails throws NvmlError.
// Thread-safety: NVML's functions are thread-safe, and so is every const member here;
// construct and destroy from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace baton {

// The soname the NVIDIA driver installs.
inline constexpr const char* kNvmlLibraryName = "libnvidia-ml.so.1";

// Why NVML cannot be used here: "NVML unavailable: libnvidia-ml.so.1: cannot open ...".
struct NvmlUnavailable {
  std::string reason;
  std::string message() const { return "NVML unavailable: " + reason; }
};

// An NVML call that failed after the library was opened: "[nvml] FUNCTION: TEXT (CODE)".
class NvmlError : public std::runtime_error {
 public:
  NvmlError(const std::string& function, int code, const std::string& text)
      : std::runtime_error("[nvml] " + function + ": " + text + " (" + std::to_string(code) + ")"),
        code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// One per-process utilisation sample as NVML reports it: the share of its last sample
// period during which the process had a kernel running (sm) or memory being read or written
// (mem), in percent, at a CPU time in microseconds since the Unix epoch.
struct NvmlProcessSample {
  std::uint32_t pid = 0;
  std::uint64_t time_us = 0;
  std::uint32_t sm_percent = 0;
  std::uint32_t mem_percent = 0;
};

// A device of the library that found it; valid while the library is open.
struct NvmlDevice {
  void* handle = nullptr;
};

class NvmlLibrary;
using NvmlOpenResult = std::variant<std::unique_ptr<NvmlLibrary>, NvmlUnavailable>;

class NvmlLibrary {
 public:
  // Opens the library at `path` (a soname is looked up as dlopen does), resolves its
  // functions and initialises NVML. Never throws for a library that is absent or unusable.
  [[nodiscard]] static NvmlOpenResult open(const std::string& path = kNvmlLibraryName);
  ~NvmlLibrary();  // nvmlShutdown, then dlclose
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // The device at PCI bus id "0000:01:00.0" (what CUDA reports for the device it uses),
  // or, when `pci_bus_id` is empty or the library cannot look one up by it, the device
  // NVML numbers 0. Throws NvmlError.
  NvmlDevice device(const std::string& pci_bus_id) const;
  // Every sample NVML holds for `device` newer than `since_us`; empty when there is none
  // (NVML_ERROR_NOT_FOUND). Throws NvmlError.
  std::vector<NvmlProcessSample> process_utilization(NvmlDevice device,
                                                     std::uint64_t since_us) const;

  struct Functions;  // the resolved entry points (nvml_library.cpp)

 private:
  struct Closer {
    void operator()(void* handle) const;
  };
  NvmlLibrary(std::unique_ptr<void, Closer> handle, std::unique_ptr<Functions> functions);
  std::string error_text(int code) const;

  std::unique_ptr<void, Closer> handle_;  // dlclose'd last
  std::unique_ptr<Functions> functions_;
};

}  // namespace baton
