#include "baton/model/cuda/cuda_model_step.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "baton/gpu/cuda/cublas_library.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/model/cuda/cuda_linear.h"
#include "baton/model/cuda/flash_attention.h"
#include "baton/model/cuda/key_splits.h"

namespace baton::cuda {
namespace {

// A sequence bringing more tokens than this is attended as a chunk (flash attention, or
// the cuBLAS products).
constexpr int kPagedTokens = 16;
// Pieces of rows are multiples of a tensor-core tile of rows, pieces of a product's output
// columns of a tile of columns.
constexpr int kRowAlign = 32;
constexpr int kColumnAlign = 128;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

kernels::AttentionShape attention_shape(const ModelConfig& c) {
  return {static_cast<int>(c.num_heads), static_cast<int>(c.num_kv_heads),
          static_cast<int>(c.head_dim), c.sliding_window ? static_cast<int>(*c.sliding_window) : 0};
}

}  // namespace

CudaModelStep::CudaModelStep(RunnerState& state, StepPlan plan, double device_share)
    : state_(state), plan_(std::move(plan)), share_(device_share) {
  plan_rows();
  size_workspace();
}

// Lays out the row map on the host (meta_) and decides each sequence's attention path.
void CudaModelStep::plan_rows() {
  const ModelConfig& c = state_.model.config();
  const int block_tokens = state_.kv.block_tokens();
  const auto& steps = plan_.sequences;
  std::vector<int> tokens, positions, sequences, paged;
  int longest_paged = 0;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const KvSequence& kv = *steps[s].sequence;
    const int count = static_cast<int>(steps[s].tokens.size());
    const int capacity = static_cast<int>(kv.blocks.size()) * block_tokens;
    if (kv.length + count > capacity) {
      throw std::length_error("the sequence's KV blocks hold " + std::to_string(capacity) +
                              " positions, not " + std::to_string(kv.length + count));
    }
    max_blocks_ = std::max(max_blocks_, static_cast<int>(kv.blocks.size()));
    const bool chunked = count > kPagedTokens;
    if (chunked) {
      chunks_.push_back({static_cast<int>(s), static_cast<int>(tokens.size()), count, kv.length});
      longest_chunk_ = std::max(longest_chunk_, count);
      longest_length_ = std::max(longest_length_, kv.length + count);
    }
    for (int t = 0; t < count; ++t) {
      const TokenId token = steps[s].tokens[static_cast<std::size_t>(t)];
      if (token < 0 || token >= c.vocab_size) {
        throw std::out_of_range("token id " + std::to_string(token) + " outside the vocabulary");
      }
      const int position = kv.length + t;
      if (!chunked) {
        paged.push_back(static_cast<int>(tokens.size()));
        const int window = c.sliding_window ? static_cast<int>(*c.sliding_window) : position + 1;
        longest_paged = std::max(longest_paged, std::min(position + 1, window));
      }
      tokens.push_back(token);
      positions.push_back(position);
      sequences.push_back(static_cast<int>(s));
    }
  }
  rows_ = static_cast<int>(tokens.size());
  paged_rows_ = static_cast<int>(paged.size());
  paged_ = paged;
  graphed_ = state_.use_graphs && chunks_.empty();
  if (graphed_) {
    // Shapes in powers of two, so that a growing context meets few graphs: the table is
    // padded, and the splits follow the longest row's keys padded (each row cuts its own
    // length), not the table's capacity: a row reserves its prompt and max_tokens, so a
    // 93-token chat row would be cut as 1024 keys.
    max_blocks_ = std::bit_ceil(static_cast<unsigned>(std::max(max_blocks_, 4)));
    longest_paged = std::min(static_cast<int>(std::bit_ceil(
                                 static_cast<unsigned>(std::max(longest_paged, 4 * block_tokens)))),
                             max_blocks_ * block_tokens);
    if (c.sliding_window)
      longest_paged = std::min(longest_paged, static_cast<int>(*c.sliding_window));
  }
  if (paged_rows_ > 0) {
    splits_ = paged_key_splits(paged_rows_, static_cast<int>(c.num_kv_heads), longest_paged,
                               state_.multiprocessors, kernels::kMaxSplits);
    if (plan_.batch_invariant) {  // enough for the longest row; each row takes its own count
      splits_ = std::min(ceil_div(longest_paged, state_.invariant_split_keys), kernels::kMaxSplits);
    }
  }
  meta_ = tokens;
  meta_.insert(meta_.end(), positions.begin(), positions.end());
  meta_.insert(meta_.end(), sequences.begin(), sequences.end());
  for (const SequenceStep& step : steps) {
    std::vector<int> table(static_cast<std::size_t>(max_blocks_), 0);
    std::copy(step.sequence->blocks.begin(), step.sequence->blocks.end(), table.begin());
    meta_.insert(meta_.end(), table.begin(), table.end());
  }
  meta_.insert(meta_.end(), paged.begin(), paged.end());
  int row = 0;
  for (const SequenceStep& step : steps) {  // each sequence's last row
    row += static_cast<int>(step.tokens.size());
    meta_.push_back(row - 1);
  }
}

