// Whether a row's result through cuBLAS (as linear_columns calls GemmEx: bf16 in, f32
// sums) depends on where the row sits in the product or on how many rows it has: the
// question behind prompts of several requests in one `--deterministic` prefill step
// (issue 50). Each row alone is what a request alone gets; batched, it sits among others.
// Usage: gemm_row_position
// For Llama-3.1-8B's four products and row counts M (32-2048: `--deterministic` pads a
// prefill step to 256, and a decode step could pad to 64): the rows of an M-row
// product computed again with the rows in reverse order (same M, other positions), and
// the first 1, 8, 32 and 92 rows computed alone and inside the M-row one. Prints how many
// rows are not bit-for-bit equal in each case; equal everywhere at a fixed M means a step
// may pad its prompt rows to that M and keep every row's result whatever the other rows.
// Each case twice: with cuBLAS's default workspace, and with none (cublasSetWorkspace to 0
// bytes), which leaves cuBLAS no room for split-K partial sums: if rows then match at every
// M, a step needs no padding (the runner gives its handle a workspace today). Then, without
// a workspace, each product as the runner calls it (output type, beta) at every M from 1
// to 64 against each row alone: what BATON_CUDA_INVARIANT_PRODUCTS=cublas relies on.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "baton/gpu/cuda/cublas_library.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/model/cuda/cuda_linear.h"

