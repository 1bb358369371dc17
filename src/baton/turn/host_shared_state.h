// HostSharedState: the layout of the host-wide turn's shared-memory segment (host_segment.h
// maps it): the table of attached processes, the turn's client slots and line of waiters,
// and the host-wide overlap counters, with the counters' updates. All integers, lock-free
// atomics and a pthread mutex, so that the zero bytes of a fresh segment are the initial
// state, save what the creator sets.
// Thread-safety: guarded by the segment's mutex (HostSegment::Lock), except the fields
// marked "atomic", which are read without it.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace baton {

inline constexpr std::uint32_t kHostMaxProcesses = 32;
inline constexpr std::uint32_t kHostMaxClients = 64;
inline constexpr std::int32_t kHostNone = -1;  // no process, no client

struct HostProcess {
  pid_t pid = 0;
  std::uint32_t in_use = 0;
  std::uint64_t start_time = 0;     // /proc/<pid>/stat field 22, against pid reuse
  std::uint32_t busy_streams = 0;   // its streams with work in flight (HostOverlapMeter)
  std::uint32_t max_busy_seen = 0;  // most streams busy on the host at once meanwhile
};

struct alignas(64) HostClientSlot {
  std::atomic<std::uint32_t> grant;         // atomic; 1: handed the turn; a shared futex word
  std::atomic<std::uint32_t> parked;        // atomic; 1 while its waiter sleeps on `grant`
  std::atomic<std::int64_t> granted_at_ns;  // atomic; stored before `grant`
  std::int32_t process;                     // owning entry; kHostNone: free
  std::uint32_t waiting_kind;               // a BurstKind, while in line
  // The fair share (fair_share.h): the slot's weight and virtual time (charged when a hold
  // ends), and whether it wants the turn (holding or in line, yields included).
  double weight;
  double virtual_ns;
  std::uint32_t wanting;
  std::int64_t left_at_ns;  // when it last stopped wanting (the rejoin grace); steady clock
  // Device time granted since it last began wanting, and in its last stretch of wanting
  // (fair_share.h's owed_piece_ms).
  std::int64_t stretch_device_ns;
  std::int64_t last_stretch_device_ns;
};

struct HostLine {
  std::int32_t holder;  // client slot, kHostNone: free; never free while waiters wait
  std::uint32_t length;
  std::int32_t waiters[kHostMaxClients];  // client slots, first in line first
  std::atomic<std::uint32_t> waiting;     // atomic copy of `length`, for yield points
  double floor_ns;                        // the fair share's floor; only ever rises
};

struct HostOverlapCounters {
  std::uint32_t busy;  // streams busy on the host
  std::uint32_t max_busy;
  std::uint64_t episodes;
  std::int64_t episode_start_ns;  // steady clock (CLOCK_MONOTONIC: one for every process)
  std::int64_t closed_ns;
};

// The segment's contents. All integers, lock-free atomics and a pthread mutex: the zero
// bytes of a fresh segment are their initial state, save what the creator sets.
struct HostSharedState {
  std::atomic<std::uint64_t> header;  // magic and layout version, published last
  std::uint64_t size;                 // sizeof(HostSharedState) of the creator
  pthread_mutex_t mutex;              // robust, process-shared
  std::uint64_t reaped;               // dead processes reaped so far
  HostProcess processes[kHostMaxProcesses];
  HostClientSlot clients[kHostMaxClients];
  HostLine line;
  HostOverlapCounters overlap;
};

// Under the mutex: `count` more streams of this host are busy at `at_ns` (steady clock);
// an overlap episode opens when two or more are.
void add_busy_locked(HostSharedState& state, std::uint32_t count, std::int64_t at_ns);
void remove_busy_locked(HostSharedState& state, std::uint32_t count, std::int64_t at_ns);

}  // namespace baton