void CudaModelStep::size_workspace() {
  const ModelConfig& c = state_.model.config();
  CudaWorkspace& w = state_.workspace;
  const auto rows = static_cast<std::size_t>(rows_);
  const auto padded = static_cast<std::size_t>(product_rows());  // the products' rows
  const auto hidden = static_cast<std::size_t>(c.hidden_size);
  const auto q_dim = static_cast<std::size_t>(c.num_heads * c.head_dim);
  const auto kv_dim = static_cast<std::size_t>(c.num_kv_heads * c.head_dim);
  const auto inner = static_cast<std::size_t>(c.intermediate_size);
  const int* device_meta = w.device_as<int>(Slot::meta, meta_.size());
  std::memcpy(w.pinned_as<int>(Slot::meta, meta_.size()), meta_.data(), meta_.size() * sizeof(int));
  map_.position = device_meta + rows;
  map_.sequence = device_meta + 2 * rows;
  map_.block_table = device_meta + 3 * rows;
  map_.max_blocks = max_blocks_;
  map_.block_tokens = state_.kv.block_tokens();
  paged_list_ = map_.block_table + plan_.sequences.size() * static_cast<std::size_t>(max_blocks_);
  last_rows_ = paged_list_ + paged_rows_;
  w.device_as<float>(Slot::residual, padded * hidden);
  w.device_as<kernels::bf16>(Slot::normed, padded * hidden);
  w.device_as<float>(Slot::qkv, padded * (q_dim + 2 * kv_dim));
  w.device_as<kernels::bf16>(Slot::queries, rows * q_dim);
  w.device_as<kernels::bf16>(Slot::attended, padded * q_dim);
  w.device_as<kernels::bf16>(Slot::gate_up, padded * 2 * inner);
  w.device_as<kernels::bf16>(Slot::activated, padded * inner);
  const auto group = static_cast<std::size_t>(c.num_heads / c.num_kv_heads);
  std::size_t partial = static_cast<std::size_t>(paged_rows_) * c.num_kv_heads * splits_ * group *
                        (c.head_dim + 2);
  if (!chunks_.empty() && uses_flash()) {
    partial = std::max(
        partial, kernels::flash_partial_floats(state_.flash_slots, static_cast<int>(c.head_dim)));
  }
  w.device_as<float>(Slot::partial, partial);
  const auto chunk = static_cast<std::size_t>(longest_chunk_);
  const auto length = static_cast<std::size_t>(longest_length_);
  w.device_as<kernels::bf16>(Slot::keys, length * kv_dim);
  w.device_as<kernels::bf16>(Slot::values, length * kv_dim);
  if (!uses_flash()) {  // the cuBLAS path's products
    w.device_as<float>(Slot::scores, static_cast<std::size_t>(c.num_heads) * chunk * length);
    w.device_as<kernels::bf16>(Slot::probabilities,
                               static_cast<std::size_t>(c.num_heads) * chunk * length);
    w.device_as<kernels::bf16>(Slot::grouped, chunk * q_dim);
  }
  const std::size_t logits = plan_.sequences.size() * static_cast<std::size_t>(c.vocab_size);
  w.device_as<float>(Slot::output,
                     plan_.output == StepOutput::every_hidden ? rows * hidden : logits);
  output_floats_ = plan_.output == StepOutput::every_hidden  ? rows * hidden
                   : plan_.output == StepOutput::last_logits ? logits
                                                             : 0;
  w.pinned_as<float>(Slot::output, output_floats_);
  // 8 bits: a layer cut into column pieces widens each piece's slice, whatever the rows.
  if (state_.model.eight_bit()) {
    w.device_as<kernels::bf16>(Slot::widened, state_.model.largest_layer_matrix());
  }
  w.device_as<kernels::GreedyPick>(Slot::picks, plan_.sequences.size());
  w.device_as<kernels::GreedyPartial>(Slot::greedy_partial,
                                      plan_.sequences.size() * kernels::kGreedySlices);
  w.pinned_as<kernels::GreedyPick>(Slot::picks, plan_.sequences.size());
}

