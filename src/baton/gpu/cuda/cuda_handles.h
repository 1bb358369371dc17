// RAII owners of CUDA resources: a stream, an event, a cuBLAS handle, device memory,
// pinned host memory and an instantiated graph.
// Constructors throw GpuError (cuda_error.h); destructors release and never throw (a
// failure there is reported to stderr: the context may already be lost).
// Thread-safety: each object belongs to one thread at a time, except where noted.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace baton::cuda {

class StreamHandle {
 public:
  explicit StreamHandle(int priority = 0);
  // Takes ownership of a stream created elsewhere (e.g. in a green context).
  static StreamHandle adopt(cudaStream_t stream) { return StreamHandle(stream, Adopt{}); }
  StreamHandle(StreamHandle&& other) noexcept : stream_(other.stream_) { other.stream_ = nullptr; }
  ~StreamHandle();
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  struct Adopt {};
  StreamHandle(cudaStream_t stream, Adopt) : stream_(stream) {}
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event();  // timing disabled: cheapest to record and query
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle();
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// For tests and checks: a buffer of bf16 values copied back and widened to floats
// (synchronous; throws GpuError).
std::vector<float> bf16_to_host_floats(const DeviceBuffer& buffer);

// Page-locked host memory: what asynchronous copies to and from the device need.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// An instantiated CUDA graph, made from a captured one (which it does not keep).
class GraphExec {
 public:
  explicit GraphExec(cudaGraph_t graph);
  ~GraphExec();
  GraphExec(GraphExec&& other) noexcept;
  GraphExec& operator=(GraphExec&&) = delete;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// For destructors: a failed release is worth a line on stderr, never an exception.
void report_release_failure(cudaError_t status, const char* what);

// True when the CUDA runtime sees at least one device; never throws.
bool device_present();

}  // namespace baton::cuda
