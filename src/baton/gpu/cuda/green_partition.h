// GreenPartition: the device's SMs split in two with CUDA green contexts (driver API,
// reached through cudaGetDriverEntryPointByVersion so that nothing links libcuda): a
// "prefill" side of about `prefill_sms` (rounded to the driver's granularity) and a
// "decode" side with the rest. Streams created in a side run only on its SMs.
// Thread-safety: immutable after construction; make_stream() from any thread.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>

namespace baton::cuda {

enum class Side { prefill, decode };

class GreenPartition {
 public:
  // Throws GpuError (class other) when the driver cannot split the device this way.
  explicit GreenPartition(int prefill_sms);
  ~GreenPartition();
  GreenPartition(const GreenPartition&) = delete;
  GreenPartition& operator=(const GreenPartition&) = delete;

  int sms(Side side) const { return side == Side::prefill ? prefill_sms_ : decode_sms_; }
  // A new non-blocking stream on `side`; the caller destroys it (cudaStreamDestroy).
  cudaStream_t make_stream(Side side) const;

 private:
  struct Driver;
  void release() noexcept;
  std::unique_ptr<Driver> driver_;
  void* contexts_[2] = {nullptr, nullptr};  // CUgreenCtx: prefill, decode
  int prefill_sms_ = 0;
  int decode_sms_ = 0;
};

// The partitions made so far, by prefill SM count; one that the driver refused is
// remembered as null, so it is tried once. Thread-safety: get() from any thread.
class PartitionCache {
 public:
  std::shared_ptr<const GreenPartition> get(int prefill_sms);

 private:
  std::mutex mu_;
  std::map<int, std::shared_ptr<const GreenPartition>> partitions_;  // guarded by mu_
};

}  // namespace baton::cuda
