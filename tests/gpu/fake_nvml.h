// The test's hold on the fake NVML (fake_nvml.cpp): it loads the same shared library that
// NvmlLibrary::open(kFakeNvml) loads, so both see one state, and scripts it. Constructing
// one resets the fake.
// Thread-safety: the fake's functions are thread-safe; this object belongs to the test.
#pragma once

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace baton::testing {

inline const std::string kFakeNvml = FAKE_NVML;                 // every function
inline const std::string kFakeNvmlPartial = FAKE_NVML_PARTIAL;  // no process utilisation
inline const std::string kFakeNvmlBusId = "0000:65:00.0";       // its one device

class FakeNvml {
 public:
  FakeNvml() : handle_(dlopen(kFakeNvml.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) throw std::runtime_error("cannot load " + kFakeNvml);
    resolve("fake_nvml_reset", reset_);
    resolve("fake_nvml_set_init_result", set_init_result);
    resolve("fake_nvml_add_sample", add_sample);
    resolve("fake_nvml_fail_next", fail_next);
    resolve("fake_nvml_set_paused", set_paused);
    resolve("fake_nvml_initialised", initialised);
    resolve("fake_nvml_utilization_calls", utilization_calls);
    resolve("fake_nvml_last_since", last_since);
    reset_();
  }
  ~FakeNvml() { dlclose(handle_); }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  // Microseconds since the Unix epoch now, as NVML stamps its samples.
  static std::uint64_t now_us() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  }

  void (*set_init_result)(int) = nullptr;
  void (*add_sample)(unsigned int pid, unsigned long long time_us, unsigned int sm,
                     unsigned int mem) = nullptr;
  void (*fail_next)(int) = nullptr;
  void (*set_paused)(int) = nullptr;  // 1: no sample is seen until 0
  int (*initialised)() = nullptr;
  int (*utilization_calls)() = nullptr;
  unsigned long long (*last_since)() = nullptr;

 private:
  template <typename Fn>
  void resolve(const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    if (fn == nullptr) throw std::runtime_error(std::string("fake NVML lacks ") + name);
  }

  void* handle_;
  void (*reset_)() = nullptr;
};

}  // namespace baton::testing
