// The signals supervise() handles, and BlockedSignals, which blocks them on one thread
// around fork() so that no handler of ours runs in the new child before it has put the
// default handlers back. The handlers themselves are common/signal_pipe.h's.
// Thread-safety: BlockedSignals changes only the calling thread's signal mask and is
// destroyed on that thread.
#pragma once

#include <signal.h>

#include <array>

namespace baton::supervise_detail {

// The signals supervise() handles: the two it forwards, and SIGCHLD to wake up on a child's end.
inline constexpr std::array<int, 3> kHandledSignals = {SIGTERM, SIGINT, SIGCHLD};

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
