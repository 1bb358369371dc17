// KV cache sizing from the device's free memory: what `kv_budget_mb = "auto"` (a chat
// model's default on a GPU) gets when the model loads. As vLLM's gpu_memory_utilization:
// of `gpu_memory_fraction` of the device's total memory, what is not in use already (by
// other models, other processes) less the model's own weights and those of the sized
// models still to load, split evenly between the sized models that hold no cache yet, and
// never more than max_batch sequences of the model's context need. Less than one such
// sequence is a ConfigError naming the numbers.
// Thread-safety: size_kv_budget() is pure; KvSizer's members are thread-safe (one mutex,
// held by a sized load from reading the free memory until its cache is allocated).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "baton/gpu/device.h"

namespace baton {

// What one model's cache must hold.
struct KvDemand {
  std::string model;
  std::uint64_t weight_bytes = 0;     // its weights on the device, not yet uploaded
  std::uint64_t bytes_per_token = 0;  // keys and values of every layer
  std::uint64_t context_tokens = 0;   // one sequence at its context length: the floor
  int max_batch = 1;                  // sequences at once: the ceiling is max_batch of them
};

struct KvSize {
  std::uint64_t budget_bytes = 0;
  std::string how;  // for the start-up line, e.g. "auto: 0.9 of 139.8 GB, 1.2 GB in use, ..."
};

// `models_to_size`: the sized models that hold no cache yet, this one included (>= 1);
// `weights_to_come`: the weights of those others, not yet on the device.
KvSize size_kv_budget(const DeviceMemory& memory, double fraction, const KvDemand& demand,
                      int models_to_size, std::uint64_t weights_to_come);

// Knows which of the configured sized models hold a cache, so that each load takes its
// even share of what is left and leaves the others theirs.
class KvSizer {
 public:
  // `sized_models`: each sized model's name and its weights' bytes on the device (an
  // estimate from its files is enough).
  KvSizer(const std::map<std::string, std::uint64_t>& sized_models, double fraction);
  // A size, and the sizer held until the caller has allocated it (drop `hold` then), so
  // that two loads at once never count the same free memory.
  struct Sized {
    KvSize size;
    std::unique_lock<std::mutex> hold;
  };
  // Reads the memory, sizes `demand.model`'s cache and counts it as holding one (until
  // release()). Throws what size_kv_budget() and `read_memory` throw.
  Sized size(const std::function<DeviceMemory()>& read_memory, const KvDemand& demand);
  // The model's cache is gone (unloaded): its share goes back to those still to be sized.
  void release(const std::string& model);

 private:
  const double fraction_;
  mutable std::mutex mu_;
  std::map<std::string, std::uint64_t> weights_;  // of the sized models; guarded by mu_
  std::set<std::string> waiting_;  // sized models holding no cache; guarded by mu_
};

}  // namespace baton
