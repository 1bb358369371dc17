// CudaWorkspace: the scratch memory of one runner's steps, device and pinned host, by slot.
// Each slot grows when a step needs more (by half again, so that growing steps do not
// reallocate every time) and never shrinks. Growing frees the old buffer, which waits for
// the device; it happens only in begin(), while none of this runner's work is in flight.
// Thread-safety: none; one runner's steps, one at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "baton/gpu/cuda/cuda_handles.h"

namespace baton::cuda {

enum class Slot {
  meta,            // int: the step's row map, tokens and row lists
  residual,        // f32 [rows x hidden]
  normed,          // bf16 [rows x hidden]
  qkv,             // f32 [rows x (heads + 2 kv_heads) x head_dim]
  queries,         // bf16, grouped
  attended,        // bf16 [rows x heads x head_dim]
  gate_up,         // bf16 [rows x 2 inner]
  activated,       // bf16 [rows x inner]
  partial,         // f32: split attention's partial results
  keys,            // bf16: one prefilling sequence's keys, contiguous
  values,          // bf16: and its values
  scores,          // f32 [heads x chunk x length]
  probabilities,   // bf16, as scores
  grouped,         // bf16: attention output in the grouped layout
  output,          // f32: logits or hidden states
  picks,           // GreedyPick: one per sequence
  greedy_partial,  // GreedyPartial: the greedy pick's slices
  widened,         // bf16: an fp8 matrix widened for cuBLAS (prefill; Products)
  count
};

class CudaWorkspace {
 public:
  void* device(Slot slot, std::size_t bytes) { return grow(device_[index(slot)], bytes); }
  void* pinned(Slot slot, std::size_t bytes) { return grow(pinned_[index(slot)], bytes); }
  // A slot sized already (by a device_as or pinned_as of this step).
  template <typename T>
  T* device_at(Slot slot) const {
    return static_cast<T*>(device_[index(slot)]->get());
  }
  template <typename T>
  T* pinned_at(Slot slot) const {
    return static_cast<T*>(pinned_[index(slot)]->get());
  }
  template <typename T>
  T* device_as(Slot slot, std::size_t elements) {
    return static_cast<T*>(device(slot, elements * sizeof(T)));
  }
  template <typename T>
  T* pinned_as(Slot slot, std::size_t elements) {
    return static_cast<T*>(pinned(slot, elements * sizeof(T)));
  }
  // Grows by one each time a buffer moves: what was recorded with the old addresses (a
  // CUDA graph) must be made again.
  std::uint64_t generation() const { return generation_; }

 private:
  static std::size_t index(Slot slot) { return static_cast<std::size_t>(slot); }
  template <typename Buffer>
  void* grow(std::unique_ptr<Buffer>& buffer, std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 256);
    if (!buffer || buffer->bytes() < bytes) {
      const std::size_t grown =
          buffer ? std::max(bytes, buffer->bytes() + buffer->bytes() / 2) : bytes;
      buffer.reset();  // first free, then allocate: the device may hold only one
      buffer = std::make_unique<Buffer>(grown);
      ++generation_;
    }
    return buffer->get();
  }

  std::array<std::unique_ptr<DeviceBuffer>, static_cast<std::size_t>(Slot::count)> device_;
  std::array<std::unique_ptr<PinnedBuffer>, static_cast<std::size_t>(Slot::count)> pinned_;
  std::uint64_t generation_ = 0;
};

}  // namespace baton::cuda
