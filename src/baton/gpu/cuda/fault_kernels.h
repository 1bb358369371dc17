// Injected faults that run on the device, so that detection and recovery meet the real
// thing. All of them coordinate with the host through HangWords, pinned host memory that
// the kernels reach through its device alias:
// - a hang: a one-thread kernel spins until the host raises `releases` (a stream reset);
//   on starting it writes its ticket to `started`, so the host knows when it really began;
// - a hang gate, launched before each op when hangs arrive in overlap time: it hangs the
//   stream when the host has armed it (`armed` >= its buffer's id), the device-side op
//   boundary of the fault model;
// - a stretch: after an op, spins (extra x the op's own duration, measured on the device),
//   so a slowed stream runs that many times slower on the GPU;
// - a device fault: a write through an address no allocation holds, a real sticky error.
// Every kernel launched before a reset returns at once once `releases` passed its
// `release_at`: the reset failed that work already.
// Each returns the launch's status (the caller checks it; this file has no C++ deps).
// Thread-safety: launch from the thread that owns the stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace baton::cuda {

struct HangWords {
  std::uint32_t releases;  // host: raised by every reset
  std::uint32_t unused;
  std::uint64_t armed;    // host: a gate in a buffer up to this id may hang; 0: none
  std::uint64_t started;  // device: the ticket of the last hang that began
};

// A buffer's own hang writes this bit with its buffer id; a gate writes the armed id.
inline constexpr std::uint64_t kBufferHangTicket = std::uint64_t{1} << 63;

cudaError_t launch_hang(cudaStream_t stream, volatile HangWords* words, std::uint64_t ticket,
                        std::uint32_t release_at);
cudaError_t launch_hang_gate(cudaStream_t stream, volatile HangWords* words,
                             std::uint64_t buffer_id, std::uint32_t release_at);
// `slot`: 8 bytes of device memory of the stream's own.
cudaError_t launch_stamp(cudaStream_t stream, unsigned long long* slot);
cudaError_t launch_stretch(cudaStream_t stream, const unsigned long long* slot, double extra,
                           volatile HangWords* words, std::uint32_t release_at);
cudaError_t launch_device_fault(cudaStream_t stream);
// Device work of a known length (one thread spinning on the device's clock): for tests.
cudaError_t launch_spin_for(cudaStream_t stream, std::uint64_t nanoseconds);

}  // namespace baton::cuda
