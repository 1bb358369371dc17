#include "baton/common/stop_signals.h"

#include "baton/common/interrupted.h"

namespace baton {

StopSignals::StopSignals()
    : pipe_(kSignals, SignalPipe::Ignored::leave),
      watcher_([this](std::stop_token stop) { watch(stop); }) {}

StopSignals::~StopSignals() {
  watcher_.request_stop();
  if (watcher_.joinable()) watcher_.join();
}

void StopSignals::throw_if_stopped() const {
  if (const int signal = received()) throw Interrupted(signal);
}

// Waits 50 ms at a time so that the destructor can end it without a signal of its own.
void StopSignals::watch(std::stop_token stop) {
  while (!stop.stop_requested()) {
    for (const int signal : pipe_.wait(std::chrono::milliseconds(50))) {
      if (received_.load(std::memory_order_acquire) != 0) {
        ::signal(signal, SIG_DFL);  // asked twice: end now, as the signal's default does
        ::raise(signal);
      }
      received_.store(signal, std::memory_order_release);
    }
  }
}

}  // namespace baton
