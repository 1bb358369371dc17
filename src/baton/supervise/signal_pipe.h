// The signals supervise() handles, and the two RAII guards around them. SignalPipe installs
// handlers for SIGTERM, SIGINT and SIGCHLD that write the signal's number into a self-pipe,
// so that the supervisor waits for signals, children and timeouts with one poll() and no
// race. BlockedSignals blocks the same signals on one thread around fork().
// Thread-safety: SignalPipe takes over process-wide signal handlers, so at most one exists
// in a process at a time (a second throws std::logic_error); its wait() belongs to the
// thread that owns it. BlockedSignals changes only the calling thread's signal mask and is
// destroyed on that thread.
#pragma once

#include <signal.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "baton/supervise/unique_fd.h"

namespace baton::supervise_detail {

// The signals supervise() handles: the two it forwards, and SIGCHLD to wake up on a child's end.
inline constexpr std::array<int, 3> kHandledSignals = {SIGTERM, SIGINT, SIGCHLD};

// Installs the handlers of kHandledSignals, which write the signal's number into a pipe.
// Restores the previous handlers on destruction. One per process at a time.
class SignalPipe {
 public:
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Waits up to `timeout` (forever without one) and returns the signals that arrived, in
  // order (64 at most; the rest stay for the next call). Empty when the time ran out or a
  // signal interrupted the wait before its byte was written.
  std::vector<int> wait(std::optional<std::chrono::milliseconds> timeout);

 private:
  void restore();

  Pipe pipe_;
  std::array<struct sigaction, kHandledSignals.size()> previous_{};
  std::size_t installed_ = 0;
};

// Blocks kHandledSignals on this thread for its lifetime: around fork(), so that no handler
// of ours runs in the new child before it has put the default handlers back.
class BlockedSignals {
 public:
  BlockedSignals();
  ~BlockedSignals();
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

  const sigset_t& previous() const { return previous_; }

 private:
  sigset_t previous_{};
};

}  // namespace baton::supervise_detail
