#include "baton/gpu/nvml_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>

namespace baton {
// NVML's ABI, as its API reference documents it: nvmlReturn_t is a C enum (an int),
// nvmlDevice_t an opaque pointer, and nvmlProcessUtilizationSample_t this struct.
namespace nvml_abi {

using NvmlReturn = int;
constexpr NvmlReturn kSuccess = 0;
constexpr NvmlReturn kNotFound = 6;
constexpr NvmlReturn kInsufficientSize = 7;

struct NvmlDeviceOpaque;
using NvmlDeviceHandle = NvmlDeviceOpaque*;

struct NvmlProcessUtilizationSampleAbi {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU time, microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
static_assert(sizeof(NvmlProcessUtilizationSampleAbi) == 32);
static_assert(offsetof(NvmlProcessUtilizationSampleAbi, timeStamp) == 8);

// Samples NVML may add between the call that sizes the buffer and the one that fills it.
constexpr int kSizingAttempts = 4;

}  // namespace nvml_abi

using namespace nvml_abi;

struct NvmlLibrary::Functions {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*by_index)(unsigned int, NvmlDeviceHandle*) = nullptr;
  NvmlReturn (*by_pci_bus_id)(const char*, NvmlDeviceHandle*) = nullptr;  // may be absent
  NvmlReturn (*process_utilization)(NvmlDeviceHandle, NvmlProcessUtilizationSampleAbi*,
                                    unsigned int*, unsigned long long) = nullptr;
};

namespace {

template <typename Fn>
void resolve(void* handle, const char* name, Fn& fn) {
  // POSIX guarantees that dlsym's object pointer converts to a function pointer.
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
}

// The name of the first required function the library lacks; empty if it has them all.
std::string missing_function(const NvmlLibrary::Functions& f) {
  if (f.init == nullptr) return "nvmlInit_v2";
  if (f.shutdown == nullptr) return "nvmlShutdown";
  if (f.error_string == nullptr) return "nvmlErrorString";
  if (f.by_index == nullptr) return "nvmlDeviceGetHandleByIndex_v2";
  if (f.process_utilization == nullptr) return "nvmlDeviceGetProcessUtilization";
  return {};
}

}  // namespace

void NvmlLibrary::Closer::operator()(void* handle) const {
  if (handle != nullptr) dlclose(handle);
}

NvmlOpenResult NvmlLibrary::open(const std::string& path) {
  std::unique_ptr<void, Closer> handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) {
    const char* why = dlerror();
    return NvmlUnavailable{.reason =
                               why != nullptr ? std::string(why) : path + ": cannot be opened"};
  }
  auto f = std::make_unique<Functions>();
  resolve(handle.get(), "nvmlInit_v2", f->init);
  resolve(handle.get(), "nvmlShutdown", f->shutdown);
  resolve(handle.get(), "nvmlErrorString", f->error_string);
  resolve(handle.get(), "nvmlDeviceGetHandleByIndex_v2", f->by_index);
  resolve(handle.get(), "nvmlDeviceGetHandleByPciBusId_v2", f->by_pci_bus_id);
  resolve(handle.get(), "nvmlDeviceGetProcessUtilization", f->process_utilization);
  if (const std::string missing = missing_function(*f); !missing.empty()) {
    return NvmlUnavailable{.reason = path + " has no " + missing};
  }
  if (const NvmlReturn code = f->init(); code != kSuccess) {
    const char* text = f->error_string(code);
    return NvmlUnavailable{.reason =
                               "nvmlInit_v2: " + std::string(text != nullptr ? text : "error") +
                               " (" + std::to_string(code) + ")"};
  }
  return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(std::move(handle), std::move(f)));
}

NvmlLibrary::NvmlLibrary(std::unique_ptr<void, Closer> handle, std::unique_ptr<Functions> functions)
    : handle_(std::move(handle)), functions_(std::move(functions)) {}

NvmlLibrary::~NvmlLibrary() {
  // Its result is of no use at exit: the library is closed next either way.
  (void)functions_->shutdown();
}

std::string NvmlLibrary::error_text(int code) const {
  const char* text = functions_->error_string(code);
  return text != nullptr ? text : "unknown error";
}

NvmlDevice NvmlLibrary::device(const std::string& pci_bus_id) const {
  NvmlDeviceHandle handle = nullptr;
  if (!pci_bus_id.empty() && functions_->by_pci_bus_id != nullptr) {
    const NvmlReturn code = functions_->by_pci_bus_id(pci_bus_id.c_str(), &handle);
    if (code != kSuccess) {
      throw NvmlError("nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ")", code,
                      error_text(code));
    }
    return {.handle = handle};
  }
  const NvmlReturn code = functions_->by_index(0, &handle);
  if (code != kSuccess) throw NvmlError("nvmlDeviceGetHandleByIndex_v2(0)", code, error_text(code));
  return {.handle = handle};
}

std::vector<NvmlProcessSample> NvmlLibrary::process_utilization(NvmlDevice device,
                                                                std::uint64_t since_us) const {
  const auto handle = static_cast<NvmlDeviceHandle>(device.handle);
  std::vector<NvmlProcessUtilizationSampleAbi> buffer;
  for (int attempt = 0; attempt < kSizingAttempts; ++attempt) {
    // First the count NVML wants room for (a null buffer), then the samples; a count
    // that grew in between asks again.
    auto count = static_cast<unsigned int>(buffer.size());
    const NvmlReturn code = functions_->process_utilization(
        handle, buffer.empty() ? nullptr : buffer.data(), &count, since_us);
    if (code == kNotFound) return {};
    if (code == kInsufficientSize || (code == kSuccess && buffer.empty() && count > 0)) {
      buffer.resize(std::max<std::size_t>(count, buffer.size() + 1));
      continue;
    }
    if (code != kSuccess) {
      throw NvmlError("nvmlDeviceGetProcessUtilization", code, error_text(code));
    }
    std::vector<NvmlProcessSample> samples;
    for (const auto& s : buffer) {
      if (samples.size() == count) break;
      samples.push_back({s.pid, s.timeStamp, s.smUtil, s.memUtil});
    }
    return samples;
  }
  throw NvmlError("nvmlDeviceGetProcessUtilization", kInsufficientSize,
                  "the sample count kept growing");
}

}  // namespace baton
