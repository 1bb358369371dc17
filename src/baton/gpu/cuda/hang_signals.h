// HangSignals: one stream's HangWords (fault_kernels.h) in pinned host memory, and the
// host's side of them: the reset raises `releases`, the completion thread arms a gate
// and reads which hang began.
// Thread-safety: release() and release_all() from any thread; arm(), disarm() and started()
// from the stream's completion thread; releases() from any thread. Host accesses are
// atomic; the device's are volatile over the bus.
#pragma once

#include <cstdint>

#include "baton/gpu/cuda/fault_kernels.h"

namespace baton::cuda {

class HangSignals {
 public:
  HangSignals();
  ~HangSignals();
  HangSignals(const HangSignals&) = delete;
  HangSignals& operator=(const HangSignals&) = delete;

  volatile HangWords* device() const { return device_; }
  std::uint32_t releases() const;
  // Ends every hang launched before now (a reset); release_all() also every later one.
  void release();
  void release_all();
  void arm(std::uint64_t newest_buffer);
  void disarm();
  std::uint64_t started() const;

 private:
  HangWords* host_ = nullptr;
  volatile HangWords* device_ = nullptr;
};

}  // namespace baton::cuda