Products CudaModelStep::products() const {
  Products p{.cublas = state_.cublas.get(), .batched = batched_products()};
  if (state_.model.eight_bit()) {
    p.widened = state_.workspace.device_at<kernels::bf16>(Slot::widened);
    p.widened_elements = state_.model.largest_layer_matrix();
  }
  return p;
}

bool CudaModelStep::uses_flash() const {
  return state_.use_flash && kernels::flash_fits(static_cast<int>(state_.model.config().head_dim));
}

void CudaModelStep::set_device_share(double share) { share_.store(share); }

cudaStream_t CudaModelStep::prepare() {
  state_.placement.set_share(share_.load(), plan_.prefills);
  const cudaStream_t stream =
      state_.placement.prepare(state_.stream, plan_.prefills, state_.cublas.get());
  // An invariant decode step's cuBLAS products run without split-K (cuda_linear.h).
  use_cublas_workspace(batched_products() != BatchedProducts::invariant_cublas);
  return stream;
}

void CudaModelStep::use_cublas_workspace(bool use) {
  BATON_CUBLAS_CHECK(cublas_api().set_workspace(state_.cublas.get(),
                                                use ? state_.cublas_workspace.get() : nullptr,
                                                use ? state_.cublas_workspace.bytes() : 0));
}

void CudaModelStep::embed(cudaStream_t stream) {
  CudaWorkspace& w = state_.workspace;
  auto* meta = w.device_at<int>(Slot::meta);
  BATON_CUDA_CHECK(cudaMemcpyAsync(meta, w.pinned_at<int>(Slot::meta), meta_.size() * sizeof(int),
                                   cudaMemcpyHostToDevice, stream));
  BATON_CUDA_CHECK(kernels::embed(state_.model.embedding(), meta, rows_,
                                  static_cast<int>(state_.model.config().hidden_size),
                                  w.device_at<float>(Slot::residual), stream));
}

std::vector<PartCut> CudaModelStep::cut_layer() const {
  if (!state_.wide_pieces) return {{.part = LayerPart::rows, .units = rows_, .align = kRowAlign}};
  std::vector<PartCut> parts;
  for (const LayerPart part : {LayerPart::qkv, LayerPart::attention, LayerPart::out_proj,
                               LayerPart::gate_up, LayerPart::down}) {
    parts.push_back({.part = part,
                     .units = units_of(part),
                     .align = part == LayerPart::attention ? 1 : kColumnAlign});
  }
  return parts;
}

int CudaModelStep::units_of(LayerPart part) const {
  const ModelConfig& c = state_.model.config();
  switch (part) {
    case LayerPart::rows:
      return rows_;
    case LayerPart::qkv:
      return static_cast<int>((c.num_heads + 2 * c.num_kv_heads) * c.head_dim);
    case LayerPart::attention:  // the cuBLAS path and the paged kernel attend all heads at once
      return uses_flash() && !chunks_.empty() ? static_cast<int>(c.num_kv_heads) : 1;
    case LayerPart::out_proj:
    case LayerPart::down:
      return static_cast<int>(c.hidden_size);
    case LayerPart::gate_up:
      return static_cast<int>(2 * c.intermediate_size);
  }
  throw std::invalid_argument(std::string("no part ") + part_name(part));
}

