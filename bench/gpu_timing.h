// Timing work on the GPU for the benchmarks: CUDA events around a run of launches, the
// median of 5 runs after an untimed one; and the device's copy rate timed so.
// Thread-safety: each call uses events of its own; the default stream is shared.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"

namespace baton::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

class TimingEvent {
 public:
  TimingEvent() { BATON_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~TimingEvent() { (void)cudaEventDestroy(event_); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds of `repeats` calls of `work` on the default stream, the median of 5 timings
// after one untimed pass.
inline double milliseconds(const std::function<void(int)>& work, int repeats) {
  TimingEvent start, stop;
  for (int i = 0; i < repeats; ++i) work(i);
  std::vector<double> times;
  for (int round = 0; round < 5; ++round) {
    BATON_CUDA_CHECK(cudaEventRecord(start.get()));
    for (int i = 0; i < repeats; ++i) work(i);
    BATON_CUDA_CHECK(cudaEventRecord(stop.get()));
    BATON_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.0f;
    BATON_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    times.push_back(ms / repeats);
  }
  return median(times);
}

// cudaMemcpy's device-to-device rate over `bytes` buffers, bytes read plus written per
// second in GB/s: the bound of work that streams memory (median of 5 runs of 2 copies).
inline double copy_rate_gbs(std::size_t bytes) {
  const cuda::DeviceBuffer from(bytes), to(bytes);
  BATON_CUDA_CHECK(cudaMemset(from.get(), 1, bytes));
  const double ms = milliseconds(
      [&](int) {
        BATON_CUDA_CHECK(cudaMemcpy(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice));
      },
      2);
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

}  // namespace baton::bench
