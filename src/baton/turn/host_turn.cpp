#include "baton/turn/host_turn.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <utility>

#include "baton/common/clock.h"
#include "baton/turn/fair_share.h"
#include "baton/turn/host_grant.h"
#include "baton/turn/serial_steps.h"

namespace baton {
namespace {

// A parked waiter scans every entry (not just the holder's) once per this many polls, so
// that a dead waiter leaves the line before the turn reaches it.
constexpr int kFullScanPolls = 25;

std::int64_t to_ns(std::chrono::nanoseconds d) { return d.count(); }

void enqueue_locked(HostSharedState& s, std::int32_t slot, BurstKind kind, bool decode_first) {
  HostLine& line = s.line;
  assert(line.length < kHostMaxClients && "a client waits from one thread at a time");
  s.clients[slot].waiting_kind = static_cast<std::uint32_t>(kind);
  std::int32_t* position = line.waiters + line.length;
  if (decode_first && kind == BurstKind::decode) {
    // Behind every waiting decode burst, ahead of every other waiter.
    position = std::find_if(line.waiters, position, [&s](std::int32_t w) {
      return s.clients[w].waiting_kind != static_cast<std::uint32_t>(BurstKind::decode);
    });
  }
  std::copy_backward(position, line.waiters + line.length, line.waiters + line.length + 1);
  *position = slot;
  ++line.length;
  line.waiting.store(line.length, std::memory_order_release);
}

}  // namespace

HostTurn::HostTurn(Stream& default_stream, TurnOptions options,
                   std::shared_ptr<HostSegment> segment)
    : default_stream_(default_stream),
      options_(options),
      segment_(segment ? std::move(segment) : std::make_shared<HostSegment>(options.host_name)) {}

HostTurn::~HostTurn() {
  try {
    std::int32_t woken = kHostNone;
    {
      HostSegment::Lock lock(*segment_);
      for (const Client& client : clients_) {
        const std::int32_t next = free_client_locked(lock.state(), client.slot);
        if (next != kHostNone) woken = next;
      }
    }
    wake_client(segment_->shared(), woken);
  } catch (...) {
    // The segment's own detach frees the slots as well.
  }
}

TurnClientId HostTurn::register_client(std::string name, Stream& stream) {
  std::int32_t slot = kHostNone;
  {
    HostSegment::Lock lock(*segment_);
    HostSharedState& s = lock.state();
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(kHostMaxClients); ++i) {
      if (s.clients[i].process != kHostNone) continue;
      s.clients[i].process = segment_->self();
      s.clients[i].grant.store(0, std::memory_order_relaxed);
      s.clients[i].weight = kDefaultTurnWeight;
      s.clients[i].wanting = 0;
      s.clients[i].left_at_ns = std::numeric_limits<std::int64_t>::min() / 2;
      s.clients[i].stretch_device_ns = 0;
      s.clients[i].last_stretch_device_ns = 0;
      // A new client starts level with the engines that want the turn now.
      s.clients[i].virtual_ns = floor_locked(s);
      slot = i;
      break;
    }
  }
  if (slot == kHostNone) {
    throw std::runtime_error("[HostTurn] " + segment_->file() + ": all " +
                             std::to_string(kHostMaxClients) + " client slots are taken");
  }
  clients_.push_back(Client{.stream = &stream, .slot = slot});
  return metrics_.add_client(std::move(name));
}

