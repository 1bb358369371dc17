#include "baton/model/cpu/cpu_model_runner.h"

#include <stdexcept>
#include <string>

namespace baton {
namespace {

class CpuModelStep final : public ModelStep {
 public:
  CpuModelStep(CpuModelRunner& runner, const LlamaModel& model, KvMemory& memory, StepPlan plan,
               ForwardScratch& scratch)
      : runner_(runner),
        prefills_(plan.prefills),
        row_by_row_(plan.batch_invariant && !plan.prefills),
        output_kind_(plan.output),
        pass_(model, memory, std::move(plan.sequences),
              plan.output == StepOutput::every_hidden ? LogitsFor::every_token
                                                      : LogitsFor::last_token,
              &scratch),
        vocab_(static_cast<std::size_t>(model.config().vocab_size)) {}
  int layers() const override { return pass_.layers(); }
  int rows() const override { return pass_.rows(); }
  // Rows: the pass has one cut, bit-exact with a whole layer; columns and heads are for
  // the GPU, where a piece of rows runs far under the chip's width.
  std::vector<PartCut> cut_layer() const override {
    return {{.part = LayerPart::rows, .units = pass_.rows(), .align = 32}};
  }
  void run_piece(int index, LayerPart part, int first, int count) override {
    if (part != LayerPart::rows) {
      throw std::invalid_argument(std::string("the CPU pass cuts layers by rows, not ") +
                                  part_name(part));
    }
    run_rows(index, first, count);
  }
  void run_layer(int index) override { run_rows(index, 0, pass_.rows()); }
  void finish() override {
    if (output_kind_ == StepOutput::every_hidden) {
      output_.values = pass_.finish_hidden();
      return;
    }
    output_.values = pass_.finish(row_by_row_);
    if (output_kind_ != StepOutput::greedy) return;
    for (std::size_t row = 0; row * vocab_ < output_.values.size(); ++row) {
      output_.greedy.push_back(greedy_token({output_.values.data() + row * vocab_, vocab_}));
    }
    output_.values.clear();
  }
  StepResult take_output() override { return std::move(output_); }
  void set_device_share(double share) override { runner_.record(prefills_, share); }

 private:
  // A batch-invariant decode step (StepPlan::batch_invariant) runs its rows one at a time:
  // the products of several rows sum in another order than those of one.
  void run_rows(int index, int first, int count) {
    if (!row_by_row_) {
      pass_.run_rows(index, first, count);
      return;
    }
    for (int row = first; row < first + count; ++row) pass_.run_rows(index, row, 1);
  }

  CpuModelRunner& runner_;
  const bool prefills_;
  const bool row_by_row_;
  const StepOutput output_kind_;
  ForwardPass pass_;
  const std::size_t vocab_;
  StepResult output_;
};

constexpr std::size_t kSharesKept = 4096;

// `model`, unless its matrices on the host were given back once a device held them.
const LlamaModel& readable_on_host(const LlamaModel& model) {
  if (model.host_copies_released()) {
    throw std::logic_error("[CpuModelRunner] model " + model.source() +
                           ": its weights were released after an upload to a device "
                           "(LlamaModel::release_host_copies), so the CPU forward pass "
                           "cannot run it");
  }
  return model;
}

}  // namespace

CpuModelRunner::CpuModelRunner(const LlamaModel& model, const KvBlockPool& pool)
    : model_(readable_on_host(model)), memory_(model.config(), pool) {}

std::shared_ptr<ModelStep> CpuModelRunner::begin(StepPlan plan, double device_share) {
  record(plan.prefills, device_share);
  return std::make_shared<CpuModelStep>(*this, model_, memory_, std::move(plan), scratch_);
}

void CpuModelRunner::record(bool prefills, double share) {
  std::lock_guard lock(mu_);
  if (shares_.size() == kSharesKept) shares_.pop_front();
  shares_.push_back({prefills, share});
}

std::vector<CpuModelRunner::ShareSeen> CpuModelRunner::device_shares() const {
  std::lock_guard lock(mu_);
  return {shares_.begin(), shares_.end()};
}

}  // namespace baton
