#include "baton/turn/partition_turn.h"

#include <stdexcept>

#include "baton/turn/fair_share.h"

namespace baton {
namespace {

double seconds_of(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

PartitionTurn::PartitionTurn(const TurnOptions& options)
    : by_weights_(!options.prefill_share && !options.prefill_share_auto),
      prefill_share_(options.prefill_share.value_or(0.5)) {
  if (!(prefill_share_.load() > 0.0 && prefill_share_.load() <= 1.0)) {
    throw std::invalid_argument("partition: the prefill share must be in (0, 1]");
  }
  if (options.prefill_share_auto) controller_.emplace(ShareController::Options{});
  if (controller_) prefill_share_.store(controller_->share());
}

TurnClientId PartitionTurn::register_client(std::string name, Stream& /*stream*/) {
  clients_.push_back(std::make_unique<Client>());
  return metrics_.add_client(std::move(name));
}

void PartitionTurn::set_weight(TurnClientId client, double weight) {
  if (const auto problem = weight_problem(weight)) throw std::invalid_argument(*problem);
  clients_.at(client)->weight.store(weight, std::memory_order_relaxed);
  metrics_.set_weight(client, weight);
}

void PartitionTurn::acquire(TurnClientId client, BurstKind kind) {
  Client& c = *clients_.at(client);
  if (c.depth.load(std::memory_order_relaxed) == 0) {
    if (controller_ && kind == BurstKind::prefill) wait_for_solo_bursts(client);
    c.kind.store(kind, std::memory_order_relaxed);
    if (kind == BurstKind::prefill) {
      if (controller_) prefill_epoch_.fetch_add(1, std::memory_order_acq_rel);
      active_prefill_.fetch_add(1, std::memory_order_acq_rel);
    }
    if (controller_) {  // what record_decode() needs, for auto only
      c.started = std::chrono::steady_clock::now();
      c.prefill_at_start = active_prefill_.load(std::memory_order_acquire) > 0;
      c.prefill_epoch_at_start = prefill_epoch_.load(std::memory_order_acquire);
    }
    active_.fetch_add(1, std::memory_order_acq_rel);
  }
  c.depth.fetch_add(1, std::memory_order_acq_rel);
  metrics_.record_acquire(client, 0);
}

void PartitionTurn::leave(TurnClientId client) noexcept {
  Client& c = *clients_[client];
  if (c.depth.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    active_.fetch_sub(1, std::memory_order_acq_rel);
    const BurstKind kind = c.kind.load(std::memory_order_relaxed);
    if (kind == BurstKind::prefill) active_prefill_.fetch_sub(1, std::memory_order_acq_rel);
    if (controller_ && kind == BurstKind::decode) record_decode(client, c);
  }
}

// A decode burst counts as alone when no prefill ran at any time during it, and as next to
// a prefill when one ran at its start and at its end; others (a prefill came or went
// halfway) teach nothing clear and are left out.
void PartitionTurn::record_decode(TurnClientId id, const Client& c) noexcept {
  const auto now = std::chrono::steady_clock::now();
  const bool prefill_now = active_prefill_.load(std::memory_order_acquire) > 0;
  const bool alone = !c.prefill_at_start && !prefill_now &&
                     prefill_epoch_.load(std::memory_order_acquire) == c.prefill_epoch_at_start;
  const bool shared = c.prefill_at_start && prefill_now;
  if (!alone && !shared) return;
  const double seconds = std::chrono::duration<double>(now - c.started).count();
  {
    std::lock_guard lock(mu_);
    controller_->record(id, seconds, shared, seconds_of(now));
    prefill_share_.store(controller_->share(), std::memory_order_release);
  }
  if (alone) solo_measured_.notify_all();
}

void PartitionTurn::wait_for_solo_bursts(TurnClientId asking) {
  std::unique_lock lock(mu_);
  const auto until = std::chrono::steady_clock::now() + kSoloWait;
  solo_measured_.wait_until(lock, until, [&] {
    return !controller_->wants_solo_bursts(seconds_of(std::chrono::steady_clock::now()), asking);
  });
}

double PartitionTurn::device_share(TurnClientId client) const {
  const Client& c = *clients_.at(client);
  const bool holding = c.depth.load(std::memory_order_acquire) > 0;
  const int others = active_.load(std::memory_order_acquire) - (holding ? 1 : 0);
  const BurstKind kind = c.kind.load(std::memory_order_relaxed);
  if (kind == BurstKind::prefill) {
    if (others == 0) return 1.0;
    if (!by_weights_) return prefill_share_.load(std::memory_order_acquire);
    return weight_share(&c);
  }
  if (kind == BurstKind::decode && active_prefill_.load(std::memory_order_acquire) > 0) {
    return 1.0 -
           (by_weights_ ? weight_share(nullptr) : prefill_share_.load(std::memory_order_acquire));
  }
  return 1.0;
}

double PartitionTurn::weight_share(const Client* prefill) const {
  double mine = 0.0;
  double all = 0.0;
  for (const auto& client : clients_) {
    if (client->depth.load(std::memory_order_acquire) == 0 && client.get() != prefill) continue;
    const double w = client->weight.load(std::memory_order_relaxed);
    all += w;
    const bool counted = prefill
                             ? client.get() == prefill
                             : client->kind.load(std::memory_order_relaxed) == BurstKind::prefill;
    if (counted) mine += w;
  }
  return all > 0.0 ? mine / all : 1.0;
}

TurnStats PartitionTurn::stats() const {
  TurnStats stats = metrics_.snapshot();
  stats.prefill_share =
      by_weights_ ? weight_share(nullptr) : prefill_share_.load(std::memory_order_acquire);
  return stats;
}

}  // namespace baton
