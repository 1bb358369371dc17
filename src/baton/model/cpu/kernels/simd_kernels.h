// SimdKernels: the inner loops of the CPU forward pass, compiled once per instruction set
// (portable C++, AVX2+FMA, AVX-512, AVX-512 with BF16, AMX) and chosen at run time for the CPU it
// runs on: the bf16 matrix-vector product of a decode step, the dot products and weighted sums of
// attention, the softmax's exponentials and the SwiGLU activation. Each set is its own
// translation unit built with its own -m flags (model/cpu/simd_*.cpp), so nothing else is
// compiled for instructions the CPU may lack.
// Thread-safety: the kernels are pure functions of their arguments; simd_kernels() is
// chosen once, on first use, and immutable after.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace baton {

struct SimdKernels {
  std::string_view name;  // "scalar", "avx2", "avx512", "avx512bf16" or "amxbf16"
  // Few rows (a decode batch): y[r * out + o] = x[r] . w[o] for the output columns o in
  // [first, first + count), w row-major [out x in] in bf16 (little-endian, any
  // alignment), x row-major [rows x in]. Rows go in blocks (4 with AVX-512, 2 with AVX2),
  // each block reading the columns' weights once.
  void (*dot_bf16_rows)(const float* x, int rows, int in, const std::byte* w, int first, int count,
                        int out, float* y);
  // a . b over n floats.
  float (*dot)(const float* a, const float* b, int n);
  // y += a * x over n floats.
  void (*add_scaled)(float a, const float* x, float* y, int n);
  // Attention over one block of keys or values, `stride` floats apart:
  // out[j] = scale * (q . k[j * stride ...]) for j < count, vectors of n floats;
  void (*dot_strided)(const float* q, const float* k, std::size_t stride, int count, int n,
                      float scale, float* out);
  // out[0..n) += sum over j < count of p[j] * v[j * stride ...].
  void (*add_scaled_strided)(const float* p, const float* v, std::size_t stride, int count, int n,
                             float* out);
  // s[i] = exp(s[i] - shift) for n floats; returns their sum. Relative error of each
  // exponential below 4e-7 for arguments in [-87, 0].
  float (*exp_shifted)(float* s, int n, float shift);
  // gate[i] = SiLU(gate[i]) * up[i]: the SwiGLU MLP's inner product.
  void (*silu_mul)(float* gate, const float* up, std::size_t n);
  // The sum of exp(s[i] - shift) over n floats, s unchanged: each term's relative error
  // below 4e-7 for arguments in [-87, 0] (those below count as e^-87), summed in f64 (the
  // normalizer of a vocabulary's log-softmax, which every generated token pays).
  double (*sum_exp)(const float* s, std::size_t n, float shift);
  // Only where the CPU multiplies bf16 pairs (AVX-512 BF16), nullptr elsewhere: products of
  // bf16 weights with their activations rounded to bf16 too, as llama.cpp's and PyTorch's
  // bf16 products do (twice the products an instruction, no widening). out[i] = x[i]
  // rounded to the nearest even bf16.
  void (*round_to_bf16)(const float* x, std::size_t n, std::uint16_t* out);
  // As dot_bf16_rows, with x's rows of `in` bf16 values (round_to_bf16).
  void (*dot_bf16x_rows)(const std::uint16_t* x, int rows, int in, const std::byte* w, int first,
                         int count, int out, float* y);
  // Only where the CPU has AMX tiles with BF16, nullptr elsewhere: many rows of bf16 x at
  // once. tile_bf16x lays x out in the tile unit's order, into tiled_bf16x_size(rows, in)
  // values; dot_tiled_bf16x_rows is then dot_bf16x_rows on that (x itself for the last
  // outputs, fewer than 16, done by dot_bf16x_rows).
  std::size_t (*tiled_bf16x_size)(int rows, int in);
  void (*tile_bf16x)(const std::uint16_t* x, int rows, int in, std::uint16_t* tiled);
  void (*dot_tiled_bf16x_rows)(const std::uint16_t* tiled, const std::uint16_t* x, int rows, int in,
                               const std::byte* w, int first, int count, int out, float* y);
};

// The fastest set this CPU runs, unless $BATON_CPU_ISA names one (scalar, avx2, avx512,
// avx512bf16, amxbf16):
// then that one, or std::invalid_argument when the value is unknown or the CPU lacks it.
const SimdKernels& simd_kernels();
// Every set this CPU runs, portable first (what the tests compare).
std::vector<const SimdKernels*> supported_simd_kernels();

// What the CPU runs: AVX-512 F, BW, VL and DQ with FMA; those and AVX-512 BF16; AVX2 with
// FMA.
bool cpu_runs_avx512();
bool cpu_runs_avx512_bf16();
// AMX tiles with BF16, and the kernel's leave to use them (asked once, for the process).
bool cpu_runs_amx_bf16();
bool cpu_runs_avx2();

// The sets, each defined in its own file: nullptr where it was not compiled in.
const SimdKernels& scalar_simd_kernels();
const SimdKernels* avx2_simd_kernels();
const SimdKernels* avx512_simd_kernels();
const SimdKernels* avx512_bf16_simd_kernels();
const SimdKernels* amx_bf16_simd_kernels();

}  // namespace baton
