#include "baton/turn/host_grant.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "baton/common/clock.h"

namespace baton {
namespace {

static_assert(std::atomic<std::uint32_t>::is_always_lock_free &&
                  sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "the grant word must be a plain 32-bit futex word");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
              std::atomic<std::int64_t>::is_always_lock_free);

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value, const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: waiter and waker may be two processes mapping one segment.
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, timeout, nullptr,
                   0);
}

}  // namespace

std::int32_t grant_next_locked(HostSharedState& state) {
  HostLine& line = state.line;
  if (line.length == 0) {
    line.holder = kHostNone;
    return kHostNone;
  }
  const std::int32_t next = next_waiter_locked(state);
  remove_waiter_locked(state, next);
  line.holder = next;
  HostClientSlot& slot = state.clients[next];
  slot.granted_at_ns.store(now_ns(), std::memory_order_relaxed);
  // seq_cst, paired with the waiter's store to `parked`: one of the two sees the other.
  slot.grant.store(1, std::memory_order_seq_cst);
  return next;
}

std::int32_t next_waiter_locked(const HostSharedState& state) {
  const HostLine& line = state.line;
  const auto before = [&state](std::int32_t a, std::int32_t b) {
    return state.clients[a].virtual_ns < state.clients[b].virtual_ns;
  };
  const std::int32_t* end = line.waiters + line.length;
  const std::int32_t* first = std::min_element(line.waiters, end, before);
  return first == end ? kHostNone : *first;
}

double floor_locked(HostSharedState& state) {
  HostLine& line = state.line;
  double least = std::numeric_limits<double>::infinity();
  if (line.holder != kHostNone) least = state.clients[line.holder].virtual_ns;
  for (std::uint32_t i = 0; i < line.length; ++i) {
    least = std::min(least, state.clients[line.waiters[i]].virtual_ns);
  }
  if (std::isfinite(least)) line.floor_ns = std::max(line.floor_ns, least);
  return line.floor_ns;
}

void remove_waiter_locked(HostSharedState& state, std::int32_t slot) {
  HostLine& line = state.line;
  std::int32_t* end = line.waiters + line.length;
  std::int32_t* kept = std::remove(line.waiters, end, slot);
  line.length = static_cast<std::uint32_t>(kept - line.waiters);
  line.waiting.store(line.length, std::memory_order_release);
}

std::int32_t free_client_locked(HostSharedState& state, std::int32_t slot) {
  remove_waiter_locked(state, slot);
  HostClientSlot& client = state.clients[slot];
  client.process = kHostNone;
  client.grant.store(0, std::memory_order_relaxed);
  client.wanting = 0;
  if (state.line.holder != slot) return kHostNone;
  return grant_next_locked(state);
}

void wake_client(HostSharedState& state, std::int32_t slot) {
  if (slot == kHostNone) return;
  HostClientSlot& client = state.clients[slot];
  // A waiter still spinning sees the grant by itself: no system call.
  if (client.parked.load(std::memory_order_seq_cst) != 0) {
    futex(client.grant, FUTEX_WAKE, INT_MAX, nullptr);
  }
}

void park_client(HostClientSlot& slot, std::chrono::nanoseconds timeout) {
  slot.parked.store(1, std::memory_order_seq_cst);
  if (slot.grant.load(std::memory_order_seq_cst) == 0 && timeout.count() > 0) {
    timespec relative{};
    relative.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
    relative.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
    // EINTR, ETIMEDOUT and EAGAIN (granted meanwhile) all mean: look again.
    futex(slot.grant, FUTEX_WAIT, 0, &relative);
  }
  slot.parked.store(0, std::memory_order_relaxed);
}

}  // namespace baton
