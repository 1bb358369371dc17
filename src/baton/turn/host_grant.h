// The host-wide turn's grant protocol over the shared state (host_shared_state.h): who
// holds the turn next (the fair share's least virtual time, first in line among equals),
// the line of waiters, and the wake-up of a waiter that may sleep in another process (a
// shared futex on its slot's grant word). HostTurn runs it; HostSegment frees the slots
// of a dead process through it.
// Thread-safety: the *_locked functions under the segment's mutex; wake_client and
// park_client at any time, without it.
#pragma once

#include <chrono>
#include <cstdint>

#include "baton/turn/host_shared_state.h"

namespace baton {

// Under the mutex: hands the turn to the waiter of least virtual time, the first in line
// of equals (returns its slot, to wake with wake_client() once the mutex is released) or
// frees it (returns kHostNone).
std::int32_t grant_next_locked(HostSharedState& state);
// Under the mutex: the slot grant_next_locked() would pick (kHostNone: nobody waits).
std::int32_t next_waiter_locked(const HostSharedState& state);
// Under the mutex: raises and returns the fair share's floor, the least virtual time of
// the slots that want the turn now (the holder's present hold is not counted: its device
// time is known to its own process only, and at most one burst long).
double floor_locked(HostSharedState& state);
// Under the mutex: takes `slot` out of the line (if it waits there).
void remove_waiter_locked(HostSharedState& state, std::int32_t slot);
// Under the mutex: frees client `slot`; a turn it held passes on (returns who to wake).
std::int32_t free_client_locked(HostSharedState& state, std::int32_t slot);
// Wakes the waiter of `slot` if it sleeps (kHostNone: nothing to do). Any time.
void wake_client(HostSharedState& state, std::int32_t slot);
// The waiter of `slot`, without the mutex: sleeps while its grant reads 0, for at most
// `timeout` (a shared futex: the waker may be another process).
void park_client(HostClientSlot& slot, std::chrono::nanoseconds timeout);

}  // namespace baton
