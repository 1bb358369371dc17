#include "baton/model/cpu/kernels/blas_kernels.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "baton/model/cpu/kernels/simd_kernels.h"

namespace baton {

CpuVectorSupport detect_cpu_vector_support() {
  return {.avx512 = cpu_runs_avx512(), .avx2_fma = cpu_runs_avx2()};
}

std::string blas_core_to_force(std::string_view picked, CpuVectorSupport cpu) {
  // OpenBLAS's names for x86 cores without AVX: what its detection falls back to.
  constexpr std::array<std::string_view, 8> fallbacks{"Prescott", "Core2", "Penryn", "Dunnington",
                                                      "Nehalem",  "Atom",  "Katmai", "Northwood"};
  if (std::ranges::find(fallbacks, picked) == fallbacks.end()) return "";
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2_fma) return "Haswell";
  return "";
}

void reexec_with_fitting_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // chosen already, or by us
  const std::string core = blas_core_to_force(openblas_get_corename(), detect_cpu_vector_support());
  if (core.empty()) return;
  if (::setenv("OPENBLAS_CORETYPE", core.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  std::cerr << "warning: could not run again with OPENBLAS_CORETYPE=" << core << " ("
            << std::strerror(errno) << "); OpenBLAS keeps its " << openblas_get_corename()
            << " kernels\n";
  ::unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace baton
