// SignalPipe: installs handlers for a set of signals that write the signal's number into a
// self-pipe, so that one thread waits for signals (and timeouts) with one poll() and no
// race: `baton supervise` for SIGTERM, SIGINT and SIGCHLD, StopSignals for the signals
// that stop a long command. Restores the previous handlers on destruction.
// Thread-safety: it takes over process-wide signal handlers, so at most one exists in a
// process at a time (a second throws std::logic_error); wait() belongs to one thread.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "baton/common/unique_fd.h"

namespace baton {

class SignalPipe {
 public:
  // What to do with a signal the process ignores (SIG_IGN, as `nohup` and a shell's
  // background jobs set it): leave it ignored, or handle it all the same.
  enum class Ignored { leave, take_over };

  SignalPipe(std::span<const int> signals, Ignored ignored);
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Waits up to `timeout` (forever without one) and returns the signals that arrived, in
  // order (64 at most; the rest stay for the next call). Empty when the time ran out or a
  // signal interrupted the wait before its byte was written.
  std::vector<int> wait(std::optional<std::chrono::milliseconds> timeout);

 private:
  struct Installed {
    int signal;
    struct sigaction previous;
  };
  void restore() noexcept;

  Pipe pipe_;
  std::vector<Installed> installed_;
};

}  // namespace baton