void CudaModelStep::run_piece(int index, LayerPart part, int first, int count) {
  const int units = units_of(part);
  if (first < 0 || count < 0 || first + count > units) {
    throw std::out_of_range(std::string(part_name(part)) + " " + std::to_string(first) + "+" +
                            std::to_string(count) + " of a layer part of " + std::to_string(units));
  }
  const cudaStream_t stream = prepare();
  // Layer 0's first piece of either cut (rows, or the q/k/v product) begins the step.
  if (index == 0 && first == 0 && (part == LayerPart::rows || part == LayerPart::qkv)) {
    embed(stream);
  }
  if (part == LayerPart::rows) {
    enqueue_layer(index, first, count, stream);
  } else {
    enqueue_part(index, part, first, count, stream);
  }
}

void CudaModelStep::run_layer(int index) {
  const cudaStream_t stream = prepare();
  if (index == 0) embed(stream);
  if (!graphed_) {
    enqueue_layer(index, 0, rows_, stream);
    return;
  }
  LayerGraphs::Key key;
  key.layer = index;
  key.rows = rows_;
  key.product_rows = product_rows();
  key.sequences = static_cast<int>(plan_.sequences.size());
  key.max_blocks = max_blocks_;
  key.splits = splits_;
  key.split_keys = plan_.batch_invariant ? state_.invariant_split_keys : 0;
  key.products = static_cast<int>(batched_products());
  key.stream = reinterpret_cast<std::uintptr_t>(stream);
  key.generation = state_.workspace.generation();
  state_.graphs.launch(key, stream, [&] { enqueue_layer(index, 0, rows_, stream); });
}

CudaModelStep::Dims CudaModelStep::dims() const {
  const ModelConfig& c = state_.model.config();
  return {.hidden = static_cast<int>(c.hidden_size),
          .q_dim = static_cast<int>(c.num_heads * c.head_dim),
          .kv_dim = static_cast<int>(c.num_kv_heads * c.head_dim),
          .inner = static_cast<int>(c.intermediate_size),
          .eps = static_cast<float>(c.rms_norm_eps)};
}

// The layer's launches for rows [first, first + count): every product and norm works on
// those rows only (a whole layer's products at product_rows()); the grouped queries keep
// the whole step's layout.
void CudaModelStep::enqueue_layer(int index, int first, int count, cudaStream_t stream) {
  const CudaModel::Layer& l = state_.model.layers()[static_cast<std::size_t>(index)];
  CudaWorkspace& w = state_.workspace;
  const Products products = this->products();
  const auto [hidden, q_dim, kv_dim, inner, eps] = dims();
  const auto at = static_cast<std::size_t>(first);
  const int product_count = first == 0 && count == rows_ ? product_rows() : count;
  auto* residual = w.device_at<float>(Slot::residual) + at * hidden;
  auto* qkv = w.device_at<float>(Slot::qkv);
  normed_product(products, first, count, product_count, CudaModel::f32_of(*l.attn_norm),
                 l.qkv.view(), qkv + at * (q_dim + 2 * kv_dim), CUDA_R_32F, stream);
  enqueue_qkv_epilogue(index, first, count, stream);
  attend(index, first, count, stream);
  linear(products, w.device_at<kernels::bf16>(Slot::attended) + at * q_dim, product_count,
         l.o.view(), residual, CUDA_R_32F, 1.0f);
  auto* gate_up = w.device_at<kernels::bf16>(Slot::gate_up) + at * 2 * inner;
  auto* activated = w.device_at<kernels::bf16>(Slot::activated) + at * inner;
  normed_product(products, first, count, product_count, CudaModel::f32_of(*l.mlp_norm),
                 l.gate_up.view(), gate_up, CUDA_R_16BF, stream);
  if (state_.fused_swiglu && count == 1 && product_count == 1 &&
      linear_activated(products, {.gate_up = gate_up}, l.down.view(), residual, 1.0f)) {
    return;
  }
  BATON_CUDA_CHECK(kernels::silu_mul(gate_up, count, inner, activated, stream));
  linear(products, activated, product_count, l.down.view(), residual, CUDA_R_32F, 1.0f);
}

