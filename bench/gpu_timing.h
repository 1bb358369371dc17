// Timing work on the GPU for the benchmarks: CUDA events around a run of launches, the
// median of 5 runs after an untimed one.
// Thread-safety: each call uses events of its own; the default stream is shared.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "baton/gpu/cuda/cuda_error.h"

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

}  // namespace baton::bench
