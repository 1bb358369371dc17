// ModelRunner: what executes one step the LLM engine's scheduler planned, so that the
// scheduler (LlmBatch: admission, chunking, KV blocks, sampling and stop checks) does not
// know where the model runs: model/cpu/ or model/cuda/. A StepPlan says which
// sequences take part and which new positions each brings; the runner returns a
// ModelStep that runs it one layer, or one piece of a layer's rows, at a time (so the
// engine can put each on its stream as one op and yield the GPU turn between them),
// sized for the share of the device the turn gives it. On a device the ops only launch work: the output is read with
// take_output() once the stream has completed the step.
// Thread-safety: begin() from the engine thread; a ModelStep's run_rows() and finish()
// run one at a time, in order, on any thread (the stream's executor); set_device_share()
// is thread-safe; take_output() after the stream completed finish(). A runner runs one
// step at a time: the next begin() comes after the last step's output was taken (or the
// stream drained after a failure).
#pragma once

#include <memory>
#include <vector>

#include "baton/model/forward_pass.h"
#include "baton/model/sampler.h"

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
};

class ModelStep {
 public:
  virtual ~ModelStep() = default;
  virtual int layers() const = 0;
  // The step's rows: the new positions of all its sequences, in plan order.
  virtual int rows() const = 0;
  // Layer `index` for rows [first, first + count) only: a piece of the layer, so that a
  // long prefill layer can be cut into bounded pieces with yield points between them. A
  // layer's pieces run in row order and all before the next layer.
  virtual void run_rows(int index, int first, int count) = 0;
  void run_layer(int index) { run_rows(index, 0, rows()); }
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
};

}  // namespace baton
