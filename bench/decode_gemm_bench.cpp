// The products of a decode step on the GPU against the device's read rate and against
// cuBLAS, in one run (issue 50: every batch of decode at the bandwidth limit).
// Usage: decode_gemm_bench [ROWS...]   (default 1 2 4 8 16 32 64)
// Measures, on the device it runs on:
//   - the bounds: the read rate of a plain streaming read kernel (bench/read_rate.cu; bytes
//     read per second) and cudaMemcpy's copy rate (bytes read plus written), 2 GiB each,
//     median of 10;
//   - for each product of Llama-3.1-8B's step (qkv, o, gate_up, down, the output matrix)
//     and each row count: decode_gemm (and skinny_gemm at one row) and cuBLAS's GemmEx
//     (as `linear_columns` calls it), in weight bytes read per second: median of 5 timings
//     of a run of launches that cycles through copies of the weights larger than four L2
//     caches, so that no launch finds its weights in the cache;
//   - decode_gemm_fp8 (`--weights fp8`) on the same product with E4M3 weights: its bytes
//     read per second, and how many times faster it is than cuBLAS's bf16 product; at
//     one row also skinny_gemm_fp8's bytes read per second;
//   - decode_gemm_q8 (Q8_0 weights kept 8-bit: a byte a weight and an f32 scale per 32)
//     likewise, and skinny_gemm_q8 at one row.
// Prints one table; every figure is measured in this run.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/model/cuda/cuda_linear.h"
#include "baton/model/cuda/decode_gemm.h"
#include "baton/model/cuda/skinny_gemm.h"
#include "gpu_timing.h"
#include "read_rate.h"

