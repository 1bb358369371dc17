// LivePolicy: the GPU turn's policy changed while serving (issue 51), by hand (the admin
// route, POST /v1/admin/policy) or by a live experiment's blocks. A change waits for the
// bursts in flight (SwitchableTurn: no request fails, new bursts wait at most for those),
// then the ledger closes its run and opens the next one under the new policy, so that
// `baton analyze --compare` tells the policies' hours apart.
// Thread-safety: switch_to() from any thread (changes take turns); the rest from anywhere.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "baton/turn/switchable_turn.h"

namespace baton {

class LivePolicy {
 public:
  // Called after each change with the new arm (the ledger's next run).
  using Changed = std::function<void(std::size_t arm)>;
  struct Change {
    std::string from;
    std::string to;
    double gate_closed_ms = 0.0;
  };

  LivePolicy(SwitchableTurn& turn, Changed changed);

  // By the arm's name (describe(TurnOptions): "serialize/op+decode-first") or its policy
  // alone ("serialize") when one arm has it. Throws std::invalid_argument naming the arms.
  Change switch_to(const std::string& name);
  Change switch_to(std::size_t arm);
  std::size_t arm_of(const std::string& name) const;
  std::vector<std::string> arms() const;
  std::string current() const;

 private:
  SwitchableTurn& turn_;
  const Changed changed_;
  std::mutex mu_;  // one change at a time, its ledger run included
};

}  // namespace baton
