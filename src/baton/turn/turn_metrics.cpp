#include "baton/turn/turn_metrics.h"

#include <algorithm>

namespace baton {

TurnClientId TurnMetrics::add_client(std::string name) {
  auto counters = std::make_unique<Counters>();
  counters->name = std::move(name);
  clients_.push_back(std::move(counters));
  return static_cast<TurnClientId>(clients_.size() - 1);
}

void TurnMetrics::record_acquire(TurnClientId client, std::int64_t wait_ns) {
  Counters& c = *clients_.at(client);
  c.acquisitions.fetch_add(1, std::memory_order_relaxed);
  if (wait_ns > 0) c.wait_ns.fetch_add(wait_ns, std::memory_order_relaxed);
}

void TurnMetrics::record_handover(TurnClientId client, std::int64_t latency_ns) {
  clients_.at(client)->handovers_in.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(samples_mu_);
  ++handovers_;
  if (handover_us_.size() < kMaxHandoverSamples) {
    handover_us_.push_back(static_cast<double>(latency_ns) / 1000.0);
  }
}

void TurnMetrics::record_hold(TurnClientId client, std::int64_t hold_ns) {
  clients_.at(client)->hold_ns.fetch_add(hold_ns, std::memory_order_relaxed);
}

void TurnMetrics::record_yield(TurnClientId client) {
  clients_.at(client)->yields.fetch_add(1, std::memory_order_relaxed);
}

void TurnMetrics::record_device(TurnClientId client, std::int64_t device_ns) {
  if (device_ns > 0) clients_.at(client)->device_ns.fetch_add(device_ns, std::memory_order_relaxed);
}

void TurnMetrics::set_weight(TurnClientId client, double weight) {
  clients_.at(client)->weight.store(weight, std::memory_order_relaxed);
}

TurnStats TurnMetrics::snapshot() const {
  TurnStats stats;
  for (const auto& c : clients_) {
    ClientTurnStats s;
    s.name = c->name;
    s.acquisitions = c->acquisitions.load(std::memory_order_relaxed);
    s.handovers_in = c->handovers_in.load(std::memory_order_relaxed);
    s.yields = c->yields.load(std::memory_order_relaxed);
    s.wait_s = static_cast<double>(c->wait_ns.load(std::memory_order_relaxed)) * 1e-9;
    s.hold_s = static_cast<double>(c->hold_ns.load(std::memory_order_relaxed)) * 1e-9;
    s.device_s = static_cast<double>(c->device_ns.load(std::memory_order_relaxed)) * 1e-9;
    s.weight = c->weight.load(std::memory_order_relaxed);
    stats.clients.push_back(std::move(s));
  }
  std::lock_guard lock(samples_mu_);
  stats.handovers = handovers_;
  stats.handover_us = summarize(handover_us_);
  return stats;
}

TurnStats stats_since(const TurnStats& now, const TurnStats& before) {
  TurnStats window = now;
  window.handovers -= std::min(before.handovers, now.handovers);
  for (std::size_t i = 0; i < window.clients.size() && i < before.clients.size(); ++i) {
    ClientTurnStats& c = window.clients[i];
    const ClientTurnStats& b = before.clients[i];
    c.acquisitions -= std::min(b.acquisitions, c.acquisitions);
    c.handovers_in -= std::min(b.handovers_in, c.handovers_in);
    c.yields -= std::min(b.yields, c.yields);
    c.wait_s = std::max(c.wait_s - b.wait_s, 0.0);
    c.hold_s = std::max(c.hold_s - b.hold_s, 0.0);
    c.device_s = std::max(c.device_s - b.device_s, 0.0);
  }
  return window;
}

}  // namespace baton
