#include "baton/gpu/cuda/cuda_handles.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "baton/gpu/cuda/cublas_library.h"
#include "baton/gpu/cuda/cuda_error.h"

namespace baton::cuda {

StreamHandle::StreamHandle(int priority) {
  BATON_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
}

StreamHandle::~StreamHandle() {
  if (stream_ != nullptr) report_release_failure(cudaStreamDestroy(stream_), "cudaStreamDestroy");
}

Event::Event() { BATON_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }

Event::~Event() {
  if (event_ != nullptr) report_release_failure(cudaEventDestroy(event_), "cudaEventDestroy");
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) report_release_failure(cudaEventDestroy(event_), "cudaEventDestroy");
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

CublasHandle::CublasHandle() { BATON_CUBLAS_CHECK(cublas_api().create(&handle_)); }

CublasHandle::~CublasHandle() {
  if (cublas_api().destroy(handle_) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "baton: cublasDestroy failed while releasing\n");
  }
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  BATON_CUDA_CHECK(cudaMalloc(&data_, bytes));
}

DeviceBuffer::~DeviceBuffer() { report_release_failure(cudaFree(data_), "cudaFree"); }

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  BATON_CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocDefault));
}

PinnedBuffer::~PinnedBuffer() { report_release_failure(cudaFreeHost(data_), "cudaFreeHost"); }

GraphExec::GraphExec(cudaGraph_t graph) {
  BATON_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
}

GraphExec::~GraphExec() {
  if (exec_ != nullptr) report_release_failure(cudaGraphExecDestroy(exec_), "cudaGraphExecDestroy");
}

GraphExec::GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

void report_release_failure(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "baton: %s failed while releasing: %s\n", what,
                 cudaGetErrorString(status));
  }
}

bool device_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::vector<float> bf16_to_host_floats(const DeviceBuffer& buffer) {
  std::vector<std::uint16_t> raw(buffer.bytes() / sizeof(std::uint16_t));
  BATON_CUDA_CHECK(cudaMemcpy(raw.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
  std::vector<float> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::uint32_t bits = std::uint32_t{raw[i]} << 16;  // bf16 is the top half of f32
    std::memcpy(&out[i], &bits, sizeof(float));
  }
  return out;
}

}  // namespace baton::cuda
