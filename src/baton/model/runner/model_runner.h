// ModelRunner: what executes one step the LLM engine's scheduler planned, so that the
// scheduler (LlmBatch: admission, chunking, KV blocks, sampling and stop checks) does not
// know where the model runs: model/cpu/ or model/cuda/. A StepPlan says which
// sequences take part and which new positions each brings; the runner returns a
// ModelStep that runs it one layer, or one piece of a layer, at a time (so the engine can
// put each on its stream as one op and yield the GPU turn between them), sized for the
// share of the device the turn gives it. On a device the ops only launch work: the output
// is read with take_output() once the stream has completed the step.
// Thread-safety: begin() from the engine thread; a ModelStep's run_layer(), run_piece()
// and finish()
// run one at a time, in order, on any thread (the stream's executor); set_device_share()
// is thread-safe; take_output() after the stream completed finish(). A runner runs one
// step at a time: the next begin() comes after the last step's output was taken (or the
// stream drained after a failure).
#pragma once

#include <memory>
#include <vector>

#include "baton/model/output/sampler.h"
#include "baton/model/runner/sequence_step.h"

namespace baton {

// What a step returns: the last token's logits of every sequence (an LLM), the most likely
// next token of every sequence (an LLM whose requests all decode greedily: the device
// picks, and no logits cross to the host), or the final norm of every row (an embedding
// model, whose pooling reads them).
enum class StepOutput { last_logits, greedy, every_hidden };

struct StepResult {
  std::vector<float> values;        // [sequences x vocab] logits or [rows x hidden]
  std::vector<GreedyToken> greedy;  // StepOutput::greedy: one per sequence
};

struct StepPlan {
  std::vector<SequenceStep> sequences;  // each: new tokens, written after its length
  bool prefills = false;                // some sequence brings prompt tokens
  StepOutput output = StepOutput::last_logits;
  // Each row's result must not depend on the step's other rows (`--deterministic`): the
  // CUDA runner takes decode products and attention's key ranges that are the same for a
  // row whatever the batch; the CPU runner runs a decode step's rows one at a time. Prompt
  // rows are the caller's to keep alone in their step, or to pack with `invariant_rows`.
  bool batch_invariant = false;
  // A batch-invariant prefill step of a runner with invariant_prefill_rows(): its
  // products run at this many rows (its own rows padded; at least as many), so that a
  // prompt's rows get the same result alone as packed with other prompts. 0: its rows.
  int invariant_rows = 0;
};

// The parts of a layer a piece may cover, each cut along its own axis: the step's rows
// (every product re-reads its weights per piece), or, where the work stays wide, a
// product's output columns (qkv, out_proj, gate_up, down: each weight read once) and
// attention's KV heads (each head's keys read once).
enum class LayerPart { rows, qkv, attention, out_proj, gate_up, down };
const char* part_name(LayerPart part);

struct PartCut {
  LayerPart part = LayerPart::rows;
  int units = 0;  // rows, columns or heads
  int align = 1;  // pieces are multiples of it, the rest of a part excepted
};

// A piece's size as the engine picks it: a power-of-two multiple of `align` (else the rest
// of a part).
bool is_piece_size(int units, int align);
// Every size a piece of `cut` may be picked at (align, 2 align, 4 align, ... below its units)
// and the whole part: what a runner warms up.
std::vector<int> piece_sizes(const PartCut& cut);

class ModelStep {
 public:
  virtual ~ModelStep() = default;
  virtual int layers() const = 0;
  // The step's rows: the new positions of all its sequences, in plan order.
  virtual int rows() const = 0;
  // How the runner cuts a layer into pieces: its parts in the order they run, the same
  // for every layer of the step (the CPU pass: rows; CUDA: columns and heads, or rows with
  // BATON_PIECE_CUT=rows).
  virtual std::vector<PartCut> cut_layer() const = 0;
  // Units [first, first + count) of `part` of layer `index`: a piece of the layer, so that
  // a long prefill layer can be cut into bounded pieces with yield points between them. A
  // layer's pieces run in the order of its parts, each part's in unit order, all of them
  // before the next layer, and all of one layer from one cut (rows, or the other parts).
  // std::invalid_argument for a part the runner cannot cut, std::out_of_range for units
  // outside it.
  virtual void run_piece(int index, LayerPart part, int first, int count) = 0;
  virtual void run_layer(int index) = 0;
  // The final norm and the output projection (StepOutput); advances every sequence's
  // length.
  virtual void finish() = 0;
  // Once the stream has completed finish(): what the plan's StepOutput asked for.
  virtual StepResult take_output() = 0;
  // The share of the device the following layers should size themselves for; called
  // by the engine thread at its yield points, possibly while earlier layers still run.
  virtual void set_device_share(double share) = 0;
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual std::shared_ptr<ModelStep> begin(StepPlan plan, double device_share) = 0;
  // Before the engine's first step, on the stream's executor: runs each piece shape a
  // prefill of up to `max_rows` rows may take, so that no first launch of a kernel (a load,
  // which waits for the whole device: up to 107 ms measured) lands in another engine's turn.
  // Only where needs_warm_up() (the CPU has nothing to load).
  virtual bool needs_warm_up() const { return false; }
  virtual void warm_up(int max_rows) { (void)max_rows; }
  // The most rows a batch-invariant prefill step may pad to (StepPlan::invariant_rows)
  // and still give each row the result it gets whatever other prompts share the step;
  // 0: such steps cannot be packed (the CPU's sums over rows depend on the rows together).
  virtual int invariant_prefill_rows() const { return 0; }
};

}  // namespace baton
