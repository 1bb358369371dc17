// HostSegment: the POSIX shared-memory segment /dev/shm/baton-turn-<name> through which
// the baton processes of one machine share one GPU turn (host_turn.h) and one overlap
// meter (host_overlap.h). It holds a robust, process-shared mutex, a table of attached
// processes, the turn's client slots and line of waiters, and the host-wide overlap
// counters (host_shared_state.h).
//
// Attach: the process whose shm_open(O_EXCL) wins sizes and initialises the segment, then
// publishes a magic/version word with release ordering; the others wait for that word
// (bounded) and check it and the size. Each attached HostSegment is one entry of the
// process table until it is destroyed.
//
// Death: an entry whose process is dead (kill(pid, 0) says ESRCH, /proc/<pid>/stat says
// zombie or dead, e.g. a SIGKILLed child not reaped yet, or the start time there differs
// because the pid was reused) is reaped by whoever notices: its client slots and waiters
// are freed, a turn it held passes to the first waiter and its busy streams stop counting.
// A process that dies holding the mutex leaves it EOWNERDEAD; the next locker makes it
// consistent, repairs the line and reaps every dead entry (one still exiting then, whose
// robust list the kernel releases before it turns zombie, is reaped by a later scan). Every
// attacher must share one pid namespace.
//
// Segments are never unlinked automatically: a process attaching after an unlink would get
// a new segment while the others still use the old one, and the host would have two turns.
// remove() is for tests and tools, when no baton uses the name. The file is mode 0600: the
// batons of one user share a turn.
//
// Thread-safety: every member is thread-safe. HostSharedState is guarded by its mutex
// (take it with lock(), briefly, never across a blocking call), except the fields marked
// "atomic", which are read without it.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "baton/common/unique_fd.h"
#include "baton/turn/host_shared_state.h"

namespace baton {

class HostSegment {
 public:
  // Attaches to the segment of `name` ([A-Za-z0-9._-], at most 200), creating it if need
  // be, and enters this process in its table. Throws std::runtime_error naming the file
  // for a bad name, a segment of another layout, a creator that did not finish within
  // `attach_timeout`, or a full table; std::system_error when a system call fails.
  explicit HostSegment(std::string_view name,
                       std::chrono::milliseconds attach_timeout = std::chrono::seconds(2));
  // Leaves the table: frees this entry's client slots and waiters.
  ~HostSegment();
  HostSegment(const HostSegment&) = delete;
  HostSegment& operator=(const HostSegment&) = delete;

  // Unlinks the segment of `name` (absent: nothing to do). For tests and tools.
  static void remove(std::string_view name);
  static std::string file_of(std::string_view name);  // "/dev/shm/baton-turn-<name>"

  // The segment mutex, held. Taking it after a holder died reaps every dead entry first.
  class Lock {
   public:
    explicit Lock(const HostSegment& segment);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    HostSharedState& state() const { return state_; }

   private:
    HostSharedState& state_;
  };
  [[nodiscard]] Lock lock() const { return Lock(*this); }

  // For the atomics read without the mutex.
  HostSharedState& shared() const { return *state_; }
  std::int32_t self() const { return self_; }
  const std::string& file() const { return file_; }

  // Reaps the process of the turn's holder if it is dead; true if it did. The liveness
  // check runs outside the mutex.
  bool reap_holder_if_dead() const;
  // Reaps every dead entry (checked outside the mutex); returns how many.
  std::size_t reap_dead() const;
  // Entries in use, and processes reaped so far (momentary readings).
  std::uint32_t processes() const;
  std::uint64_t reaped() const;

 private:
  struct Unmap {
    void operator()(HostSharedState* state) const noexcept;
  };
  struct EntryRef {
    std::int32_t index = kHostNone;
    pid_t pid = 0;
    std::uint64_t start_time = 0;
  };

  void create(const UniqueFd& fd);
  void open_existing(const UniqueFd& fd, std::chrono::steady_clock::time_point deadline);
  void map(const UniqueFd& fd);
  void enter_table();
  bool reap_if_dead(const EntryRef& entry) const;
  // Under the mutex, after EOWNERDEAD: reaps the dead and repairs a half-done update.
  void recover_locked() const;

  const std::string name_;
  const std::string file_;
  std::unique_ptr<HostSharedState, Unmap> state_;
  std::int32_t self_ = kHostNone;
};

// A name a segment may have: 1 to 200 of A-Z a-z 0-9 . _ - (not "." or "..").
bool valid_host_turn_name(std::string_view name);

}  // namespace baton
