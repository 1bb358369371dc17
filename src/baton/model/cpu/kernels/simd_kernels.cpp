#include "baton/model/cpu/kernels/simd_kernels.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace baton {

bool cpu_runs_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpu_runs_avx512_bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  return cpu_runs_avx512() && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

bool cpu_runs_amx_bf16() {
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
  // Linux hands out the tiles' 8 KB of state only to a process that asks for it (5.16 on).
  static const bool granted = [] {
    constexpr long kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr long kTileData = 18;               // XFEATURE_XTILEDATA
    return cpu_runs_avx512_bf16() && __builtin_cpu_supports("amx-tile") &&
           __builtin_cpu_supports("amx-bf16") &&
           syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

bool cpu_runs_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

namespace {

const SimdKernels& choose() {
  const std::vector<const SimdKernels*> sets = supported_simd_kernels();
  const char* wanted = std::getenv("BATON_CPU_ISA");
  if (wanted == nullptr || *wanted == '\0') return *sets.back();
  for (const SimdKernels* set : sets) {
    if (set->name == wanted) return *set;
  }
  const std::string name = wanted;
  if (name == "avx2" || name == "avx512" || name == "avx512bf16" || name == "amxbf16") {
    throw std::invalid_argument("BATON_CPU_ISA=" + name + ": this CPU (or this build) lacks it");
  }
  throw std::invalid_argument(
      "BATON_CPU_ISA must be scalar, avx2, avx512, avx512bf16 or amxbf16, not '" + name + "'");
}

}  // namespace

std::vector<const SimdKernels*> supported_simd_kernels() {
  std::vector<const SimdKernels*> sets{&scalar_simd_kernels()};
  if (avx2_simd_kernels() != nullptr && cpu_runs_avx2()) sets.push_back(avx2_simd_kernels());
  if (avx512_simd_kernels() != nullptr && cpu_runs_avx512()) sets.push_back(avx512_simd_kernels());
  if (avx512_bf16_simd_kernels() != nullptr && cpu_runs_avx512_bf16()) {
    sets.push_back(avx512_bf16_simd_kernels());
  }
  if (amx_bf16_simd_kernels() != nullptr && cpu_runs_amx_bf16()) {
    sets.push_back(amx_bf16_simd_kernels());
  }
  return sets;
}

const SimdKernels& simd_kernels() {
  static const SimdKernels& chosen = choose();
  return chosen;
}

}  // namespace baton
