#include "baton/turn/host_segment.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "baton/common/clock.h"
#include "baton/common/throw_errno.h"
#include "baton/gpu/proc_process.h"
#include "baton/turn/host_grant.h"
#include "baton/turn/serial_steps.h"

namespace baton {
namespace {

constexpr std::uint64_t kMagic = 0x4254524eu;  // "BTRN"
constexpr std::uint64_t kVersion = 3;          // bump with any change of HostSharedState
constexpr std::uint64_t kHeader = (kMagic << 32) | kVersion;
constexpr std::size_t kMaxNameLength = 200;
constexpr int kLockSpins = 200;  // a few microseconds at most

}  // namespace

bool valid_host_turn_name(std::string_view name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  return !name.empty() && name.size() <= kMaxNameLength && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), allowed);
}

namespace {

std::string shm_name(std::string_view name) { return "/baton-turn-" + std::string(name); }

bool process_alive(pid_t pid, std::uint64_t start_time) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const std::optional<ProcStat> stat = read_proc_stat(static_cast<std::uint32_t>(pid));
  if (!stat) return false;  // gone between the two looks
  // A zombie has released its robust mutexes and will never run again.
  if (stat->state == 'Z' || stat->state == 'X' || stat->state == 'x') return false;
  return stat->start_time == start_time;
}

// Frees an entry and everything it owns; returns the new holder to wake, if the turn moved.
std::int32_t release_entry_locked(HostSharedState& state, std::int32_t index) {
  const std::int32_t holder_before = state.line.holder;
  for (std::int32_t slot = 0; slot < static_cast<std::int32_t>(kHostMaxClients); ++slot) {
    if (state.clients[slot].process == index) (void)free_client_locked(state, slot);
  }
  HostProcess& process = state.processes[index];
  remove_busy_locked(state, process.busy_streams, now_ns());
  process = HostProcess{};
  return state.line.holder != holder_before ? state.line.holder : kHostNone;
}

[[noreturn]] void never_initialised(const std::string& file) {
  throw std::runtime_error("[HostSegment] " + file +
                           ": its creator never finished setting it up (it died?); remove the "
                           "file when no baton uses it");
}

}  // namespace

std::string HostSegment::file_of(std::string_view name) { return "/dev/shm" + shm_name(name); }

void HostSegment::remove(std::string_view name) {
  if (!valid_host_turn_name(name)) return;
  if (::shm_unlink(shm_name(name).c_str()) != 0 && errno != ENOENT) {
    throw_errno("[HostSegment] removing " + file_of(name));
  }
}

void HostSegment::Unmap::operator()(HostSharedState* state) const noexcept {
  ::munmap(state, sizeof(HostSharedState));
}