namespace {

using baton::cuda::DeviceBuffer;
using baton::cuda::kernels::bf16;

using baton::bench::milliseconds;

constexpr std::size_t kBoundBytes = std::size_t{2} << 30;

double read_rate_gbs(int multiprocessors) {
  DeviceBuffer data(kBoundBytes);
  DeviceBuffer sink(static_cast<std::size_t>(multiprocessors) * 64 * sizeof(unsigned));
  BATON_CUDA_CHECK(cudaMemset(data.get(), 1, kBoundBytes));
  double best = 0.0;
  for (const int per_sm : {2, 4, 8}) {  // 1024-4096 threads a multiprocessor
    const double ms = milliseconds(
        [&](int) {
          BATON_CUDA_CHECK(launch_read(data.get(), kBoundBytes, static_cast<unsigned*>(sink.get()),
                                       multiprocessors * per_sm, nullptr));
        },
        2);
    best = std::max(best, static_cast<double>(kBoundBytes) / (ms * 1e-3) / 1e9);
  }
  return best;
}

struct Shape {
  const char* name;
  int out;
  int in;
};

// Llama-3.1-8B: hidden 4096, 32 query and 8 KV heads of 128, inner 14336, vocabulary 128256.
constexpr Shape kShapes[] = {{"qkv", 6144, 4096},
                             {"o", 4096, 4096},
                             {"gate_up", 28672, 4096},
                             {"down", 4096, 14336},
                             {"output", 128256, 4096}};

// Copies of one product's weights, together larger than four L2 caches.
class WeightCopies {
 public:
  WeightCopies(const Shape& shape, std::size_t l2_bytes)
      : bytes_(static_cast<std::size_t>(shape.out) * shape.in * sizeof(bf16)) {
    const std::size_t count = std::max<std::size_t>(2, (4 * l2_bytes + bytes_ - 1) / bytes_);
    for (std::size_t i = 0; i < count; ++i) {
      copies_.push_back(std::make_unique<DeviceBuffer>(bytes_));
      BATON_CUDA_CHECK(cudaMemset(copies_.back()->get(), 0x3c, bytes_));  // bf16 ~0.011
    }
  }
  const bf16* at(int i) const {
    return static_cast<const bf16*>(copies_[static_cast<std::size_t>(i) % copies_.size()]->get());
  }
  int count() const { return static_cast<int>(copies_.size()); }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  std::vector<std::unique_ptr<DeviceBuffer>> copies_;
};

std::vector<int> rows_from(int argc, char** argv) {
  std::vector<int> rows;
  for (int i = 1; i < argc; ++i) {
    const int r = std::atoi(argv[i]);
    if (r < 1 || r > baton::cuda::kernels::kDecodeMaxRows) {
      std::fprintf(stderr, "decode_gemm_bench: rows must be 1 to %d, not '%s'\n",
                   baton::cuda::kernels::kDecodeMaxRows, argv[i]);
      std::exit(2);
    }
    rows.push_back(r);
  }
  if (rows.empty()) rows = {1, 2, 4, 8, 16, 32, 64};
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> all_rows = rows_from(argc, argv);
  cudaDeviceProp props{};
  BATON_CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
  const double read = read_rate_gbs(props.multiProcessorCount);
  const double copy = baton::bench::copy_rate_gbs(kBoundBytes);
  std::printf("device: %s, %d multiprocessors, L2 %d MiB\n", props.name, props.multiProcessorCount,
              props.l2CacheSize >> 20);
  std::printf(
      "bounds: read rate %.0f GB/s (streaming read kernel), copy rate %.0f GB/s "
      "(cudaMemcpy, read + written)\n\n",
      read, copy);
  std::printf(
      "weight bytes read per second, GB/s (%% of the read rate); baton: decode_gemm, "
      "skinny_gemm at one row\n");
  std::printf(
      "| product | out x in | rows | baton GB/s | of read rate | skinny GB/s | cuBLAS "
      "GB/s | of read rate | baton / cuBLAS | fp8 GB/s | fp8 speed / cuBLAS bf16 | fp8 "
      "skinny GB/s | q8 GB/s | q8 speed / cuBLAS bf16 | q8 skinny GB/s |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  baton::cuda::CublasHandle cublas;
  const DeviceBuffer x(static_cast<std::size_t>(baton::cuda::kernels::kDecodeMaxRows) * 14336 *
                       sizeof(bf16));
  BATON_CUDA_CHECK(cudaMemset(x.get(), 0x3c, x.bytes()));
  const auto* xs = static_cast<const bf16*>(x.get());
  for (const Shape& shape : kShapes) {
    const WeightCopies weights(shape, static_cast<std::size_t>(props.l2CacheSize));
    const DeviceBuffer y(static_cast<std::size_t>(baton::cuda::kernels::kDecodeMaxRows) *
                         shape.out * sizeof(bf16));
    auto* ys = static_cast<bf16*>(y.get());
    // E4M3 weights: the first half of each copy's bytes, scales of 1/64. Q8_0: the same
    // bytes as int8, and a scale per 32 read from the copy's second half (whatever floats
    // its bits make: the timing does not depend on them).
    const std::vector<float> ones(static_cast<std::size_t>(shape.out), 1.0f / 64);
    const DeviceBuffer scales(ones.size() * sizeof(float));
    BATON_CUDA_CHECK(cudaMemcpy(scales.get(), ones.data(), scales.bytes(), cudaMemcpyHostToDevice));
    const int repeats = std::max(weights.count(), 8);
    const auto rate = [&](double ms) {
      return static_cast<double>(weights.bytes()) / (ms * 1e-3) / 1e9;
    };
    for (const int rows : all_rows) {
      const double ours = rate(milliseconds(
          [&](int i) {
            BATON_CUDA_CHECK(baton::cuda::kernels::decode_gemm(xs, rows, weights.at(i), shape.out,
                                                               shape.in, ys, nullptr));
          },
          repeats));
      std::string skinny = "-";
      if (baton::cuda::kernels::skinny_fits(rows, shape.in)) {
        char text[32];
        std::snprintf(text, sizeof text, "%.0f",
                      rate(milliseconds(
                          [&](int i) {
                            BATON_CUDA_CHECK(baton::cuda::kernels::skinny_gemm(
                                xs, rows, weights.at(i), shape.out, shape.in, ys, nullptr));
                          },
                          repeats)));
        skinny = text;
      }
      const double theirs = rate(milliseconds(
          [&](int i) {
            baton::cuda::linear_columns({.cublas = cublas.get()}, xs, rows,
                                        {.values = weights.at(i), .out = shape.out, .in = shape.in},
                                        0, shape.out, ys, CUDA_R_16BF);
          },
          repeats));
      const double fp8 = rate(milliseconds(
          [&](int i) {
            BATON_CUDA_CHECK(baton::cuda::kernels::decode_gemm_fp8(
                xs, rows, reinterpret_cast<const std::uint8_t*>(weights.at(i)),
                static_cast<const float*>(scales.get()), shape.out, shape.in, ys, nullptr));
          },
          repeats));  // bf16 bytes per second: the fp8 kernel's speed on the bf16 scale
      std::string fp8_skinny = "-";
      std::string q8_skinny = "-";
      const auto q8_values = [&](int i) {
        return reinterpret_cast<const std::int8_t*>(weights.at(i));
      };
      const auto q8_scales = [&](int i) {
        return reinterpret_cast<const float*>(q8_values(i) +
                                              static_cast<std::size_t>(shape.out) * shape.in);
      };
      // Bytes a q8 product reads, on the bf16 copies' scale: 1 + 4 / 32 bytes a weight of 2.
      constexpr double kQ8Bytes = (1.0 + 4.0 / 32) / 2;
      const double q8 = rate(milliseconds(
          [&](int i) {
            BATON_CUDA_CHECK(baton::cuda::kernels::decode_gemm_q8(
                xs, rows, q8_values(i), q8_scales(i), shape.out, shape.in, ys, nullptr));
          },
          repeats));  // bf16 bytes per second, as fp8's
      if (baton::cuda::kernels::skinny_fits(rows, shape.in)) {
        char text[32];
        std::snprintf(
            text, sizeof text, "%.0f",
            rate(milliseconds(
                [&](int i) {
                  BATON_CUDA_CHECK(baton::cuda::kernels::skinny_gemm_fp8(
                      xs, rows, reinterpret_cast<const std::uint8_t*>(weights.at(i)),
                      static_cast<const float*>(scales.get()), shape.out, shape.in, ys, nullptr));
                },
                repeats)) /
                2);
        fp8_skinny = text;
        std::snprintf(
            text, sizeof text, "%.0f",
            rate(milliseconds(
                [&](int i) {
                  BATON_CUDA_CHECK(baton::cuda::kernels::skinny_gemm_q8(
                      xs, rows, q8_values(i), q8_scales(i), shape.out, shape.in, ys, nullptr));
                },
                repeats)) *
                kQ8Bytes);
        q8_skinny = text;
      }
      std::printf(
          "| %s | %d x %d | %d | %.0f | %.1f %% | %s | %.0f | %.1f %% | %.2fx | %.0f | %.2fx | %s "
          "| %.0f | %.2fx | %s |\n",
          shape.name, shape.out, shape.in, rows, ours, 100.0 * ours / read, skinny.c_str(), theirs,
          100.0 * theirs / read, ours / theirs, fp8 / 2, fp8 / theirs, fp8_skinny.c_str(),
          q8 * kQ8Bytes, q8 / theirs, q8_skinny.c_str());
    }
  }
  return 0;
}
