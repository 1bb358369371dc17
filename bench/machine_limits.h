// The limits of the machine a CPU benchmark runs on, measured in the same run: the read
// bandwidth of memory (the best of a few streaming kernels, on 1 and on N threads) and
// the FMA peak of the cores (independent chains of fused multiply-adds on the widest
// vectors the CPU runs: AVX-512, else AVX2). A decode step's bound is its bytes over the
// bandwidth; a prefill's is its FLOPs over the peak.
// Thread-safety: each call starts and joins its own threads.
#pragma once

#include <cstddef>
#include <string>

namespace baton::bench {

struct Bandwidth {
  double gbs = 0.0;    // the best kernel's GB/s (10^9 bytes a second)
  std::string kernel;  // which one it was
};

// Reads `bytes` (far beyond the last-level cache) on `threads` threads, each its own
// contiguous slice; the best of 3 passes of each kernel.
Bandwidth read_bandwidth(std::size_t bytes, int threads);

struct FmaPeak {
  double gflops = 0.0;  // 10^9 floating-point operations a second (an FMA is two)
  std::string isa;      // "avx512", "avx2" or "scalar"
};

FmaPeak fma_peak(int threads);
// The peak of vdpbf16ps (AVX-512 BF16: products of bf16 pairs summed into f32), the bound
// of the bf16 products where the CPU has it; {0, "none"} where it does not.
FmaPeak bf16_pair_peak(int threads);
// The peak of tdpbf16ps (AMX-BF16 tiles), the bound of the bf16 products of many rows where
// the CPU has it; {0, "none"} where it does not.
FmaPeak amx_bf16_peak(int threads);

}  // namespace baton::bench
