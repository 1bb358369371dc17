#include "baton/gpu/cuda/cuda_handles.h"

#include <atomic>
#include <cstdio>
#include <utility>

#include "baton/gpu/cuda/cuda_error.h"

namespace baton::cuda {
namespace {

// Destructors must not throw; a failure to release is worth a line on stderr.
void report(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "baton: %s failed while releasing: %s\n", what,
                 cudaGetErrorString(status));
  }
}

}  // namespace

StreamHandle::StreamHandle(int priority) {
  BATON_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
}

StreamHandle::~StreamHandle() {
  if (stream_ != nullptr) report(cudaStreamDestroy(stream_), "cudaStreamDestroy");
}

Event::Event() { BATON_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }

Event::~Event() {
  if (event_ != nullptr) report(cudaEventDestroy(event_), "cudaEventDestroy");
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) report(cudaEventDestroy(event_), "cudaEventDestroy");
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

CublasHandle::CublasHandle() { BATON_CUBLAS_CHECK(cublasCreate(&handle_)); }

CublasHandle::~CublasHandle() {
  if (cublasDestroy(handle_) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "baton: cublasDestroy failed while releasing\n");
  }
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  BATON_CUDA_CHECK(cudaMalloc(&data_, bytes));
}

DeviceBuffer::~DeviceBuffer() { report(cudaFree(data_), "cudaFree"); }

MappedCounter::MappedCounter() {
  void* host = nullptr;
  BATON_CUDA_CHECK(cudaHostAlloc(&host, sizeof(std::uint32_t), cudaHostAllocMapped));
  host_ = static_cast<volatile std::uint32_t*>(host);
  *host_ = 0;
  void* device = nullptr;
  BATON_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_ = static_cast<volatile std::uint32_t*>(device);
}

MappedCounter::~MappedCounter() {
  report(cudaFreeHost(const_cast<std::uint32_t*>(host_)), "cudaFreeHost");
}

std::uint32_t MappedCounter::value() const { return *host_; }

void MappedCounter::raise_to(std::uint32_t value) {
  *host_ = value;
  std::atomic_thread_fence(std::memory_order_seq_cst);  // visible to the spinning kernel
}

bool device_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace baton::cuda
