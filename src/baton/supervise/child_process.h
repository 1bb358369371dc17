// Child: one started child process, until it is reaped. start_child: forks and execs a
// command, and reports a failed exec through a close-on-exec pipe, so that "cannot be
// executed" is told apart from a child that ran and exited.
// Thread-safety: a Child belongs to one thread (move-only). start_child may run beside
// other threads of the process: the new child makes only async-signal-safe calls before
// exec. It reaps only its own child (never waitpid(-1)).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton::supervise_detail {

// A started child, until it is reaped. Destroying it while it runs (only on an exception)
// kills it with SIGKILL and reaps it: no orphan, no zombie.
class Child {
 public:
  Child() = default;
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(Child&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}
  Child& operator=(Child&&) = delete;
  ~Child();

  pid_t pid() const { return pid_; }
  // Sending to a child that has ended but is not reaped yet is harmless: its pid stays
  // reserved until waitpid, so the signal can never reach another process.
  void signal(int sig) const;
  // The wait status once the child has ended (and is reaped); nothing while it runs.
  std::optional<int> try_reap();
  int wait();

 private:
  std::optional<int> reap(int flags);

  pid_t pid_ = -1;
};

struct Start {
  Child child;         // running when exec succeeded
  int exec_error = 0;  // else the errno of the failed exec; that child is reaped already
};

// Starts `command` (command[0] looked up in PATH) with the default handlers and the
// caller's signal mask. The child is killed if this process dies (Linux). Throws
// std::system_error when the pipe or the fork fails.
Start start_child(const std::vector<std::string>& command);

}  // namespace baton::supervise_detail