void HostTurn::acquire(TurnClientId id, BurstKind kind) {
  const Client& client = clients_.at(id);
  if (holder_thread_.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
    // Re-entrant: only the holder's own stream is drained at the end, so a nested hold
    // must be for the same client.
    ++depth_;
    return;
  }
  const std::int64_t asked_at = now_ns();
  const bool at_once = take_or_enqueue(client, kind);
  if (!at_once) {
    contention_.saw_contention();
    wait_for_grant(client);
  }
  holder_thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  holder_kind_ = kind;
  depth_ = 1;
  device_at_grant_ns_ = client.stream->device_ns() + default_stream_.device_ns();
  if (at_once) {
    hold_start_ns_ = asked_at;
    metrics_.record_acquire(id, 0);
    return;
  }
  const std::int64_t running_at = now_ns();
  hold_start_ns_ = running_at;
  metrics_.record_acquire(id, running_at - asked_at);
  const HostClientSlot& slot = segment_->shared().clients[client.slot];
  metrics_.record_handover(id, running_at - slot.granted_at_ns.load(std::memory_order_relaxed));
}

void HostTurn::set_weight(TurnClientId id, double weight) {
  if (const auto problem = weight_problem(weight)) throw std::invalid_argument(*problem);
  {
    HostSegment::Lock lock(*segment_);
    lock.state().clients[clients_.at(id).slot].weight = weight;
  }
  metrics_.set_weight(id, weight);
}

bool HostTurn::take_or_enqueue(const Client& client, BurstKind kind) {
  HostSegment::Lock lock(*segment_);
  HostSharedState& s = lock.state();
  HostClientSlot& slot = s.clients[client.slot];
  if (slot.wanting == 0) {
    ShareAccount account{.weight = slot.weight, .virtual_ns = slot.virtual_ns};
    rejoin(account, floor_locked(s), now_ns() - slot.left_at_ns);
    slot.virtual_ns = account.virtual_ns;
    slot.wanting = 1;
  }
  if (s.line.holder == kHostNone) {
    assert(s.line.length == 0);
    s.line.holder = client.slot;
    return true;
  }
  enqueue_locked(s, client.slot, kind, options_.decode_first);
  return false;
}

void HostTurn::wait_for_grant(const Client& client) const {
  HostClientSlot& slot = segment_->shared().clients[client.slot];
  const std::int64_t spin_until = now_ns() + to_ns(options_.spin);
  while (slot.grant.load(std::memory_order_acquire) == 0 && now_ns() < spin_until) cpu_relax();
  const std::int64_t poll =
      std::max<std::int64_t>(to_ns(options_.liveness_poll), to_ns(std::chrono::milliseconds(1)));
  std::int64_t next_check = now_ns() + poll;
  int polls = 0;
  while (slot.grant.load(std::memory_order_acquire) == 0) {
    const std::int64_t now = now_ns();
    if (now < next_check) {
      park_client(slot, std::chrono::nanoseconds(next_check - now));
      continue;
    }
    // Nobody handed the turn over for a whole poll: is its holder still alive?
    next_check = now + poll;
    if (++polls % kFullScanPolls == 0) {
      segment_->reap_dead();
    } else {
      segment_->reap_holder_if_dead();
    }
  }
  slot.grant.store(0, std::memory_order_relaxed);
}

void HostTurn::release(TurnClientId id) {
  assert(depth_ > 0);
  if (--depth_ > 0) return;
  if (auto error = hand_over(id, /*take_errors=*/true, /*leaving=*/true)) throw *error;
}

void HostTurn::release_quietly(TurnClientId id) noexcept {
  assert(depth_ > 0);
  if (--depth_ > 0) return;
  (void)hand_over(id, /*take_errors=*/false, /*leaving=*/true);
}

std::optional<GpuError> HostTurn::hand_over(TurnClientId id, bool take_errors, bool leaving,
                                            std::int64_t* passed_at_ns) noexcept {
  const Client& client = clients_[id];
  std::optional<GpuError> error =
      drain_for_handover(*client.stream, default_stream_, take_errors, options_.handover_spin);
  metrics_.record_hold(id, now_ns() - hold_start_ns_);
  const std::int64_t device = running_device_ns(client);
  metrics_.record_device(id, device);
  if (passed_at_ns) *passed_at_ns = now_ns();
  pass_turn(client, leaving, device);
  return error;
}