// RMSNorm of residual rows [first, first + count), then their product with `w` (at
// `product_rows`): one launch where the product norms its own row (fused_norm, one row),
// else the norm into Slot::normed and the product.
void CudaModelStep::normed_product(const Products& products, int first, int count, int product_rows,
                                   const float* norm_weight, const DeviceMatrix& w, void* y,
                                   cudaDataType_t y_type, cudaStream_t stream) {
  const Dims d = dims();
  const int hidden = d.hidden;
  const float eps = d.eps;
  const auto at = static_cast<std::size_t>(first) * hidden;
  const float* residual = state_.workspace.device_at<float>(Slot::residual) + at;
  if (state_.fused_norm && count == 1 && product_rows == 1 &&
      linear_normed(products, {.residual = residual, .weight = norm_weight, .eps = eps}, w, y,
                    y_type)) {
    return;
  }
  auto* normed = state_.workspace.device_at<kernels::bf16>(Slot::normed) + at;
  BATON_CUDA_CHECK(
      kernels::rms_norm(residual, nullptr, count, hidden, norm_weight, eps, normed, stream));
  linear(products, normed, product_rows, w, y, y_type);
}

// One part of a layer over all the step's rows, for output columns (the products) or KV
// heads (attention) [first, first + count). The norm before a product goes with its first
// piece, what needs all its columns (the q/k/v epilogue, SwiGLU) with its last.
void CudaModelStep::enqueue_part(int index, LayerPart part, int first, int count,
                                 cudaStream_t stream) {
  const CudaModel::Layer& l = state_.model.layers()[static_cast<std::size_t>(index)];
  CudaWorkspace& w = state_.workspace;
  const Products products = this->products();
  const auto [hidden, q_dim, kv_dim, inner, eps] = dims();
  const bool last = first + count == units_of(part);
  auto* residual = w.device_at<float>(Slot::residual);
  auto* normed = w.device_at<kernels::bf16>(Slot::normed);
  switch (part) {
    case LayerPart::qkv:
      if (first == 0) {
        BATON_CUDA_CHECK(kernels::rms_norm(residual, nullptr, rows_, hidden,
                                           CudaModel::f32_of(*l.attn_norm), eps, normed, stream));
      }
      linear_columns(products, normed, product_rows(), l.qkv.view(), first, count,
                     w.device_at<float>(Slot::qkv), CUDA_R_32F);
      if (last) enqueue_qkv_epilogue(index, 0, rows_, stream);
      return;
    case LayerPart::attention:  // one unit: all heads at once (units_of)
      attend(index, 0, rows_, stream, first, units_of(part) == 1 ? 0 : count);
      return;
    case LayerPart::out_proj:
      linear_columns(products, w.device_at<kernels::bf16>(Slot::attended), product_rows(),
                     l.o.view(), first, count, residual, CUDA_R_32F, 1.0f);
      return;
    case LayerPart::gate_up: {
      auto* gate_up = w.device_at<kernels::bf16>(Slot::gate_up);
      if (first == 0) {
        BATON_CUDA_CHECK(kernels::rms_norm(residual, nullptr, rows_, hidden,
                                           CudaModel::f32_of(*l.mlp_norm), eps, normed, stream));
      }
      linear_columns(products, normed, product_rows(), l.gate_up.view(), first, count, gate_up,
                     CUDA_R_16BF);
      if (last) {
        BATON_CUDA_CHECK(kernels::silu_mul(gate_up, rows_, inner,
                                           w.device_at<kernels::bf16>(Slot::activated), stream));
      }
      return;
    }
    case LayerPart::down:
      linear_columns(products, w.device_at<kernels::bf16>(Slot::activated), product_rows(),
                     l.down.view(), first, count, residual, CUDA_R_32F, 1.0f);
      return;
    case LayerPart::rows:
      break;
  }
  throw std::invalid_argument(std::string("enqueue_part: ") + part_name(part));
}

