// LayerGraphs: the layers of one runner's small steps (decode, short chunks) as CUDA
// graphs. A layer's launches are captured the first time its step shape is seen and
// replayed after, so that a decode step costs one graph launch per layer instead of ten
// kernel launches (the 0.5B shape's step was half launching: docs/benchmarks.md). A graph
// holds its kernels' arguments, so the key names all that they depend on: the layer, the
// step's row and sequence counts, the block-table width, the attention splits, the stream
// and the workspace's generation (the addresses of its buffers).
// Thread-safety: none; one runner's steps, one at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <tuple>

#include <cuda_runtime_api.h>

#include "baton/gpu/cuda/cuda_handles.h"

namespace baton::cuda {

class LayerGraphs {
 public:
  struct Key {
    int layer = 0;
    int rows = 0;
    int product_rows = 0;  // the products' rows, padded (CudaModelStep::product_rows)
    int sequences = 0;
    int max_blocks = 0;
    int splits = 0;
    int split_keys = 0;  // a batch-invariant step's keys per range (0: the runner's rule)
    int products = 0;  // BatchedProducts: the same shape may run either kind of kernel
    std::uintptr_t stream = 0;
    std::uint64_t generation = 0;
    auto tied() const {
      return std::tie(layer, rows, product_rows, sequences, max_blocks, splits, split_keys,
                      products, stream, generation);
    }
    bool operator<(const Key& other) const { return tied() < other.tied(); }
  };

  // Launches the graph of `key` on `stream`, first capturing `enqueue` (the layer's
  // launches, made on `stream`) into it when the key is new. GpuError when capturing or
  // launching fails; a failed capture leaves the stream as it was.
  void launch(const Key& key, cudaStream_t stream, const std::function<void()>& enqueue);

 private:
  // Graphs of an older workspace generation point at freed buffers; more than this many
  // shapes are not kept either (they are cheap to capture again).
  static constexpr std::size_t kMaxGraphs = 2048;
  std::map<Key, GraphExec> graphs_;
  std::uint64_t generation_ = 0;
};

}  // namespace baton::cuda
