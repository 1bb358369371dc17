// Programmatic dependent launch (Hopper): a decode step is a chain of short kernels, and each
// weight product waited for the kernel before it to end and for its own blocks to start
// before its first weight byte moved. A product launched with launch_dependent may start
// while the kernel before it still runs (once that kernel called let_next_kernel_start),
// pull its first weights toward L2 (they never depend on that kernel), and only then wait
// for the kernel's results. On chips before sm_90 the calls do nothing and the launch
// waits as any other.
// Rules: a kernel launched with launch_dependent calls wait_for_previous_kernel before it
// reads anything an earlier kernel wrote; only L2 prefetches may come before (L2 is where
// device memory is coherent, so a prefetch never sees a stale value).
// Thread-safety: device code, and a reentrant launcher.
#pragma once

#include <cuda_runtime.h>

namespace baton::cuda::kernels::detail {

// The kernel launched after this one may start its blocks now (they wait for this grid's
// end before reading its results).
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits for the kernel before this one to end, its writes visible (returns at once when
// this kernel was launched without launch_dependent).
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Starts moving the 16 bytes at `p` from device memory into L2.
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

template <typename... Params, typename... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block,
                             cudaStream_t stream, Args... args) {
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &early;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

}  // namespace baton::cuda::kernels::detail
