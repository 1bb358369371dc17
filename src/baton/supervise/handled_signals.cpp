#include "baton/supervise/handled_signals.h"

#include <pthread.h>

namespace baton::supervise_detail {

BlockedSignals::BlockedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kHandledSignals) sigaddset(&set, sig);
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

BlockedSignals::~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace baton::supervise_detail
