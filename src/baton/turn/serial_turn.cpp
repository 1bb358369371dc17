#include "baton/turn/serial_turn.h"

#include <algorithm>
#include <cassert>

#include "baton/common/clock.h"
#include "baton/turn/serial_steps.h"

namespace baton {
namespace {

constexpr std::int64_t ns(std::chrono::nanoseconds d) { return d.count(); }

}  // namespace

SerialTurn::SerialTurn(Stream& default_stream, TurnOptions options)
    : default_stream_(default_stream), options_(options) {}

TurnClientId SerialTurn::register_client(std::string name, Stream& stream) {
  auto client = std::make_unique<Client>();
  client->stream = &stream;
  clients_.push_back(std::move(client));
  return metrics_.add_client(std::move(name));
}

void SerialTurn::acquire(TurnClientId id, BurstKind kind) {
  Client& client = *clients_.at(id);
  const std::int64_t asked_at = now_ns();
  client.asked_at_ns.store(asked_at, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    if (holder_ && holder_thread_ == std::this_thread::get_id()) {
      // Re-entrant: the holder's thread keeps the turn. Only its own stream is drained at
      // the end, so a nested hold must be for the same client.
      assert(*holder_ == id && "nested acquire by a different client");
      ++depth_;
      return;
    }
    if (!holder_) {
      assert(waiters_.empty());
      holder_ = id;
      holder_thread_ = std::this_thread::get_id();
      holder_kind_ = kind;
      depth_ = 1;
      hold_start_ns_ = asked_at;
      floor_until_ns_.store(0, std::memory_order_relaxed);
      metrics_.record_acquire(id, 0);
      return;
    }
    enqueue_locked(id, kind);
  }
  wait_for_grant(client);
  const std::int64_t running_at = now_ns();
  hold_start_ns_ = running_at;
  metrics_.record_acquire(id, running_at - asked_at);
  metrics_.record_handover(id, running_at - client.granted_at_ns.load(std::memory_order_relaxed));
}

void SerialTurn::enqueue_locked(TurnClientId id, BurstKind kind) {
  Client& client = *clients_[id];
  assert(std::find(waiters_.begin(), waiters_.end(), id) == waiters_.end() &&
         "a client waits from one thread at a time");
  client.waiting_kind = kind;
  client.waiting_thread = std::this_thread::get_id();
  // Behind every waiter of its rank or higher, ahead of every lower one.
  const int mine = rank(client, kind);
  const auto position = std::find_if(waiters_.begin(), waiters_.end(), [&](TurnClientId w) {
    return rank(*clients_[w], clients_[w]->waiting_kind) < mine;
  });
  waiters_.insert(position, id);
  client.in_line_since_ns = now_ns();
  client.in_line.store(true, std::memory_order_relaxed);
  waiting_.fetch_add(1, std::memory_order_release);
}

int SerialTurn::rank(const Client& client, BurstKind kind) const {
  const bool ahead = options_.decode_first && kind == BurstKind::decode;
  return client.priority.load(std::memory_order_relaxed) * 2 + (ahead ? 1 : 0);
}

void SerialTurn::set_priority(TurnClientId id, int priority) {
  clients_.at(id)->priority.store(priority, std::memory_order_relaxed);
}

void SerialTurn::wait_for_grant(Client& client) const {
  const std::int64_t spin_until =
      now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(options_.spin).count();
  while (client.granted.load(std::memory_order_acquire) == 0) {
    if (now_ns() >= spin_until) {
      client.granted.wait(0, std::memory_order_acquire);
    } else {
      cpu_relax();
    }
  }
  client.granted.store(0, std::memory_order_relaxed);
}

void SerialTurn::release(TurnClientId id) {
  assert(depth_ > 0);
  if (--depth_ > 0) return;
  if (auto error = hand_over(id, /*take_errors=*/true)) throw *error;
}

void SerialTurn::release_quietly(TurnClientId id) noexcept {
  assert(depth_ > 0);
  if (--depth_ > 0) return;
  (void)hand_over(id, /*take_errors=*/false);
}

std::optional<GpuError> SerialTurn::hand_over(TurnClientId id, bool take_errors) noexcept {
  std::optional<GpuError> error =
      drain_for_handover(*clients_[id]->stream, default_stream_, take_errors);
  metrics_.record_hold(id, now_ns() - hold_start_ns_);
  pass_turn();
  return error;
}

void SerialTurn::pass_turn() {
  Client* next = nullptr;
  {
    std::lock_guard lock(mu_);
    if (waiters_.empty()) {
      floor_until_ns_.store(0, std::memory_order_relaxed);
      holder_.reset();
      holder_thread_ = std::thread::id();
      depth_ = 0;
      return;
    }
    const std::int64_t now = now_ns();
    const auto position = next_waiter_locked(now);
    const TurnClientId next_id = *position;
    const bool starved = position != waiters_.begin();
    waiters_.erase(position);
    floor_until_ns_.store(starved ? now + ns(options_.floor_slice) : 0, std::memory_order_relaxed);
    clients_[next_id]->in_line.store(false, std::memory_order_relaxed);
    waiting_.fetch_sub(1, std::memory_order_relaxed);
    next = clients_[next_id].get();
    holder_ = next_id;
    holder_thread_ = next->waiting_thread;
    holder_kind_ = next->waiting_kind;
    depth_ = 1;
  }
  next->granted_at_ns.store(now_ns(), std::memory_order_relaxed);
  next->granted.store(1, std::memory_order_release);
  next->granted.notify_one();
}

// The first in line, unless a waiter further back has waited starved_after: then the one
// that has waited longest.
std::deque<TurnClientId>::iterator SerialTurn::next_waiter_locked(std::int64_t now) {
  auto chosen = waiters_.begin();
  for (auto it = std::next(waiters_.begin()); it != waiters_.end(); ++it) {
    const std::int64_t since = clients_[*it]->in_line_since_ns;
    if (now - since >= ns(options_.starved_after) && since < clients_[*chosen]->in_line_since_ns) {
      chosen = it;
    }
  }
  return chosen;
}

bool SerialTurn::in_floor_slice() const {
  return now_ns() < floor_until_ns_.load(std::memory_order_relaxed);
}

// Pieces while an engine the holder would yield to has asked for the turn lately: for a
// prefill, one of its priority or higher; for other bursts, a higher one only.
std::optional<double> SerialTurn::piece_budget_ms(TurnClientId id, BurstKind kind) const {
  if (options_.quantum != Quantum::op || in_floor_slice()) return std::nullopt;
  const Client& me = *clients_.at(id);
  const std::int64_t now = now_ns();
  for (const auto& other : clients_) {
    if (other.get() == &me) continue;
    const std::int64_t asked = other->asked_at_ns.load(std::memory_order_relaxed);
    const bool active = other->in_line.load(std::memory_order_relaxed) ||
                        (asked != 0 && now - asked < ContentionClock::kRecentNs);
    if (!active) continue;
    const int theirs = other->priority.load(std::memory_order_relaxed);
    const int mine = me.priority.load(std::memory_order_relaxed);
    if (kind == BurstKind::prefill ? theirs >= mine : theirs > mine) {
      return options_.max_hold_ms;
    }
  }
  return std::nullopt;
}

void SerialTurn::yield_point(TurnClientId id, Boundary boundary) {
  const bool piece_end = is_quantum_boundary(options_, holder_kind_, boundary);
  // Under the op quantum any burst yields at a layer boundary to a higher priority.
  const bool preemptible = options_.quantum == Quantum::op && boundary == Boundary::layer;
  if (!piece_end && !preemptible) return;
  Client& client = *clients_[id];
  // Keep at most one quantum in flight, so a waiter never waits for more than one.
  if (piece_end) client.stream->synchronize();
  if (waiting_.load(std::memory_order_acquire) == 0 || in_floor_slice()) return;
  {
    std::lock_guard lock(mu_);
    if (waiters_.empty()) return;
    const int first = clients_[waiters_.front()]->priority.load(std::memory_order_relaxed);
    const int mine = client.priority.load(std::memory_order_relaxed);
    if (piece_end ? first < mine : first <= mine) return;
  }
  const int saved_depth = depth_;
  const BurstKind kind = holder_kind_;
  depth_ = 1;
  std::optional<GpuError> error = hand_over(id, /*take_errors=*/true);
  metrics_.record_yield(id);
  acquire(id, kind);
  depth_ = saved_depth;
  if (error) throw *error;
}

}  // namespace baton
