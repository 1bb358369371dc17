#include "baton/turn/concurrent_turn.h"

#include <stdexcept>

#include "baton/turn/fair_share.h"

namespace baton {

TurnClientId ConcurrentTurn::register_client(std::string name, Stream& /*stream*/) {
  return metrics_.add_client(std::move(name));
}

void ConcurrentTurn::acquire(TurnClientId client, BurstKind /*kind*/) {
  metrics_.record_acquire(client, 0);
}

void ConcurrentTurn::set_weight(TurnClientId client, double weight) {
  if (const auto problem = weight_problem(weight)) throw std::invalid_argument(*problem);
  metrics_.set_weight(client, weight);
}

}  // namespace baton
