// ModelRunner: what executes one step the LLM engine's scheduler planned, so that the
// scheduler (LlmBatch: admission, chunking, KV blocks, sampling and stop checks) does not
// know where the model runs: model/cpu/ now, model/cuda/ next. A StepPlan says which
// sequences take part and which new positions each brings; the runner returns a
// ModelStep that runs it one layer at a time (so the engine can put each layer on its
// stream as one op and yield the GPU turn between layers), sized for the share of the
// device the turn gives it.
// Thread-safety: begin() from the engine thread; a ModelStep's run_layer() and finish()
// run one at a time, in order, on any thread (the stream's executor); set_device_share()
// is thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "baton/model/forward_pass.h"

namespace baton {

struct StepPlan {
  std::vector<SequenceStep> sequences;  // each: new tokens, written after its length
  bool prefills = false;                // some sequence brings prompt tokens
};

class ModelStep {
 public:
  virtual ~ModelStep() = default;
  virtual int layers() const = 0;
  virtual void run_layer(int index) = 0;
  // The last token's logits of every sequence, row-major [sequences x vocab]; advances
  // every sequence's length.
  virtual std::vector<float> finish() = 0;
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