// Bias, q/k norms and RoPE of rows [first, first + count) of the fused q/k/v product;
// the keys and values into the layer's blocks, the queries grouped by KV head.
void CudaModelStep::enqueue_qkv_epilogue(int index, int first, int count, cudaStream_t stream) {
  const ModelConfig& c = state_.model.config();
  const CudaModel::Layer& l = state_.model.layers()[static_cast<std::size_t>(index)];
  CudaWorkspace& w = state_.workspace;
  kernels::QkvEpilogue epilogue;
  epilogue.qkv = w.device_at<float>(Slot::qkv);
  epilogue.bias = l.qkv_bias ? CudaModel::f32_of(*l.qkv_bias) : nullptr;
  epilogue.q_norm = l.q_norm ? CudaModel::f32_of(*l.q_norm) : nullptr;
  epilogue.k_norm = l.k_norm ? CudaModel::f32_of(*l.k_norm) : nullptr;
  epilogue.eps = static_cast<float>(c.rms_norm_eps);
  epilogue.inverse_frequencies = state_.model.inverse_frequencies();
  epilogue.q_out = w.device_at<kernels::bf16>(Slot::queries);
  epilogue.keys = state_.kv.keys(index);
  epilogue.values = state_.kv.values(index);
  BATON_CUDA_CHECK(
      kernels::qkv_epilogue(epilogue, map_, attention_shape(c), first, count, rows_, stream));
}

// Attention of rows [first, first + count): the paged rows among them (a contiguous run of
// the ascending paged list) and each chunk's rows among them, as a chunk of their own.
void CudaModelStep::attend(int layer, int first, int count, cudaStream_t stream, int first_head,
                           int heads) {
  CudaWorkspace& w = state_.workspace;
  const auto lower = std::lower_bound(paged_.begin(), paged_.end(), first);
  const auto upper = std::lower_bound(lower, paged_.end(), first + count);
  if (lower != upper && first_head == 0) {
    kernels::PagedAttention a;
    a.q = w.device_at<kernels::bf16>(Slot::queries);
    a.keys = state_.kv.keys(layer);
    a.values = state_.kv.values(layer);
    a.row_list = paged_list_ + (lower - paged_.begin());
    a.count = static_cast<int>(upper - lower);
    a.rows = rows_;
    a.splits = splits_;
    a.split_keys = plan_.batch_invariant ? state_.invariant_split_keys : 0;
    a.key_slots = state_.paged_key_slots;
    a.partial = w.device_at<float>(Slot::partial);
    a.out = w.device_at<kernels::bf16>(Slot::attended);
    BATON_CUDA_CHECK(
        kernels::paged_attention(a, map_, attention_shape(state_.model.config()), stream));
  }
  for (const Chunk& chunk : chunks_) {
    const int from = std::max(first, chunk.first_row);
    const int to = std::min(first + count, chunk.first_row + chunk.rows);
    if (from >= to) continue;
    attend_chunk(layer,
                 Chunk{.sequence = chunk.sequence,
                       .first_row = from,
                       .rows = to - from,
                       .start = chunk.start + from - chunk.first_row},
                 stream, first_head, heads);
  }
}

void CudaModelStep::attend_chunk(int layer, const Chunk& chunk, cudaStream_t stream, int first_head,
                                 int heads) {
  const ModelConfig& c = state_.model.config();
  CudaWorkspace& w = state_.workspace;
  const int kv_heads = static_cast<int>(c.num_kv_heads);
  const int d = static_cast<int>(c.head_dim);
  const int group = static_cast<int>(c.num_heads / c.num_kv_heads);
  const int length = chunk.start + chunk.rows;
  auto* keys = w.device_at<kernels::bf16>(Slot::keys);
  auto* values = w.device_at<kernels::bf16>(Slot::values);
  if (first_head == 0) {  // every head's keys, for this and the layer's later head pieces
    const bool extends = gathered_.layer == layer && gathered_.sequence == chunk.sequence &&
                         gathered_.length <= length;
    BATON_CUDA_CHECK(kernels::gather_kv(state_.kv.keys(layer), state_.kv.values(layer), map_,
                                        chunk.sequence, extends ? gathered_.length : 0, length,
                                        kv_heads * d, keys, values, stream));
    gathered_ = {layer, chunk.sequence, length};
  }
  const auto* all_queries = w.device_at<kernels::bf16>(Slot::queries);
  auto* attended = w.device_at<kernels::bf16>(Slot::attended);
  if (uses_flash()) {
    kernels::FlashChunk f;
    f.q = all_queries;
    f.keys = keys;
    f.values = values;
    f.rows = rows_;
    f.first_row = chunk.first_row;
    f.count = chunk.rows;
    f.start = chunk.start;
    f.out = attended;
    f.first_kv_head = first_head;
    f.kv_head_count = heads;
    f.splits =
        kernels::flash_splits(chunk.rows, length, attention_shape(c), state_.flash_slots, heads);
    f.partial = w.device_at<float>(Slot::partial);
    BATON_CUDA_CHECK(kernels::flash_attention(f, attention_shape(c), stream));
    return;
  }
  auto* scores = w.device_at<float>(Slot::scores);
  auto* probabilities = w.device_at<kernels::bf16>(Slot::probabilities);
  auto* grouped = w.device_at<kernels::bf16>(Slot::grouped);
  cublasHandle_t cublas = state_.cublas.get();
  const auto* q = all_queries + static_cast<std::size_t>(chunk.first_row) * group * d;
  attention_scores(cublas, q, static_cast<long long>(rows_) * group * d, keys, chunk.rows * group,
                   length, kv_heads, d, 1.0f / std::sqrt(static_cast<float>(d)), scores);
  BATON_CUDA_CHECK(kernels::causal_softmax(scores, kv_heads, chunk.rows, group, length, chunk.start,
                                           attention_shape(c).window, probabilities, stream));
  attention_values(cublas, probabilities, values, chunk.rows * group, length, kv_heads, d, grouped);
  BATON_CUDA_CHECK(
      kernels::ungroup(grouped, kv_heads, chunk.rows, group, d, chunk.first_row, attended, stream));
}

