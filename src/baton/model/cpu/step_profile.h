// StepProfile: where a forward pass's time goes, op by op (the matrix products, attention,
// norms and rotations, the activation, the output layer). A benchmark attaches one to a
// pass to explain its figures; a pass with none pays one branch per op.
// Thread-safety: none; one pass (one thread at a time) writes it, and it is read after.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace baton {

enum class StepOp {
  norm_rope,
  qkv,
  attention,
  out_proj,
  gate_up,
  activation,
  down,
  residual,
  logits,
  count
};

std::string_view step_op_name(StepOp op);

struct StepProfile {
  std::array<std::int64_t, static_cast<std::size_t>(StepOp::count)> ns{};
  std::int64_t& operator[](StepOp op) { return ns[static_cast<std::size_t>(op)]; }
  std::int64_t total_ns() const {
    std::int64_t sum = 0;
    for (const std::int64_t t : ns) sum += t;
    return sum;
  }
};

// Adds the time from its construction to its destruction to `op` of `profile` (may be
// null: then it does nothing).
class OpTimer {
 public:
  OpTimer(StepProfile* profile, StepOp op) : profile_(profile), op_(op) {
    if (profile_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~OpTimer() {
    if (profile_ == nullptr) return;
    (*profile_)[op_] += std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - start_)
                            .count();
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  StepProfile* profile_;
  StepOp op_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace baton
