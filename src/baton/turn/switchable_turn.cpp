#include "baton/turn/switchable_turn.h"

#include <chrono>
#include <stdexcept>

namespace baton {

SwitchableTurn::SwitchableTurn(std::vector<Arm> arms, std::size_t first)
    : arms_(std::move(arms)), current_(first) {
  if (arms_.empty()) throw std::invalid_argument("a switchable turn needs at least one arm");
  if (first >= arms_.size()) throw std::invalid_argument("the first arm does not exist");
  for (const Arm& arm : arms_)
    if (!arm.turn) throw std::invalid_argument("arm '" + arm.name + "' has no turn");
}

std::string_view SwitchableTurn::policy_name() const { return turn().policy_name(); }

TurnClientId SwitchableTurn::register_client(std::string name, Stream& stream) {
  const TurnClientId id = arms_[0].turn->register_client(name, stream);
  for (std::size_t a = 1; a < arms_.size(); ++a) {
    if (arms_[a].turn->register_client(name, stream) != id)
      throw std::logic_error("the arms of a switchable turn numbered client '" + name +
                             "' differently");
  }
  if (depth_.size() <= id) depth_.resize(id + 1, 0);
  return id;
}

bool SwitchableTurn::gate_closed() const {
  std::lock_guard lock(mu_);
  return gate_closed_;
}

void SwitchableTurn::enter() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return !gate_closed_; });
  ++in_flight_;
}

void SwitchableTurn::leave() {
  std::lock_guard lock(mu_);
  if (--in_flight_ == 0) changed_.notify_all();
}

void SwitchableTurn::acquire(TurnClientId client, BurstKind kind) {
  // A re-entrant acquire is part of a burst already in flight: it passes the gate.
  if (depth_.at(client)++ == 0) enter();
  try {
    turn().acquire(client, kind);
  } catch (...) {
    if (--depth_[client] == 0) leave();
    throw;
  }
}

void SwitchableTurn::release(TurnClientId client) {
  struct Leave {
    SwitchableTurn& self;
    TurnClientId client;
    ~Leave() {
      if (--self.depth_[client] == 0) self.leave();
    }
  } leave_after{*this, client};  // the turn has moved on even when release throws
  turn().release(client);
}

void SwitchableTurn::release_quietly(TurnClientId client) noexcept {
  turn().release_quietly(client);
  if (--depth_[client] == 0) leave();
}

std::chrono::nanoseconds SwitchableTurn::yield_point(TurnClientId client, Boundary boundary) {
  return turn().yield_point(client, boundary);  // in flight: the arm cannot change under it
}

double SwitchableTurn::device_share(TurnClientId client) const {
  return turn().device_share(client);
}

std::optional<double> SwitchableTurn::piece_budget_ms(TurnClientId client, BurstKind kind) const {
  return turn().piece_budget_ms(client, kind);
}

void SwitchableTurn::set_weight(TurnClientId client, double weight) {
  for (const Arm& arm : arms_) arm.turn->set_weight(client, weight);
}

SwitchableTurn::Switch SwitchableTurn::switch_to(std::size_t arm) {
  if (arm >= arms_.size())
    throw std::out_of_range("no arm " + std::to_string(arm) + " (there are " +
                            std::to_string(arms_.size()) + ")");
  const std::lock_guard one_switch(switch_mu_);
  const std::size_t from = current();
  if (arm == from) return {.from = from, .to = arm, .gate_closed_ms = 0.0};
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  gate_closed_ = true;
  changed_.wait(lock, [this] { return in_flight_ == 0; });
  current_.store(arm, std::memory_order_release);
  gate_closed_ = false;
  lock.unlock();
  changed_.notify_all();
  return {.from = from,
          .to = arm,
          .gate_closed_ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count()};
}

TurnStats SwitchableTurn::stats() const {
  const std::size_t now = current();
  TurnStats out = arms_[now].turn->stats();
  for (std::size_t a = 0; a < arms_.size(); ++a) {
    if (a == now) continue;
    const TurnStats other = arms_[a].turn->stats();
    out.handovers += other.handovers;
    for (std::size_t c = 0; c < out.clients.size() && c < other.clients.size(); ++c) {
      ClientTurnStats& mine = out.clients[c];
      const ClientTurnStats& theirs = other.clients[c];
      mine.acquisitions += theirs.acquisitions;
      mine.handovers_in += theirs.handovers_in;
      mine.yields += theirs.yields;
      mine.wait_s += theirs.wait_s;
      mine.hold_s += theirs.hold_s;
      mine.device_s += theirs.device_s;
    }
  }
  return out;
}

}  // namespace baton
