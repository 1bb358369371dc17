#include "baton/server/live/live_policy.h"

#include <stdexcept>

namespace baton {

LivePolicy::LivePolicy(SwitchableTurn& turn, Changed changed)
    : turn_(turn), changed_(std::move(changed)) {}

std::size_t LivePolicy::arm_of(const std::string& name) const {
  std::vector<std::size_t> by_policy;
  std::string known;
  for (std::size_t a = 0; a < turn_.arm_count(); ++a) {
    const std::string& arm = turn_.arm_name(a);
    if (arm == name) return a;
    if (arm.substr(0, arm.find('/')) == name) by_policy.push_back(a);
    known += (known.empty() ? "" : ", ") + arm;
  }
  if (by_policy.size() == 1) return by_policy.front();
  throw std::invalid_argument(
      "'" + name + "' is " +
      (by_policy.empty() ? "not a policy of this server" : "the policy of several arms: name one") +
      " (" + known + ")");
}

LivePolicy::Change LivePolicy::switch_to(const std::string& name) {
  return switch_to(arm_of(name));
}

LivePolicy::Change LivePolicy::switch_to(std::size_t arm) {
  const std::lock_guard lock(mu_);
  const SwitchableTurn::Switch done = turn_.switch_to(arm);
  Change change{.from = turn_.arm_name(done.from),
                .to = turn_.arm_name(done.to),
                .gate_closed_ms = done.gate_closed_ms};
  if (done.from != done.to && changed_) changed_(done.to);
  return change;
}

std::vector<std::string> LivePolicy::arms() const {
  std::vector<std::string> out;
  for (std::size_t a = 0; a < turn_.arm_count(); ++a) out.push_back(turn_.arm_name(a));
  return out;
}

std::string LivePolicy::current() const { return turn_.arm_name(turn_.current()); }

}  // namespace baton
