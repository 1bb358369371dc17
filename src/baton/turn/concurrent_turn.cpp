#include "baton/turn/concurrent_turn.h"

namespace baton {

TurnClientId ConcurrentTurn::register_client(std::string name, Stream& /*stream*/) {
  return metrics_.add_client(std::move(name));
}

void ConcurrentTurn::acquire(TurnClientId client, BurstKind /*kind*/) {
  metrics_.record_acquire(client, 0);
}

}  // namespace baton
