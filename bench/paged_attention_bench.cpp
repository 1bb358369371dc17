// Decode attention alone on the GPU (issue 50): the paged kernel (and its split merge) as a
// decode step runs it, Llama-3.1-8B's heads (32 query heads, 8 KV heads, head size 128),
// 16-token KV blocks, each row the next token of its own sequence, at batch 1, 8, 32 and
// 64 and contexts from 128 to 32K keys. A profile put this kernel at 32 us a layer at
// batch 8 and 128 keys, a sixth of the step's kernel time (docs/benchmarks.md): this
// times the runner's kernel (paged_slots.cu's key slots) alone, at the key ranges the
// runner picks (key_splits.h), at one range and at a few other counts, and the warp-a-key
// kernel it replaced at the runner's ranges.
// Usage: paged_attention_bench
// Prints, for each case: the ranges, microseconds a launch (median of 5 timed runs of 20,
// bench/gpu_timing.h) and the keys and values read per second at the runner's ranges (each
// row's keys and values once), beside the device's copy rate (cudaMemcpy, bytes read plus
// written), the bound for long contexts; microseconds at one range and at other counts
// (half, three quarters, 1.5 and 2 times the runner's, within kMaxSplits and 16 keys a
// range); the same two for the warp-a-key kernel.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/model/cuda/key_splits.h"
#include "baton/model/cuda/model_kernels.h"
#include "gpu_timing.h"