std::int64_t HostTurn::running_device_ns(const Client& client) const {
  return client.stream->device_ns() + default_stream_.device_ns() - device_at_grant_ns_;
}

void HostTurn::pass_turn(const Client& client, bool leaving, std::int64_t device_ns) noexcept {
  holder_thread_.store(std::thread::id(), std::memory_order_relaxed);
  depth_ = 0;
  std::int32_t next = kHostNone;
  {
    HostSegment::Lock lock(*segment_);
    HostSharedState& s = lock.state();
    // Still ours unless this process was taken for dead meanwhile: never hand over another's.
    if (s.line.holder == client.slot) {
      HostClientSlot& slot = s.clients[client.slot];
      ShareAccount account{.weight = slot.weight, .virtual_ns = slot.virtual_ns};
      charge(account, device_ns);
      slot.virtual_ns = account.virtual_ns;
      slot.stretch_device_ns += device_ns;
      floor_locked(s);
      if (leaving) {
        slot.wanting = 0;
        slot.left_at_ns = now_ns();
        slot.last_stretch_device_ns = std::exchange(slot.stretch_device_ns, 0);
      }
      next = grant_next_locked(s);
    }
  }
  wake_client(segment_->shared(), next);
}

std::optional<double> HostTurn::piece_budget_ms(TurnClientId id, BurstKind /*kind*/) const {
  std::optional<double> budget = piece_budget(options_, waiting() > 0, contention_);
  if (!budget || holder_thread_.load(std::memory_order_relaxed) != std::this_thread::get_id()) {
    return budget;
  }
  // Cut to what keeps the weights for each engine owed the turn, between two steps or in line.
  const Client& client = clients_.at(id);
  HostSegment::Lock lock(*segment_);
  const HostSharedState& s = lock.state();
  const HostClientSlot& mine = s.clients[client.slot];
  const double holder =
      virtual_now(ShareAccount{.weight = mine.weight, .virtual_ns = mine.virtual_ns},
                  running_device_ns(client));
  const std::int64_t now = now_ns();
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(kHostMaxClients); ++i) {
    const HostClientSlot& other = s.clients[i];
    if (i == client.slot || other.process == kHostNone) continue;
    const std::int64_t away = other.wanting != 0 ? 0 : now - other.left_at_ns;
    if (const auto cap =
            owed_piece_ms(mine.weight, holder,
                          ShareAccount{.weight = other.weight, .virtual_ns = other.virtual_ns},
                          away, other.last_stretch_device_ns)) {
      budget = std::min(*budget, std::max(*cap, kMinMaxHoldMs));
    }
  }
  return budget;
}

std::chrono::nanoseconds HostTurn::yield_point(TurnClientId id, Boundary boundary) {
  const bool piece_end = is_quantum_boundary(options_, holder_kind_, boundary);
  const bool preemptible = options_.quantum == Quantum::op && boundary == Boundary::layer;
  if (!piece_end && !preemptible) return {};
  const Client& client = clients_[id];
  if (piece_end) {
    // Spin for the piece only when a hand-over may follow it.
    end_quantum(*client.stream, boundary,
                waiting() != 0 ? options_.handover_spin : std::chrono::microseconds(0));
  }
  if (waiting() == 0) return {};
  contention_.saw_contention();
  {
    HostSegment::Lock lock(*segment_);
    const HostSharedState& s = lock.state();
    const std::int32_t next = next_waiter_locked(s);
    if (next == kHostNone) return {};
    const HostClientSlot& mine = s.clients[client.slot];
    const double holder =
        virtual_now(ShareAccount{.weight = mine.weight, .virtual_ns = mine.virtual_ns},
                    running_device_ns(client));
    if (s.clients[next].virtual_ns > holder) return {};
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

std::size_t HostTurn::waiting() const {
  return segment_->shared().line.waiting.load(std::memory_order_acquire);
}

}  // namespace baton
