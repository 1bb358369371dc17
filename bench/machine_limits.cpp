#include "machine_limits.h"

// GCC 12's AVX-512 headers trip its own uninitialized warnings (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "baton/model/cpu/kernels/amx_tile_config.h"
#include "baton/model/cpu/kernels/simd_kernels.h"

namespace baton::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Runs body(t) on `threads` threads released together; returns the seconds from the
// release to the last one's end (thread start-up is not counted).
double timed_on_threads(int threads, const std::function<void(int)>& body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) {
      }
      body(t);
    });
  }
  while (ready.load() != threads) {
  }
  const auto start = Clock::now();
  go.store(true);
  for (std::thread& w : workers) w.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Streaming read kernels: sum 64-byte lines into independent integer accumulators (an
// integer add has one cycle of latency, so the loads, not the adds, set the pace).
[[gnu::target("avx512f")]] std::uint64_t read_avx512(const std::byte* p, std::size_t bytes,
                                                     bool prefetch) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t i = 0; i + 256 <= bytes; i += 256) {
    if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(p + i + 2048), _MM_HINT_T0);
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(p + i));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(p + i + 64));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(p + i + 128));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(p + i + 192));
  }
  return static_cast<std::uint64_t>(_mm512_reduce_add_epi64(
      _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3))));
}

[[gnu::target("avx2")]] std::uint64_t read_avx2(const std::byte* p, std::size_t bytes,
                                                bool prefetch) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t i = 0; i + 128 <= bytes; i += 128) {
    if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(p + i + 2048), _MM_HINT_T0);
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i sum = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  std::uint64_t lanes[4];
  std::memcpy(lanes, &sum, sizeof lanes);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

std::uint64_t read_scalar(const std::byte* p, std::size_t bytes, bool) {
  std::uint64_t a[8] = {};
  for (std::size_t i = 0; i + 64 <= bytes; i += 64) {
    for (int k = 0; k < 8; ++k) {
      std::uint64_t v;
      std::memcpy(&v, p + i + 8 * k, sizeof v);
      a[k] += v;
    }
  }
  std::uint64_t s = 0;
  for (const std::uint64_t v : a) s += v;
  return s;
}

struct ReadKernel {
  const char* name;
  std::uint64_t (*read)(const std::byte*, std::size_t, bool);
  bool prefetch;
};

std::vector<ReadKernel> read_kernels() {
  std::vector<ReadKernel> kernels{
      {.name = "scalar 8x64-bit", .read = read_scalar, .prefetch = false}};
  if (__builtin_cpu_supports("avx2")) {
    kernels.push_back({"avx2 4x256-bit", read_avx2, false});
    kernels.push_back({"avx2 + prefetch", read_avx2, true});
  }
  if (__builtin_cpu_supports("avx512f")) {
    kernels.push_back({"avx512 4x512-bit", read_avx512, false});
    kernels.push_back({"avx512 + prefetch", read_avx512, true});
  }
  return kernels;
}

// `chains` independent FMA chains of `iterations` each; returns a value that depends on
// all of them, so none is optimized away.
[[gnu::target("avx512f")]] float fma_avx512(long iterations) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
    // Unrolled, or GCC -O2 keeps acc in memory and times store-to-load latency instead.
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

[[gnu::target("avx2,fma")]] float fma_avx2(long iterations) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  float lanes[8];
  std::memcpy(lanes, &s, sizeof lanes);
  float total = 0.0f;
  for (const float v : lanes) total += v;
  return total;
}

// The same with vdpbf16ps: each of 16 lanes adds two products of bf16 pairs (4 FLOPs).
[[gnu::target("avx512f,avx512bf16")]] float bf16_pairs_avx512(long iterations) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-7f), _mm512_set1_ps(1e-7f));
  for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

