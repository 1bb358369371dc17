#include "baton/common/stop_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace baton {
namespace {

// The write end of the stop pipe, for the signal handler: a handler can reach nothing
// else, so this is the file's one mutable global (as in supervise/signal_pipe.cpp). A
// lock-free atomic is async-signal-safe.
std::atomic<int> g_stop_pipe_write{-1};
static_assert(std::atomic<int>::is_always_lock_free);

void on_stop_signal(int sig) {
  const int saved_errno = errno;
  const auto byte = static_cast<unsigned char>(sig);
  if (const int fd = g_stop_pipe_write.load(); fd >= 0) {
    [[maybe_unused]] const ssize_t written = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

const char* Interrupted::sigabbrev(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

StopSignals::StopSignals() {
  if (::pipe2(pipe_, O_NONBLOCK | O_CLOEXEC) != 0) throw_errno("pipe2");
  int expected = -1;
  if (!g_stop_pipe_write.compare_exchange_strong(expected, pipe_[1])) {
    close_pipe();
    throw std::logic_error("a StopSignals already exists in this process");
  }
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (installed_ = 0; installed_ < kSignals.size(); ++installed_) {
    if (::sigaction(kSignals[installed_], &action, &previous_[installed_]) != 0) {
      const int error = errno;
      restore();
      errno = error;
      throw_errno("sigaction");
    }
  }
  watcher_ = std::jthread([this](std::stop_token stop) { watch(stop); });
}

StopSignals::~StopSignals() {
  watcher_.request_stop();
  if (watcher_.joinable()) watcher_.join();
  restore();
}

void StopSignals::restore() noexcept {
  while (installed_ > 0) {
    --installed_;
    ::sigaction(kSignals[installed_], &previous_[installed_], nullptr);
  }
  g_stop_pipe_write.store(-1);
  close_pipe();
}

void StopSignals::close_pipe() noexcept {
  for (int& fd : pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void StopSignals::throw_if_stopped() const {
  if (const int signal = received()) throw Interrupted(signal);
}

// Polls every 50 ms so that the destructor can end it without a signal of its own.
void StopSignals::watch(std::stop_token stop) {
  while (!stop.stop_requested()) {
    pollfd readable{pipe_[0], POLLIN, 0};
    if (::poll(&readable, 1, 50) <= 0) continue;
    unsigned char byte = 0;
    while (::read(pipe_[0], &byte, 1) == 1) {
      const int signal = byte;
      if (received_.load(std::memory_order_acquire) != 0) {
        // Asked twice: end now, with the signal's default action.
        ::signal(signal, SIG_DFL);
        ::raise(signal);
      }
      received_.store(signal, std::memory_order_release);
      source_.request_stop();
    }
  }
}

}  // namespace baton
