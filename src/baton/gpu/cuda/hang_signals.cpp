#include "baton/gpu/cuda/hang_signals.h"

#include <atomic>
#include <limits>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"

namespace baton::cuda {

HangSignals::HangSignals() {
  void* host = nullptr;
  BATON_CUDA_CHECK(cudaHostAlloc(&host, sizeof(HangWords), cudaHostAllocMapped));
  host_ = static_cast<HangWords*>(host);
  *host_ = HangWords{};
  void* device = nullptr;
  BATON_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_ = static_cast<volatile HangWords*>(device);
}

HangSignals::~HangSignals() { report_release_failure(cudaFreeHost(host_), "cudaFreeHost"); }

std::uint32_t HangSignals::releases() const {
  return std::atomic_ref(host_->releases).load(std::memory_order_acquire);
}

void HangSignals::release() {
  std::atomic_ref(host_->releases).fetch_add(1, std::memory_order_seq_cst);
}

void HangSignals::release_all() {
  std::atomic_ref(host_->releases)
      .store(std::numeric_limits<std::uint32_t>::max(), std::memory_order_seq_cst);
}

void HangSignals::arm(std::uint64_t newest_buffer) {
  std::atomic_ref(host_->armed).store(newest_buffer, std::memory_order_seq_cst);
}

void HangSignals::disarm() { std::atomic_ref(host_->armed).store(0, std::memory_order_seq_cst); }

std::uint64_t HangSignals::started() const {
  return std::atomic_ref(host_->started).load(std::memory_order_acquire);
}

}  // namespace baton::cuda
