// cpu_relax: one pause of a spin-wait, for every loop in baton that spins before it sleeps.
// Thread-safety: stateless.
#pragma once

namespace baton {

// Lets the sibling hyper-thread run and saves power while a thread spins.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace baton