namespace {

using baton::cuda::DeviceBuffer;
using baton::cuda::kernels::AttentionShape;
using baton::cuda::kernels::bf16;

constexpr AttentionShape kShape{.heads = 32, .kv_heads = 8, .head_dim = 128};
constexpr int kBlockTokens = 16;

std::unique_ptr<DeviceBuffer> upload_ints(const std::vector<int>& values) {
  auto buffer = std::make_unique<DeviceBuffer>(values.size() * sizeof(int));
  BATON_CUDA_CHECK(
      cudaMemcpy(buffer->get(), values.data(), buffer->bytes(), cudaMemcpyHostToDevice));
  return buffer;
}

// bf16 values of magnitude 2^-7 to 2^-6, both signs: finite, so the rate is the kernel's.
std::unique_ptr<DeviceBuffer> filled(std::size_t count) {
  auto buffer = std::make_unique<DeviceBuffer>(count * sizeof(bf16));
  BATON_CUDA_CHECK(cudaMemset(buffer->get(), 0x3c, buffer->bytes()));
  return buffer;
}

// One case: `batch` rows, each the token at position `context - 1` of its own sequence.
struct Case {
  int batch = 1;
  int context = 128;
};

void run(const Case& c, int multiprocessors) {
  const int group = kShape.heads / kShape.kv_heads;
  const int d = kShape.head_dim;
  const int kv_dim = kShape.kv_heads * d;
  const int blocks_per_row = (c.context + kBlockTokens - 1) / kBlockTokens;
  const std::size_t kv_values =
      static_cast<std::size_t>(c.batch) * blocks_per_row * kBlockTokens * kv_dim;
  const auto q = filled(static_cast<std::size_t>(c.batch) * kShape.heads * d);
  const auto keys = filled(kv_values);
  const auto values = filled(kv_values);
  DeviceBuffer out(static_cast<std::size_t>(c.batch) * kShape.heads * d * sizeof(bf16));
  std::vector<int> positions(static_cast<std::size_t>(c.batch), c.context - 1);
  std::vector<int> sequences, table, rows;
  for (int r = 0; r < c.batch; ++r) {
    sequences.push_back(r);
    rows.push_back(r);
    for (int b = 0; b < blocks_per_row; ++b) table.push_back(r * blocks_per_row + b);
  }
  const auto position = upload_ints(positions), sequence = upload_ints(sequences),
             block_table = upload_ints(table), row_list = upload_ints(rows);
  const baton::cuda::kernels::RowMap map{.position = static_cast<const int*>(position->get()),
                                         .sequence = static_cast<const int*>(sequence->get()),
                                         .block_table = static_cast<const int*>(block_table->get()),
                                         .max_blocks = blocks_per_row,
                                         .block_tokens = kBlockTokens};
  const int splits = baton::cuda::paged_key_splits(
      c.batch, kShape.kv_heads, c.context, multiprocessors, baton::cuda::kernels::kMaxSplits);
  const int most = baton::cuda::kernels::kMaxSplits;  // the sweep below goes up to it
  DeviceBuffer partial(static_cast<std::size_t>(c.batch) * kShape.kv_heads * most * group *
                       (d + 2) * sizeof(float));
  const auto microseconds = [&](int ranges, bool key_slots) {
    baton::cuda::kernels::PagedAttention a;
    a.key_slots = key_slots;
    a.q = static_cast<const bf16*>(q->get());
    a.keys = static_cast<const bf16*>(keys->get());
    a.values = static_cast<const bf16*>(values->get());
    a.row_list = static_cast<const int*>(row_list->get());
    a.count = c.batch;
    a.rows = c.batch;
    a.splits = ranges;
    a.partial = static_cast<float*>(partial.get());
    a.out = static_cast<bf16*>(out.get());
    return 1e3 *
           baton::bench::milliseconds(
               [&](int) {
                 BATON_CUDA_CHECK(baton::cuda::kernels::paged_attention(a, map, kShape, nullptr));
               },
               20);
  };
  const double slots = microseconds(splits, true);
  const double warp = microseconds(splits, false);
  const double one = microseconds(1, true);
  const double bytes = 2.0 * c.batch * static_cast<double>(c.context) * kv_dim * sizeof(bf16);
  // The key slots at other range counts than the runner's: whether its rule fills the chip.
  // 4, 8, 16 and 64: what a row the rule keeps whole would gain split, and the old rule's.
  std::vector<int> sweep{splits / 2, splits * 3 / 4, splits * 3 / 2, splits * 2, 4, 8, 16, 64};
  std::sort(sweep.begin(), sweep.end());
  sweep.erase(std::unique(sweep.begin(), sweep.end()), sweep.end());
  std::string others;
  for (const int ranges : sweep) {
    // One range has its own column.
    if (ranges <= 1 || ranges == splits || ranges > most || ranges * 16 > c.context) continue;
    char cell[32];
    std::snprintf(cell, sizeof cell, "%s%d: %.1f", others.empty() ? "" : ", ", ranges,
                  microseconds(ranges, true));
    others += cell;
  }
  std::printf("| %d | %d | %d | %.2f | %.1f | %.0f | %.1f | %s | %.1f | %.0f |\n", c.batch,
              c.context, splits, bytes / 1e6, slots, bytes / (slots * 1e-6) / 1e9, one,
              others.empty() ? "-" : others.c_str(), warp, bytes / (warp * 1e-6) / 1e9);
}

}  // namespace

int main() {
  cudaDeviceProp props{};
  BATON_CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
  std::printf("%s, %d multiprocessors; copy rate %.0f GB/s (read + written)\n", props.name,
              props.multiProcessorCount, baton::bench::copy_rate_gbs(std::size_t{2} << 30));
  std::printf("paged decode attention, %d heads, %d KV heads, head size %d, %d-token blocks\n\n",
              kShape.heads, kShape.kv_heads, kShape.head_dim, kBlockTokens);
  std::printf(
      "| batch | keys a row | ranges | KV MB read | key slots us | KV GB/s | at one range us "
      "| at other ranges (ranges: us) | warp a key us | KV GB/s |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  const std::vector<Case> cases{{1, 128},   {1, 256},   {1, 512},  {1, 1024}, {1, 8192}, {1, 32768},
                                {8, 128},   {8, 256},   {8, 512},  {8, 1024}, {8, 8192}, {32, 128},
                                {32, 1024}, {32, 8192}, {64, 128}, {64, 1024}};
  for (const Case& c : cases) run(c, props.multiProcessorCount);
  return 0;
}
