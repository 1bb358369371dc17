#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/flash_attention.h"
#include "baton/model/cuda/flash_mma.cuh"
#include "baton/model/cuda/flash_tiles.cuh"
#include "baton/model/cuda/flash_wmma.cuh"
#include "baton/model/cuda/key_splits.h"

namespace baton::cuda::kernels {
namespace {

using flash::kTile;

// One thread per output element: combines the splits' partial results of each query
// vector (rescaled to the largest running max) and writes it as the flash kernels would.
__global__ void flash_merge_kernel(FlashChunk c, AttentionShape s) {
  detail::let_next_kernel_start();  // a weight product after this one may begin its loads
  const int d = s.head_dim;
  const int group = s.heads / s.kv_heads;
  const int n = c.count * group;
  const int g = c.first_kv_head + static_cast<int>(blockIdx.y);
  const int i = blockIdx.x * (blockDim.x / d) + threadIdx.x / d;
  const int column = threadIdx.x % d;
  if (i >= n) return;
  const std::size_t split_stride = static_cast<std::size_t>(gridDim.y) * n * (d + 2);
  const float* first = c.partial + (static_cast<std::size_t>(blockIdx.y) * n + i) * (d + 2);
  float m = -FLT_MAX;
  for (int k = 0; k < c.splits; ++k) {
    const float* part = first + k * split_stride;
    if (part[d + 1] > 0.0f) m = fmaxf(m, part[d]);
  }
  float total = 0.0f;
  float sum = 0.0f;
  for (int k = 0; k < c.splits; ++k) {
    const float* part = first + k * split_stride;
    if (part[d + 1] <= 0.0f) continue;  // a range past (or before) every key it may see
    const float weight = expf(part[d] - m);
    total += part[d + 1] * weight;
    sum += part[column] * weight;
  }
  const int t = i / group;
  c.out[(static_cast<std::size_t>(c.first_row + t) * s.heads + g * group + i % group) * d +
        column] = __float2bfloat16(total > 0.0f ? sum / total : 0.0f);
}

constexpr int kMergeThreads = 256;

// `with(std::integral_constant<int, D>{})` for the head sizes the kernel is built for,
// `otherwise` for any other: the one list of them.
template <typename R, typename F>
R for_head_dim(int head_dim, R otherwise, F&& with) {
  switch (head_dim) {
    case 16:
      return with(std::integral_constant<int, 16>{});
    case 32:
      return with(std::integral_constant<int, 32>{});
    case 64:
      return with(std::integral_constant<int, 64>{});
    case 128:
      return with(std::integral_constant<int, 128>{});
    case 256:
      return with(std::integral_constant<int, 256>{});
    default:
      return otherwise;
  }
}

// The kernel for head size D: flash_mma_kernel where its registers hold a warp's queries
// and output (D <= 128), with 4 or 8 warps a block, else flash_wmma_kernel (4 warps);
// `kernel` wmma asks for the latter.
template <int D>
struct Kernel {
  using Function = void (*)(FlashChunk, AttentionShape);
  Function function = flash::flash_wmma_kernel<D>;
  std::size_t bytes = flash::WmmaLayout<D>::bytes;
  int warps = flash::kWarps;
  explicit Kernel(FlashKernel kernel) {
    if constexpr (D <= 128) {
      if (kernel == FlashKernel::mma || kernel == FlashKernel::mma8) {
        warps = kernel == FlashKernel::mma8 ? 8 : 4;
        function = warps == 8 ? flash::flash_mma_kernel<D, 8> : flash::flash_mma_kernel<D, 4>;
        bytes = flash::MmaLayout<D>::bytes;
      }
    }
  }
  int threads() const { return warps * flash::kWarp; }
  int query_vectors() const { return warps * flash::kFragment; }
  // Lets the kernel take its shared memory (over the default 48 KB).
  cudaError_t allow_shared_memory() const {
    return cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(bytes));
  }
};

template <int D>
cudaError_t launch(const FlashChunk& c, const AttentionShape& s, cudaStream_t stream) {
  const Kernel<D> kernel(c.kernel);
  const cudaError_t status = kernel.allow_shared_memory();
  if (status != cudaSuccess) return status;
  const int vectors = c.count * (s.heads / s.kv_heads);
  const int heads = c.kv_head_count;
  const dim3 grid((vectors + kernel.query_vectors() - 1) / kernel.query_vectors(), heads, c.splits);
  kernel.function<<<grid, kernel.threads(), kernel.bytes, stream>>>(c, s);
  if (c.splits == 1) return cudaGetLastError();
  constexpr int per_block = kMergeThreads / D;
  const dim3 merge_grid((vectors + per_block - 1) / per_block, heads);
  flash_merge_kernel<<<merge_grid, per_block * D, 0, stream>>>(c, s);
  return cudaGetLastError();
}

template <int D>
int resident_blocks() {
  const Kernel<D> kernel(FlashKernel::mma);
  if (kernel.allow_shared_memory() != cudaSuccess) return 0;
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel.function, kernel.threads(),
                                                    kernel.bytes) != cudaSuccess) {
    return 0;
  }
  return blocks;
}

}  // namespace

int flash_slots(int head_dim, int multiprocessors) {
  return multiprocessors *
         for_head_dim(head_dim, 0, [](auto d) { return resident_blocks<decltype(d)::value>(); });
}

bool flash_fits(int head_dim) {
  return for_head_dim(head_dim, false, [](auto) { return true; });
}

int flash_splits(int count, int length, const AttentionShape& shape, int slots, int kv_head_count) {
  const int heads = kv_head_count > 0 ? kv_head_count : shape.kv_heads;
  const int blocks = (count * (shape.heads / shape.kv_heads) + kTile - 1) / kTile * heads;
  const int tiles = (length + kTile - 1) / kTile;
  const int max_splits = std::min(tiles / kFlashMinSplitTiles, kFlashMaxSplits);
  return key_splits(blocks, max_splits, slots);
}

std::size_t flash_partial_floats(int slots, int head_dim) {
  // A split launch has at most key_split_blocks(slots) blocks of kTile vectors each.
  return static_cast<std::size_t>(key_split_blocks(slots)) * kTile * (head_dim + 2);
}

cudaError_t flash_attention(const FlashChunk& chunk, const AttentionShape& shape,
                            cudaStream_t stream) {
  FlashChunk c = chunk;
  if (c.kv_head_count == 0) c.kv_head_count = shape.kv_heads - c.first_kv_head;
  if (c.count == 0 || c.kv_head_count == 0) return cudaSuccess;
  if (c.splits < 1 || c.splits > kFlashMaxSplits || (c.splits > 1 && c.partial == nullptr) ||
      c.first_kv_head < 0 || c.kv_head_count < 0 ||
      c.first_kv_head + c.kv_head_count > shape.kv_heads) {
    return cudaErrorInvalidValue;
  }
  return for_head_dim(shape.head_dim, cudaErrorInvalidValue,
                      [&](auto d) { return launch<decltype(d)::value>(c, shape, stream); });
}

}  // namespace baton::cuda::kernels
