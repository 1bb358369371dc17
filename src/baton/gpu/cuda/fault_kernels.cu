#include "baton/gpu/cuda/fault_kernels.h"

namespace baton::cuda {
namespace {

__device__ unsigned long long global_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__device__ void hang_until_released(volatile HangWords* words, std::uint64_t ticket,
                                    std::uint32_t release_at) {
  words->started = ticket;
  __threadfence_system();  // the host sees the hang begin before it ends
  while (words->releases < release_at) __nanosleep(1000);
}

__global__ void hang(volatile HangWords* words, std::uint64_t ticket, std::uint32_t release_at) {
  if (words->releases >= release_at) return;
  hang_until_released(words, ticket, release_at);
}

__global__ void hang_gate(volatile HangWords* words, std::uint64_t buffer_id,
                          std::uint32_t release_at) {
  if (words->releases >= release_at) return;
  const std::uint64_t armed = words->armed;
  if (armed == 0 || buffer_id > armed || words->started == armed) return;
  hang_until_released(words, armed, release_at);
}

__global__ void stamp(unsigned long long* slot) { *slot = global_ns(); }

__global__ void stretch(const unsigned long long* slot, double extra, volatile HangWords* words,
                        std::uint32_t release_at) {
  const unsigned long long now = global_ns();
  const unsigned long long until =
      now + static_cast<unsigned long long>(extra * static_cast<double>(now - *slot));
  while (global_ns() < until && words->releases < release_at) __nanosleep(2000);
}

__global__ void spin_for(std::uint64_t nanoseconds) {
  const unsigned long long until = global_ns() + nanoseconds;
  while (global_ns() < until) __nanosleep(2000);
}

__global__ void write_through(volatile unsigned* address) { *address = 1u; }

}  // namespace

cudaError_t launch_hang(cudaStream_t stream, volatile HangWords* words, std::uint64_t ticket,
                        std::uint32_t release_at) {
  hang<<<1, 1, 0, stream>>>(words, ticket, release_at);
  return cudaGetLastError();
}

cudaError_t launch_hang_gate(cudaStream_t stream, volatile HangWords* words,
                             std::uint64_t buffer_id, std::uint32_t release_at) {
  hang_gate<<<1, 1, 0, stream>>>(words, buffer_id, release_at);
  return cudaGetLastError();
}

cudaError_t launch_stamp(cudaStream_t stream, unsigned long long* slot) {
  stamp<<<1, 1, 0, stream>>>(slot);
  return cudaGetLastError();
}

cudaError_t launch_stretch(cudaStream_t stream, const unsigned long long* slot, double extra,
                           volatile HangWords* words, std::uint32_t release_at) {
  stretch<<<1, 1, 0, stream>>>(slot, extra, words, release_at);
  return cudaGetLastError();
}

cudaError_t launch_device_fault(cudaStream_t stream) {
  // The first page is never mapped: the write is an illegal address, sticky for the context.
  write_through<<<1, 1, 0, stream>>>(reinterpret_cast<volatile unsigned*>(std::uintptr_t{64}));
  return cudaGetLastError();
}

cudaError_t launch_spin_for(cudaStream_t stream, std::uint64_t nanoseconds) {
  spin_for<<<1, 1, 0, stream>>>(nanoseconds);
  return cudaGetLastError();
}

}  // namespace baton::cuda