HostSegment::HostSegment(std::string_view name, std::chrono::milliseconds attach_timeout)
    : name_(name), file_(file_of(name)) {
  if (!valid_host_turn_name(name)) {
    throw std::runtime_error("[HostSegment] turn name \"" + name_ +
                             "\": use 1 to 200 of A-Z a-z 0-9 . _ -");
  }
  const auto deadline = std::chrono::steady_clock::now() + attach_timeout;
  const std::string shm = shm_name(name);
  for (;;) {
    UniqueFd fd(::shm_open(shm.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
    if (fd.get() >= 0) {
      create(fd);
      break;
    }
    if (errno != EEXIST) throw_errno("[HostSegment] creating " + file_);
    fd = UniqueFd(::shm_open(shm.c_str(), O_RDWR, 0));
    if (fd.get() >= 0) {
      open_existing(fd, deadline);
      break;
    }
    // Removed between the two opens: try to create it again.
    if (errno != ENOENT) throw_errno("[HostSegment] opening " + file_);
    if (std::chrono::steady_clock::now() > deadline) never_initialised(file_);
  }
  reap_dead();
  enter_table();
}

HostSegment::~HostSegment() {
  if (!state_ || self_ == kHostNone) return;
  try {
    std::int32_t woken = kHostNone;
    {
      Lock lock(*this);
      if (lock.state().processes[self_].pid == ::getpid()) {
        woken = release_entry_locked(lock.state(), self_);
      }
    }
    wake_client(*state_, woken);
  } catch (...) {
    // A destructor cannot report; the others reap this entry once the process is gone.
  }
}

void HostSegment::create(const UniqueFd& fd) {
  try {
    if (::ftruncate(fd.get(), sizeof(HostSharedState)) != 0) {
      throw_errno("[HostSegment] sizing " + file_);
    }
    map(fd);
    HostSharedState& s = *state_;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    const int rc = pthread_mutex_init(&s.mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0) {
      throw std::system_error(rc, std::generic_category(), "[HostSegment] mutex of " + file_);
    }
    s.size = sizeof(HostSharedState);
    s.line.holder = kHostNone;
    for (HostClientSlot& slot : s.clients) slot.process = kHostNone;
    s.header.store(kHeader, std::memory_order_release);
  } catch (...) {
    // Half made: unlinked, so that the next attacher makes it anew instead of timing out.
    ::shm_unlink(shm_name(name_).c_str());
    throw;
  }
}

void HostSegment::open_existing(const UniqueFd& fd,
                                std::chrono::steady_clock::time_point deadline) {
  const auto expected = static_cast<off_t>(sizeof(HostSharedState));
  for (;;) {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw_errno("[HostSegment] stat of " + file_);
    if (st.st_size == expected) break;
    if (st.st_size != 0) {
      throw std::runtime_error(
          "[HostSegment] " + file_ + " is " + std::to_string(st.st_size) + " bytes, not the " +
          std::to_string(expected) + " of this baton's layout (version " +
          std::to_string(kVersion) +
          "): another baton version made it; stop the batons using it and remove the file");
    }
    if (std::chrono::steady_clock::now() > deadline) never_initialised(file_);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  map(fd);
  for (;;) {
    const std::uint64_t header = state_->header.load(std::memory_order_acquire);
    if (header == kHeader) break;
    if (header != 0) {
      const std::uint64_t magic = header >> 32;
      throw std::runtime_error(
          "[HostSegment] " + file_ +
          (magic == kMagic ? " has layout version " + std::to_string(header & 0xffffffffu) +
                                 ", this baton uses " + std::to_string(kVersion) +
                                 ": stop the batons using it and remove the file"
                           : " is not a baton turn segment (bad magic word); remove it"));
    }
    if (std::chrono::steady_clock::now() > deadline) never_initialised(file_);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void HostSegment::map(const UniqueFd& fd) {
  void* at =
      ::mmap(nullptr, sizeof(HostSharedState), PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (at == MAP_FAILED) throw_errno("[HostSegment] mapping " + file_);
  state_.reset(static_cast<HostSharedState*>(at));
}

void HostSegment::enter_table() {
  const std::optional<ProcStat> me = read_proc_stat(::getpid());
  if (!me) {
    throw std::runtime_error("[HostSegment] cannot read /proc/" + std::to_string(::getpid()) +
                             "/stat: a host-wide turn needs /proc to tell live processes");
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    {
      Lock lock(*this);
      for (std::int32_t i = 0; i < static_cast<std::int32_t>(kHostMaxProcesses); ++i) {
        HostProcess& entry = lock.state().processes[i];
        if (entry.in_use != 0) continue;
        entry = HostProcess{.pid = ::getpid(),
                            .in_use = 1,
                            .start_time = me->start_time,
                            .busy_streams = 0,
                            .max_busy_seen = 0};
        self_ = i;
        return;
      }
    }
    if (reap_dead() == 0) break;
  }
  throw std::runtime_error("[HostSegment] " + file_ + ": all " + std::to_string(kHostMaxProcesses) +
                           " process entries are taken by live processes");
}

HostSegment::Lock::Lock(const HostSegment& segment) : state_(segment.shared()) {
  // glibc's robust mutexes never spin: a contended lock sleeps in the kernel for far longer
  // than any critical section here lasts, so spin a little first.
  int rc = EBUSY;
  for (int i = 0; i < kLockSpins && rc == EBUSY; ++i) {
    rc = pthread_mutex_trylock(&state_.mutex);
    if (rc == EBUSY) cpu_relax();
  }
  if (rc == EBUSY) rc = pthread_mutex_lock(&state_.mutex);
  if (rc == 0) return;
  if (rc == EOWNERDEAD) {
    // Its owner died inside a critical section: whatever it left half done is repaired.
    pthread_mutex_consistent(&state_.mutex);
    segment.recover_locked();
    return;
  }
  throw std::system_error(rc, std::generic_category(),
                          "[HostSegment] locking the mutex of " + segment.file());
}

HostSegment::Lock::~Lock() { pthread_mutex_unlock(&state_.mutex); }

void HostSegment::recover_locked() const {
  HostSharedState& s = *state_;
  // First the line, which a death in mid-update may have left inconsistent: it keeps only
  // slots in use, once each, never the holder's.
  HostLine& line = s.line;
  if (line.holder < kHostNone || line.holder >= static_cast<std::int32_t>(kHostMaxClients) ||
      (line.holder != kHostNone && s.clients[line.holder].process == kHostNone)) {
    line.holder = kHostNone;
  }
  std::uint32_t kept = 0;
  const std::uint32_t length = std::min(line.length, kHostMaxClients);
  for (std::uint32_t i = 0; i < length; ++i) {
    const std::int32_t slot = line.waiters[i];
    const bool valid = slot >= 0 && slot < static_cast<std::int32_t>(kHostMaxClients) &&
                       s.clients[slot].process != kHostNone && slot != line.holder &&
                       std::find(line.waiters, line.waiters + kept, slot) == line.waiters + kept;
    if (valid) line.waiters[kept++] = slot;
  }
  line.length = kept;
  line.waiting.store(kept, std::memory_order_release);
  // Then the dead, their turn passed on; the wakes happen under the mutex: this is rare.
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(kHostMaxProcesses); ++i) {
    const HostProcess& entry = s.processes[i];
    if (entry.in_use != 0 && !process_alive(entry.pid, entry.start_time)) {
      wake_client(s, release_entry_locked(s, i));
      ++s.reaped;
    }
  }
  if (line.holder == kHostNone) wake_client(s, grant_next_locked(s));
  std::uint32_t busy = 0;
  for (const HostProcess& entry : s.processes) busy += entry.in_use != 0 ? entry.busy_streams : 0;
  s.overlap.busy = busy;
}

bool HostSegment::reap_if_dead(const EntryRef& entry) const {
  if (entry.pid == ::getpid() || process_alive(entry.pid, entry.start_time)) return false;
  std::int32_t woken = kHostNone;
  {
    Lock lock(*this);
    HostSharedState& s = lock.state();
    const HostProcess& now = s.processes[entry.index];
    if (now.in_use == 0 || now.pid != entry.pid || now.start_time != entry.start_time) {
      return false;  // reaped by someone else meanwhile
    }
    woken = release_entry_locked(s, entry.index);
    ++s.reaped;
  }
  wake_client(*state_, woken);
  return true;
}

bool HostSegment::reap_holder_if_dead() const {
  EntryRef entry;
  {
    Lock lock(*this);
    const HostSharedState& s = lock.state();
    if (s.line.holder == kHostNone) return false;
    entry.index = s.clients[s.line.holder].process;
    if (entry.index == kHostNone) return false;
    entry.pid = s.processes[entry.index].pid;
    entry.start_time = s.processes[entry.index].start_time;
  }
  return reap_if_dead(entry);
}

std::size_t HostSegment::reap_dead() const {
  EntryRef entries[kHostMaxProcesses];
  std::size_t count = 0;
  {
    Lock lock(*this);
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(kHostMaxProcesses); ++i) {
      const HostProcess& p = lock.state().processes[i];
      if (p.in_use != 0)
        entries[count++] = EntryRef{.index = i, .pid = p.pid, .start_time = p.start_time};
    }
  }
  std::size_t reaped = 0;
  for (std::size_t i = 0; i < count; ++i) reaped += reap_if_dead(entries[i]) ? 1 : 0;
  return reaped;
}

std::uint32_t HostSegment::processes() const {
  Lock lock(*this);
  std::uint32_t count = 0;
  for (const HostProcess& p : lock.state().processes) count += p.in_use != 0 ? 1 : 0;
  return count;
}

std::uint64_t HostSegment::reaped() const {
  Lock lock(*this);
  return lock.state().reaped;
}

}  // namespace baton
