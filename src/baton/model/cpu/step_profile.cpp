#include "baton/model/cpu/step_profile.h"

namespace baton {

std::string_view step_op_name(StepOp op) {
  switch (op) {
    case StepOp::norm_rope:
      return "RMSNorm, RoPE, KV writes";
    case StepOp::qkv:
      return "q/k/v projections";
    case StepOp::attention:
      return "attention";
    case StepOp::out_proj:
      return "output projection";
    case StepOp::gate_up:
      return "gate/up projections";
    case StepOp::activation:
      return "SiLU x up";
    case StepOp::down:
      return "down projection";
    case StepOp::residual:
      return "residual adds";
    case StepOp::logits:
      return "final norm, logits";
    case StepOp::count:
      break;
  }
  return "?";
}

}  // namespace baton