void CudaModelStep::finish() {
  const ModelConfig& c = state_.model.config();
  CudaWorkspace& w = state_.workspace;
  const cudaStream_t stream = prepare();
  const int hidden = static_cast<int>(c.hidden_size);
  const auto eps = static_cast<float>(c.rms_norm_eps);
  auto* residual = w.device_at<float>(Slot::residual);
  auto* out = w.device_at<float>(Slot::output);
  if (plan_.output != StepOutput::every_hidden) {
    const int sequences = static_cast<int>(plan_.sequences.size());
    auto* normed = w.device_at<kernels::bf16>(Slot::normed);
    BATON_CUDA_CHECK(kernels::rms_norm(residual, last_rows_, sequences, hidden,
                                       state_.model.final_norm(), eps, normed, stream));
    // A batch-invariant step's head, prefill or decode: each row in one order whatever the rows.
    Products head = products();
    if (plan_.batch_invariant) {
      head.batched = state_.invariant_products;
      if (head.batched == BatchedProducts::invariant_cublas) use_cublas_workspace(false);
    }
    linear(head, normed, sequences, state_.model.output(), out, CUDA_R_32F);
    if (plan_.output == StepOutput::greedy) {
      auto* picks = w.device_at<kernels::GreedyPick>(Slot::picks);
      BATON_CUDA_CHECK(kernels::greedy(out, sequences, static_cast<int>(c.vocab_size),
                                       w.device_at<kernels::GreedyPartial>(Slot::greedy_partial),
                                       picks, stream));
      BATON_CUDA_CHECK(cudaMemcpyAsync(w.pinned_at<kernels::GreedyPick>(Slot::picks), picks,
                                       sequences * sizeof(kernels::GreedyPick),
                                       cudaMemcpyDeviceToHost, stream));
    }
  } else {
    BATON_CUDA_CHECK(kernels::rms_norm_f32(residual, rows_, hidden, state_.model.final_norm(), eps,
                                           out, stream));
  }
  if (output_floats_ > 0) {
    BATON_CUDA_CHECK(cudaMemcpyAsync(w.pinned_at<float>(Slot::output), out,
                                     output_floats_ * sizeof(float), cudaMemcpyDeviceToHost,
                                     stream));
  }
  for (SequenceStep& step : plan_.sequences) {
    step.sequence->length += static_cast<int>(step.tokens.size());
  }
}

StepResult CudaModelStep::take_output() {
  StepResult result;
  const float* out = state_.workspace.pinned_at<float>(Slot::output);
  result.values.assign(out, out + output_floats_);
  if (plan_.output == StepOutput::greedy) {
    const auto* picks = state_.workspace.pinned_at<kernels::GreedyPick>(Slot::picks);
    for (std::size_t s = 0; s < plan_.sequences.size(); ++s) {
      result.greedy.push_back({picks[s].token, picks[s].logprob, picks[s].finite != 0});
    }
  }
  return result;
}

}  // namespace baton::cuda
