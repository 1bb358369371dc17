#include "baton/turn/serial_turn.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <utility>

#include "baton/common/clock.h"
#include "baton/turn/serial_steps.h"

namespace baton {
namespace {

constexpr std::chrono::nanoseconds kNoSpin{0};

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
  bool next_in_drain = false;
  {
    std::lock_guard lock(mu_);
    if (holder_ && holder_thread_ == std::this_thread::get_id()) {
      // Re-entrant: the holder's thread keeps the turn. Only its own stream is drained at
      // the end, so a nested hold must be for the same client.
      assert(*holder_ == id && "nested acquire by a different client");
      ++depth_;
      return;
    }
    if (!client.wanting) {
      rejoin(client.account, floor_locked(), asked_at - client.left_at_ns);
      client.wanting = true;
    }
    if (!holder_) {
      assert(waiters_.empty());
      holder_ = id;
      holder_thread_ = std::this_thread::get_id();
      holder_kind_ = kind;
      depth_ = 1;
      hold_start_ns_ = asked_at;
      device_at_grant_ns_ = client.stream->device_ns() + default_stream_.device_ns();
      metrics_.record_acquire(id, 0);
      return;
    }
    enqueue_locked(id, kind);
    // Alone in line while the holder drains to hand over: as good as warned, the grant is
    // a drain away (behind others in line it is not, and it sleeps as usual).
    next_in_drain = draining_.load(std::memory_order_relaxed) && waiters_.size() == 1;
  }
  wait_for_grant(client, next_in_drain);
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
  waiters_.push_back(id);
  client.in_line.store(true, std::memory_order_relaxed);
  waiting_.fetch_add(1, std::memory_order_release);
}

void SerialTurn::set_weight(TurnClientId id, double weight) {
  if (const auto problem = weight_problem(weight)) throw std::invalid_argument(*problem);
  {
    std::lock_guard lock(mu_);
    clients_.at(id)->account.weight = weight;
  }
  metrics_.set_weight(id, weight);
}

std::int64_t SerialTurn::running_device_ns(const Client& holder) const {
  return holder.stream->device_ns() + default_stream_.device_ns() - device_at_grant_ns_;
}

double SerialTurn::floor_locked() {
  std::optional<double> least;
  if (holder_) {
    const Client& holder = *clients_[*holder_];
    least = virtual_now(holder.account, running_device_ns(holder));
  }
  for (const TurnClientId w : waiters_) {
    const double v = clients_[w]->account.virtual_ns;
    least = least ? std::min(*least, v) : v;
  }
  if (least) floor_ns_ = std::max(floor_ns_, *least);
  return floor_ns_;
}

std::deque<TurnClientId>::iterator SerialTurn::next_waiter_locked() {
  const auto before = [&](TurnClientId a, TurnClientId b) {
    const Client& x = *clients_[a];
    const Client& y = *clients_[b];
    if (x.account.virtual_ns != y.account.virtual_ns) {
      return x.account.virtual_ns < y.account.virtual_ns;
    }
    return options_.decode_first && x.waiting_kind == BurstKind::decode &&
           y.waiting_kind != BurstKind::decode;
  };
  // min_element keeps the first of equals: arrival order.
  return std::min_element(waiters_.begin(), waiters_.end(), before);
}

void SerialTurn::wait_for_grant(Client& client, bool warned) const {
  using std::chrono::nanoseconds;
  std::int64_t spin_until =
      now_ns() +
      nanoseconds(warned ? std::max(options_.spin, options_.handover_spin) : options_.spin).count();
  for (;;) {
    std::uint32_t state = client.granted.load(std::memory_order_acquire);
    if (state == kGranted) break;
    if (now_ns() < spin_until) {
      cpu_relax();
    } else if (state == kWarned) {
      // A holder drains for a hand-over, likely to this client: spin through the drain.
      if (client.granted.compare_exchange_strong(state, kWaiting, std::memory_order_acquire)) {
        spin_until = now_ns() + nanoseconds(options_.handover_spin).count();
      }
    } else {
      client.granted.wait(kWaiting, std::memory_order_acquire);
    }
  }
  client.granted.store(kWaiting, std::memory_order_relaxed);
}

void SerialTurn::warn_next_waiter() {
  if (options_.handover_spin.count() == 0) return;
  draining_.store(true, std::memory_order_release);
  if (waiting_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard lock(mu_);
  if (waiters_.empty()) return;
  Client& next = *clients_[*next_waiter_locked()];
  std::uint32_t waiting = kWaiting;
  if (next.granted.compare_exchange_strong(waiting, kWarned, std::memory_order_release,
                                           std::memory_order_relaxed)) {
    next.granted.notify_one();
  }
}

void SerialTurn::release(TurnClientId id) {
  assert(depth_ > 0);
  if (--depth_ > 0) return;
  if (auto error = hand_over(id, /*take_errors=*/true, /*leaving=*/true)) throw *error;
}

void SerialTurn::release_quietly(TurnClientId id) noexcept {
  assert(depth_ > 0);
  if (--depth_ > 0) return;
  (void)hand_over(id, /*take_errors=*/false, /*leaving=*/true);
}

std::optional<GpuError> SerialTurn::hand_over(TurnClientId id, bool take_errors, bool leaving,
                                              std::int64_t* passed_at_ns) noexcept {
  Client& client = *clients_[id];
  warn_next_waiter();
  std::optional<GpuError> error =
      drain_for_handover(*client.stream, default_stream_, take_errors, options_.handover_spin);
  const std::int64_t device = running_device_ns(client);
  metrics_.record_hold(id, now_ns() - hold_start_ns_);
  metrics_.record_device(id, device);
  if (passed_at_ns) *passed_at_ns = now_ns();
  pass_turn(id, leaving, device);
  return error;
}

void SerialTurn::pass_turn(TurnClientId releaser, bool leaving, std::int64_t device_ns) {
  Client* next = nullptr;
  {
    std::lock_guard lock(mu_);
    draining_.store(false, std::memory_order_relaxed);
    Client& client = *clients_[releaser];
    charge(client.account, device_ns);
    client.stretch_device_ns += device_ns;
    device_at_grant_ns_ += device_ns;  // charged: no longer running time
    // The releaser still counts for the floor: its hold was device time others did without.
    floor_locked();
    if (leaving) {
      client.wanting = false;
      client.left_at_ns = now_ns();
      client.last_stretch_device_ns = std::exchange(client.stretch_device_ns, 0);
    }
    if (waiters_.empty()) {
      holder_.reset();
      holder_thread_ = std::thread::id();
      depth_ = 0;
      return;
    }
    const auto position = next_waiter_locked();
    const TurnClientId next_id = *position;
    waiters_.erase(position);
    clients_[next_id]->in_line.store(false, std::memory_order_relaxed);
    waiting_.fetch_sub(1, std::memory_order_relaxed);
    next = clients_[next_id].get();
    holder_ = next_id;
    holder_thread_ = next->waiting_thread;
    holder_kind_ = next->waiting_kind;
    depth_ = 1;
    device_at_grant_ns_ = next->stream->device_ns() + default_stream_.device_ns();
  }
  next->granted_at_ns.store(now_ns(), std::memory_order_relaxed);
  next->granted.store(kGranted, std::memory_order_release);
  next->granted.notify_one();
}

// Pieces while another engine wants the turn or asked for it lately (it is between two
// steps and will be back): a waiter that is owed the turn then waits for one piece.
std::optional<double> SerialTurn::piece_budget_ms(TurnClientId id, BurstKind /*kind*/) const {
  if (options_.quantum != Quantum::op) return std::nullopt;
  const Client& me = *clients_.at(id);
  const std::int64_t now = now_ns();
  for (const auto& other : clients_) {
    if (other.get() == &me) continue;
    const std::int64_t asked = other->asked_at_ns.load(std::memory_order_relaxed);
    if (other->in_line.load(std::memory_order_relaxed) ||
        (asked != 0 && now - asked < ContentionClock::kRecentNs)) {
      return owed_budget_ms(id);
    }
  }
  return std::nullopt;
}

double SerialTurn::owed_budget_ms(TurnClientId id) const {
  double budget = options_.max_hold_ms;
  std::lock_guard lock(mu_);
  if (holder_ != id) return budget;
  const Client& me = *clients_[id];
  const double mine = virtual_now(me.account, running_device_ns(me));
  const std::int64_t now = now_ns();
  for (const auto& other : clients_) {
    if (other.get() == &me) continue;
    // In line is away for no time: it may have come back since the last yield point.
    const std::int64_t away = other->wanting ? 0 : now - other->left_at_ns;
    if (const auto cap = owed_piece_ms(me.account.weight, mine, other->account, away,
                                       other->last_stretch_device_ns)) {
      budget = std::min(budget, std::max(*cap, kMinMaxHoldMs));
    }
  }
  return budget;
}

std::chrono::nanoseconds SerialTurn::yield_point(TurnClientId id, Boundary boundary) {
  const bool piece_end = is_quantum_boundary(options_, holder_kind_, boundary);
  // Under the op quantum any burst may hand over at a layer boundary.
  const bool preemptible = options_.quantum == Quantum::op && boundary == Boundary::layer;
  if (!piece_end && !preemptible) return {};
  Client& client = *clients_[id];
  if (piece_end) {
    // Spin for the piece only when a hand-over may follow it.
    const bool waiters = waiting_.load(std::memory_order_acquire) != 0;
    end_quantum(*client.stream, boundary, waiters ? options_.handover_spin : kNoSpin);
  }
  if (waiting_.load(std::memory_order_acquire) == 0) return {};
  {
    std::lock_guard lock(mu_);
    if (waiters_.empty()) return {};
    const double owed = clients_[*next_waiter_locked()]->account.virtual_ns;
    if (owed > virtual_now(client.account, running_device_ns(client))) return {};
  }
  const int saved_depth = depth_;
  const BurstKind kind = holder_kind_;
  depth_ = 1;
  std::int64_t handed_over_at = 0;
  std::optional<GpuError> error =
      hand_over(id, /*take_errors=*/true, /*leaving=*/false, &handed_over_at);
  metrics_.record_yield(id);
  acquire(id, kind);
  depth_ = saved_depth;
  if (error) throw *error;
  return std::chrono::nanoseconds(now_ns() - handed_over_at);
}

}  // namespace baton
