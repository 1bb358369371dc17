#include "baton/turn/partition_turn.h"

#include <stdexcept>

namespace baton {

PartitionTurn::PartitionTurn(const TurnOptions& options) : prefill_share_(options.prefill_share) {
  if (!(prefill_share_ > 0.0 && prefill_share_ <= 1.0)) {
    throw std::invalid_argument("partition: the prefill share must be in (0, 1]");
  }
}

TurnClientId PartitionTurn::register_client(std::string name, Stream& /*stream*/) {
  clients_.push_back(std::make_unique<Client>());
  return metrics_.add_client(std::move(name));
}

void PartitionTurn::acquire(TurnClientId client, BurstKind kind) {
  Client& c = *clients_.at(client);
  if (c.depth.fetch_add(1, std::memory_order_acq_rel) == 0) {
    c.kind.store(kind, std::memory_order_relaxed);
    if (kind == BurstKind::prefill) active_prefill_.fetch_add(1, std::memory_order_acq_rel);
    active_.fetch_add(1, std::memory_order_acq_rel);
  }
  metrics_.record_acquire(client, 0);
}

void PartitionTurn::leave(TurnClientId client) noexcept {
  Client& c = *clients_[client];
  if (c.depth.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    active_.fetch_sub(1, std::memory_order_acq_rel);
    if (c.kind.load(std::memory_order_relaxed) == BurstKind::prefill) {
      active_prefill_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
}

double PartitionTurn::device_share(TurnClientId client) const {
  const Client& c = *clients_.at(client);
  const bool holding = c.depth.load(std::memory_order_acquire) > 0;
  const int others = active_.load(std::memory_order_acquire) - (holding ? 1 : 0);
  const BurstKind kind = c.kind.load(std::memory_order_relaxed);
  if (kind == BurstKind::prefill) return others > 0 ? prefill_share_ : 1.0;
  if (kind == BurstKind::decode && active_prefill_.load(std::memory_order_acquire) > 0) {
    return 1.0 - prefill_share_;
  }
  return 1.0;
}

}  // namespace baton
