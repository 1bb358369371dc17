// with_register_count: calls body(RegisterCount<V>{}) with V = count (1 to 8) as a
// compile-time constant, so that a kernel's loop over V vector registers is unrolled and
// its accumulators stay in registers. For the kernel sets (simd_avx2.cpp, simd_avx512.cpp):
// header-only and free of library code, so each set's file instantiates it with its own
// lambda under its own -m flags and nothing is shared between them at link time.
// Thread-safety: a pure function.
#pragma once

namespace baton {

template <int V>
struct RegisterCount {
  static constexpr int value = V;
};

template <int V = 8, typename Body>
void with_register_count(int count, const Body& body) {
  if constexpr (V > 1) {
    if (count < V) return with_register_count<V - 1>(count, body);
  }
  body(RegisterCount<V>{});
}

}  // namespace baton
