// RAII owners of CUDA resources: a stream, an event, a cuBLAS handle, device memory and a
// host-mapped counter. Constructors throw GpuError (cuda_error.h); destructors release and
// never throw (a failure there is reported to stderr: the context may already be lost).
// Thread-safety: each object belongs to one thread at a time, except where noted.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

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

// A 32-bit counter in pinned host memory that kernels read through its device alias.
// The host raises it (release()) while a kernel spins on it: how an injected hang ends.
// Thread-safety: release() and value() from any thread.
class MappedCounter {
 public:
  MappedCounter();
  ~MappedCounter();
  MappedCounter(const MappedCounter&) = delete;
  MappedCounter& operator=(const MappedCounter&) = delete;
  const volatile std::uint32_t* device_alias() const { return device_; }
  std::uint32_t value() const;
  void raise_to(std::uint32_t value);

 private:
  volatile std::uint32_t* host_ = nullptr;
  volatile std::uint32_t* device_ = nullptr;
};

// True when the CUDA runtime sees at least one device; never throws.
bool device_present();

}  // namespace baton::cuda
