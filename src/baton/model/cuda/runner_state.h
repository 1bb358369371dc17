// RunnerState: what CudaModelRunner's steps share: the model, the stream, the KV blocks
// on the device, the workspace, cuBLAS, the layer graphs and the switches read once.
// Thread-safety: the steps that use it run one at a time, on the engine's thread.
#pragma once

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/gpu/cuda/cuda_stream.h"
#include "baton/gpu/cuda/share_placement.h"
#include "baton/model/cuda/cuda_kv_memory.h"
#include "baton/model/cuda/cuda_linear.h"
#include "baton/model/cuda/cuda_model.h"
#include "baton/model/cuda/cuda_workspace.h"
#include "baton/model/cuda/layer_graphs.h"

namespace baton::cuda {

// What a step uses of its runner; the steps run one at a time.
struct RunnerState {
  const CudaModel& model;
  CudaStream& stream;
  CublasHandle cublas;
  CudaKvMemory kv;
  CudaWorkspace workspace;
  SharePlacement placement;
  int multiprocessors = 0;  // the device's, read once
  int flash_slots = 0;      // the flash kernel's blocks the device holds at once, read once
  // cuBLAS's workspace, ours so that captured products keep using it (cublasSetStream
  // would otherwise point them at the library's pool).
  DeviceBuffer cublas_workspace;
  LayerGraphs graphs;
  // BATON_CUDA_GRAPHS=0 launches every kernel directly; BATON_CUDA_FLASH=0 attends prefill
  // chunks through the cuBLAS products; BATON_CUDA_WIDE_PIECES=0 cuts prefill layers into
  // pieces of rows, not of columns and heads; BATON_CUDA_PAGED_SLOTS=0 sends decode attention
  // to the warp-a-key kernel, not the key slots. All for comparisons. BATON_CUDA_DECODE_GEMM=1
  // sends batched decode products to decode_gemm (off: cuBLAS is faster at most shapes).
  bool use_graphs = true;
  bool use_flash = true;
  bool wide_pieces = true;
  bool paged_key_slots = true;
  // A one-row step's q/k/v and gate/up products norm their own input (skinny_gemm.h
  // NormedRow), two launches fewer a layer: the 0.5B decodes 4 % faster on the H100, the 8B
  // the same (docs/benchmarks.md). BATON_CUDA_FUSED_NORM=0 norms first, for comparisons.
  bool fused_norm = true;
  // BATON_CUDA_FUSED_SWIGLU=1: a one-row step's down product makes its own input, silu(gate)
  // * up (skinny_gemm.h ActivatedRow, the same bits), one launch fewer a layer; off until
  // measured.
  bool fused_swiglu = false;
  BatchedProducts batched_products = BatchedProducts::cublas;
  // A batch-invariant step's products: `invariant` (decode_gemm), or `invariant_cublas`
  // (BATON_CUDA_INVARIANT_PRODUCTS=cublas; cuda_linear.h).
  BatchedProducts invariant_products = BatchedProducts::invariant;
  // A batch-invariant decode step cuts each row's keys into ranges of this many, whatever
  // the batch: a chat row of a few hundred keys is one range (16 fixed ranges made 64 such
  // rows 8192 blocks and a merge), a 32K-token row 16 (8 KV heads x 16 blocks, about one
  // wave of an H100).
  int invariant_split_keys = 2048;
};

}  // namespace baton::cuda