namespace {

using baton::cuda::DeviceBuffer;
using baton::cuda::kernels::bf16;

std::vector<std::uint16_t> random_bf16(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::uint16_t> bits(count);
  for (auto& b : bits) {
    const float value = uniform(rng);
    std::uint32_t word = 0;
    std::memcpy(&word, &value, sizeof word);
    b = static_cast<std::uint16_t>(word >> 16);
  }
  return bits;
}

// DeviceBuffer neither copies nor moves.
std::unique_ptr<DeviceBuffer> upload(const std::vector<std::uint16_t>& bits) {
  auto buffer = std::make_unique<DeviceBuffer>(bits.size() * sizeof(std::uint16_t));
  BATON_CUDA_CHECK(cudaMemcpy(buffer->get(), bits.data(), buffer->bytes(), cudaMemcpyHostToDevice));
  return buffer;
}

// y [rows x out] f32 of x [rows x in] through cuBLAS, downloaded.
std::vector<float> product(cublasHandle_t cublas, const std::vector<std::uint16_t>& x, int rows,
                           const DeviceBuffer& w, int out, int in) {
  const std::unique_ptr<DeviceBuffer> xs = upload(x);
  DeviceBuffer y(static_cast<std::size_t>(rows) * out * sizeof(float));
  baton::cuda::linear_columns({.cublas = cublas}, static_cast<const bf16*>(xs->get()), rows,
                              {.values = w.get(), .out = out, .in = in}, 0, out, y.get(),
                              CUDA_R_32F);
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> host(static_cast<std::size_t>(rows) * out);
  BATON_CUDA_CHECK(cudaMemcpy(host.data(), y.get(), y.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// Rows r of `a` and map(r) of `b` not bit-for-bit equal, for r < rows.
template <typename Map>
int rows_unequal(const std::vector<float>& a, const std::vector<float>& b, int rows, int out,
                 Map map) {
  int unequal = 0;
  for (int r = 0; r < rows; ++r) {
    const float* x = a.data() + static_cast<std::size_t>(r) * out;
    const float* y = b.data() + static_cast<std::size_t>(map(r)) * out;
    if (std::memcmp(x, y, static_cast<std::size_t>(out) * sizeof(float)) != 0) ++unequal;
  }
  return unequal;
}

// Counts of rows not bit-for-bit equal for one shape, one handle and M rows.
void compare(cublasHandle_t cublas, const char* name, const char* workspace, const DeviceBuffer& w,
             int out, int in, int rows) {
  const std::vector<std::uint16_t> x = random_bf16(static_cast<std::size_t>(rows) * in, 2 + rows);
  std::vector<std::uint16_t> reversed(x.size());
  for (int r = 0; r < rows; ++r) {
    std::memcpy(reversed.data() + static_cast<std::size_t>(rows - 1 - r) * in,
                x.data() + static_cast<std::size_t>(r) * in, in * sizeof(std::uint16_t));
  }
  const std::vector<float> y = product(cublas, x, rows, w, out, in);
  const std::vector<float> y_reversed = product(cublas, reversed, rows, w, out, in);
  std::printf("| %s | %d x %d | %s | %d | %d |", name, out, in, workspace, rows,
              rows_unequal(y, y_reversed, rows, out, [&](int r) { return rows - 1 - r; }));
  for (const int alone : {1, 8, 32, 92}) {
    if (alone > rows) {
      std::printf(" - |");
      continue;
    }
    const std::vector<std::uint16_t> first(x.begin(),
                                           x.begin() + static_cast<std::size_t>(alone) * in);
    const std::vector<float> y_alone = product(cublas, first, alone, w, out, in);
    std::printf(" %d |", rows_unequal(y_alone, y, alone, out, [](int r) { return r; }));
  }
  std::printf("\n");
}

// The decode question, as the runner calls each product (its output type, beta 1 where
// the residual is added in place): on a handle without a workspace, rows 0..M-1 of an
// M-row product against each row computed alone, for every M from 1 to 64. Prints the
// rows unlike alone of all 2080 (BATON_CUDA_INVARIANT_PRODUCTS=cublas needs 0 everywhere).
std::vector<std::uint8_t> product_as_run(cublasHandle_t cublas, const std::vector<std::uint16_t>& x,
                                         int rows, const DeviceBuffer& w, int out, int in,
                                         cudaDataType_t y_type, float beta,
                                         const std::vector<std::uint8_t>& residual) {
  const std::unique_ptr<DeviceBuffer> xs = upload(x);
  const std::size_t element = y_type == CUDA_R_32F ? sizeof(float) : sizeof(std::uint16_t);
  const std::size_t bytes = static_cast<std::size_t>(rows) * out * element;
  DeviceBuffer y(bytes);
  BATON_CUDA_CHECK(cudaMemcpy(y.get(), residual.data(), bytes, cudaMemcpyHostToDevice));
  baton::cuda::linear_columns({.cublas = cublas}, static_cast<const bf16*>(xs->get()), rows,
                              {.values = w.get(), .out = out, .in = in}, 0, out, y.get(), y_type,
                              beta);
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> host(bytes);
  BATON_CUDA_CHECK(cudaMemcpy(host.data(), y.get(), bytes, cudaMemcpyDeviceToHost));
  return host;
}

void decode_rows(cublasHandle_t bare, const char* name, int out, int in, cudaDataType_t y_type,
                 float beta) {
  constexpr int kMostRows = 64;
  const std::unique_ptr<DeviceBuffer> w =
      upload(random_bf16(static_cast<std::size_t>(out) * in, 1));
  const std::vector<std::uint16_t> x = random_bf16(static_cast<std::size_t>(kMostRows) * in, 7);
  const std::size_t row_bytes =
      static_cast<std::size_t>(out) * (y_type == CUDA_R_32F ? sizeof(float) : 2);
  std::vector<std::uint8_t> residual(kMostRows * row_bytes);
  if (y_type == CUDA_R_32F) {  // a residual in f32 where beta adds it
    const std::vector<std::uint16_t> r = random_bf16(residual.size() / sizeof(float), 11);
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::uint32_t word = static_cast<std::uint32_t>(r[i]) << 16;
      std::memcpy(residual.data() + i * sizeof(float), &word, sizeof word);
    }
  }
  std::vector<std::vector<std::uint8_t>> alone;
  for (int r = 0; r < kMostRows; ++r) {
    const std::vector<std::uint16_t> row(x.begin() + static_cast<std::size_t>(r) * in,
                                         x.begin() + static_cast<std::size_t>(r + 1) * in);
    const std::vector<std::uint8_t> own(residual.begin() + r * row_bytes,
                                        residual.begin() + (r + 1) * row_bytes);
    alone.push_back(product_as_run(bare, row, 1, *w, out, in, y_type, beta, own));
  }
  int unlike = 0;
  int worst_m = 0;
  for (int m = 1; m <= kMostRows; ++m) {
    const std::vector<std::uint16_t> rows(x.begin(), x.begin() + static_cast<std::size_t>(m) * in);
    const std::vector<std::uint8_t> y =
        product_as_run(bare, rows, m, *w, out, in, y_type, beta, residual);
    for (int r = 0; r < m; ++r) {
      if (std::memcmp(y.data() + r * row_bytes, alone[static_cast<std::size_t>(r)].data(),
                      row_bytes) != 0) {
        ++unlike;
        worst_m = m;
      }
    }
  }
  std::printf("| %s | %d x %d | %s, beta %g | %d | %d |\n", name, out, in,
              y_type == CUDA_R_32F ? "f32" : "bf16", beta, unlike, worst_m);
}

}  // namespace

int main() {
  struct Shape {
    const char* name;
    int out;
    int in;
  };
  baton::cuda::CublasHandle cublas;
  baton::cuda::CublasHandle bare;
  if (baton::cuda::cublas_api().set_workspace(bare.get(), nullptr, 0) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gemm_row_position: cublasSetWorkspace(0 bytes) failed\n");
    return 1;
  }
  std::printf(
      "| product | out x in | workspace | M | rows moved, unlike (of M) | first 1 alone, unlike "
      "| first 8 | first 32 | first 92 |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const Shape& s : {Shape{"qkv", 6144, 4096}, Shape{"o", 4096, 4096},
                         Shape{"gate_up", 28672, 4096}, Shape{"down", 4096, 14336}}) {
    const std::unique_ptr<DeviceBuffer> w =
        upload(random_bf16(static_cast<std::size_t>(s.out) * s.in, 1));
    for (const int rows : {32, 64, 128, 256, 512, 2048}) {
      compare(cublas.get(), s.name, "default", *w, s.out, s.in, rows);
      compare(bare.get(), s.name, "none", *w, s.out, s.in, rows);
    }
  }
  std::printf(
      "\nNo workspace, as the runner calls each product: rows 0..M-1 of an M-row product "
      "against each row alone, M = 1..64\n\n| product | out x in | output | rows unlike alone "
      "(of 2080) | largest M with one |\n|---|---|---|---|---|\n");
  decode_rows(bare.get(), "qkv", 6144, 4096, CUDA_R_32F, 0.0f);
  decode_rows(bare.get(), "o", 4096, 4096, CUDA_R_32F, 1.0f);
  decode_rows(bare.get(), "gate_up", 28672, 4096, CUDA_R_16BF, 0.0f);
  decode_rows(bare.get(), "down", 4096, 14336, CUDA_R_32F, 1.0f);
  decode_rows(bare.get(), "head", 128256, 4096, CUDA_R_32F, 0.0f);
  return 0;
}
