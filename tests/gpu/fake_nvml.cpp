// A stand-in for libnvidia-ml.so.1, built by the tests as a shared library and loaded by
// path the way baton loads the real one (gpu/nvml_library.h). It exports the NVML functions
// baton resolves, with NVML's documented C signatures and results, over samples the test
// scripts through the fake_nvml_* functions. Built a second time with
// FAKE_NVML_NO_PROCESS_UTILIZATION, it lacks that function, as an old or broken library
// would.
// Thread-safety: every function takes one mutex (the sampler polls from its thread while
// the test adds samples from its own).
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

// NVML's return codes used here, and its sample record, as its API reference gives them.
constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotFound = 6;
constexpr int kInsufficientSize = 7;

struct Sample {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

struct State {
  std::mutex mu;
  int init_result = kSuccess;
  int initialised = 0;  // nvmlInit_v2 calls less nvmlShutdown calls
  int fail_next = kSuccess;
  bool paused = false;  // answers "no sample" until the test has added all it wants
  int utilization_calls = 0;
  unsigned long long last_since = 0;
  std::vector<Sample> samples;
};

State& state() {
  static State s;
  return s;
}

int device_token = 0;  // its address is the one device's handle
constexpr const char* kBusId = "0000:65:00.0";

}  // namespace

extern "C" {

int nvmlInit_v2() {
  std::lock_guard lock(state().mu);
  if (state().init_result == kSuccess) ++state().initialised;
  return state().init_result;
}

int nvmlShutdown() {
  std::lock_guard lock(state().mu);
  if (state().initialised == 0) return kUninitialized;
  --state().initialised;
  return kSuccess;
}

const char* nvmlErrorString(int code) {
  switch (code) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 15:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (device == nullptr || index != 0) return kInvalidArgument;
  *device = &device_token;
  return kSuccess;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (device == nullptr || bus_id == nullptr) return kInvalidArgument;
  if (std::strcmp(bus_id, kBusId) != 0) return kNotFound;
  *device = &device_token;
  return kSuccess;
}

#ifndef FAKE_NVML_NO_PROCESS_UTILIZATION
int nvmlDeviceGetProcessUtilization(void* device, Sample* utilization, unsigned int* count,
                                    unsigned long long last_seen) {
  std::lock_guard lock(state().mu);
  ++state().utilization_calls;
  state().last_since = last_seen;
  if (device != &device_token || count == nullptr) return kInvalidArgument;
  if (state().initialised == 0) return kUninitialized;
  if (const int code = state().fail_next; code != kSuccess) {
    state().fail_next = kSuccess;
    return code;
  }
  std::vector<Sample> newer;
  for (const Sample& s : state().samples) {
    if (!state().paused && s.timeStamp > last_seen) newer.push_back(s);
  }
  if (newer.empty()) return kNotFound;
  if (utilization == nullptr || *count < newer.size()) {
    *count = static_cast<unsigned int>(newer.size());
    return kInsufficientSize;
  }
  std::memcpy(utilization, newer.data(), newer.size() * sizeof(Sample));
  *count = static_cast<unsigned int>(newer.size());
  return kSuccess;
}
#endif

// The test's controls.
void fake_nvml_reset() {
  std::lock_guard lock(state().mu);
  state().init_result = kSuccess;
  state().fail_next = kSuccess;
  state().paused = false;
  state().utilization_calls = 0;
  state().last_since = 0;
  state().samples.clear();
}

void fake_nvml_set_init_result(int code) {
  std::lock_guard lock(state().mu);
  state().init_result = code;
}

void fake_nvml_add_sample(unsigned int pid, unsigned long long time_us, unsigned int sm,
                          unsigned int mem) {
  std::lock_guard lock(state().mu);
  state().samples.push_back({pid, time_us, sm, mem, 0, 0});
}

void fake_nvml_set_paused(int paused) {
  std::lock_guard lock(state().mu);
  state().paused = paused != 0;
}

void fake_nvml_fail_next(int code) {
  std::lock_guard lock(state().mu);
  state().fail_next = code;
}

int fake_nvml_initialised() {
  std::lock_guard lock(state().mu);
  return state().initialised;
}

int fake_nvml_utilization_calls() {
  std::lock_guard lock(state().mu);
  return state().utilization_calls;
}

unsigned long long fake_nvml_last_since() {
  std::lock_guard lock(state().mu);
  return state().last_since;
}

}  // extern "C"
