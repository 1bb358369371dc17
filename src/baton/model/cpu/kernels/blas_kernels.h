// OpenBLAS picks its kernel set once, when the library loads, from the CPU's model number.
// Before 0.3.25 (Debian 12 ships 0.3.21) it falls back to its Prescott (SSE3) kernels on
// an Intel model it does not know (Sapphire and Emerald Rapids among them: OpenBLAS issue
// 4267), which makes sgemm, and so a CPU prefill, about 3x slower. It reads
// OPENBLAS_CORETYPE only at load, so the cure is to run the program again with it set.
// Thread-safety: call reexec_with_fitting_blas_kernels first thing in main(), before any
// thread starts; the rest is pure.
#pragma once

#include <string>
#include <string_view>

namespace baton {

struct CpuVectorSupport {
  bool avx512 = false;  // F, BW, VL, DQ: what OpenBLAS's SkylakeX kernels use
  bool avx2_fma = false;
};

CpuVectorSupport detect_cpu_vector_support();

// The OPENBLAS_CORETYPE to ask for when OpenBLAS picked `picked`, or "" when its pick
// stands (it is not one of the pre-AVX fallbacks, or the CPU has nothing better).
std::string blas_core_to_force(std::string_view picked, CpuVectorSupport cpu);

// When OpenBLAS picked a fallback the CPU outgrows and OPENBLAS_CORETYPE is unset, sets it
// and execs this program again with the same arguments. Returns when there is nothing to
// do, or when the exec fails (then with a warning on stderr, and OpenBLAS's pick stays).
void reexec_with_fitting_blas_kernels(char** argv);

}  // namespace baton