// The same on the tile unit: four accumulator tiles (16 x 16 f32) each add the products of
// two operand tiles held in registers: 16 x 16 sums of 32 products (16,384 FLOPs) a tdpbf16ps.
[[gnu::target("amx-tile,amx-bf16")]] float amx_tiles(long iterations) {
  static constexpr AmxTileConfig kConfig = full_tiles_config();
  _tile_loadconfig(&kConfig);
  alignas(64) std::uint16_t operand[512];
  for (std::uint16_t& v : operand) v = 0x3400;  // bf16 of 2^-23: sums stay finite
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long n = 0; n < iterations; ++n) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  alignas(64) float sums[256];
  _tile_stored(0, sums, 64);
  _tile_release();
  return sums[0];
}

}  // namespace

Bandwidth read_bandwidth(std::size_t bytes, int threads) {
  const std::size_t slice = bytes / static_cast<std::size_t>(threads) / 4096 * 4096;
  auto* raw = static_cast<std::byte*>(std::aligned_alloc(4096, slice * threads));
  const std::unique_ptr<std::byte, decltype(&std::free)> data(raw, &std::free);
  // Written on the threads that read it (first touch), with no zero pages left.
  timed_on_threads(
      threads, [&](int t) { std::memset(raw + slice * static_cast<std::size_t>(t), 1, slice); });
  Bandwidth best;
  std::atomic<std::uint64_t> sink{0};
  for (const ReadKernel& kernel : read_kernels()) {
    for (int pass = 0; pass < 3; ++pass) {
      const double s = timed_on_threads(threads, [&](int t) {
        sink.fetch_add(
            kernel.read(raw + slice * static_cast<std::size_t>(t), slice, kernel.prefetch));
      });
      const double gbs = static_cast<double>(slice * threads) / s / 1e9;
      if (gbs > best.gbs) best = {gbs, kernel.name};
    }
  }
  if (sink.load() == 0) std::abort();  // every byte is 1: the sums cannot be 0
  return best;
}

namespace {

constexpr long kChainIterations = 20'000'000;

// The best of 3 passes of `chains(iterations)` on every thread, in GFLOP/s, where one call
// does `flops_per_iteration` each iteration.
template <typename Chains>
double best_chain_rate(int threads, double flops_per_iteration, Chains chains,
                       long iterations = kChainIterations) {
  std::atomic<int> sink{0};
  double best = 0.0;
  for (int pass = 0; pass < 3; ++pass) {
    const double s =
        timed_on_threads(threads, [&](int) { sink.fetch_add(chains(iterations) > 0.0f ? 1 : 0); });
    best =
        std::max(best, flops_per_iteration * static_cast<double>(iterations) * threads / s / 1e9);
  }
  if (sink.load() < 0) std::abort();  // the results are used
  return best;
}

}  // namespace

FmaPeak fma_peak(int threads) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx512 && !avx2) return {.gflops = 0.0, .isa = "scalar"};
  const int lanes = avx512 ? 16 : 8;
  const double gflops = best_chain_rate(threads, 2.0 * 12 * lanes, [avx512](long iterations) {
    return avx512 ? fma_avx512(iterations) : fma_avx2(iterations);
  });
  return {.gflops = gflops, .isa = avx512 ? "avx512" : "avx2"};
}

FmaPeak bf16_pair_peak(int threads) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bf16")) {
    return {.gflops = 0.0, .isa = "none"};
  }
  return {.gflops = best_chain_rate(threads, 4.0 * 12 * 16, bf16_pairs_avx512),
          .isa = "avx512bf16"};
}

FmaPeak amx_bf16_peak(int threads) {
  if (!cpu_runs_amx_bf16()) return {.gflops = 0.0, .isa = "none"};
  constexpr double kFlops = 4 * 2.0 * 16 * 16 * 32;  // four tdpbf16ps an iteration
  return {.gflops = best_chain_rate(threads, kFlops, amx_tiles, kChainIterations / 20),
          .isa = "amxbf16"};
}

}  // namespace baton::bench
