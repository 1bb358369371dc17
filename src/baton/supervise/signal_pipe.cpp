#include "baton/supervise/signal_pipe.h"

#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <stdexcept>

#include "baton/supervise/throw_errno.h"

namespace baton::supervise_detail {
namespace {

// The write end of the self-pipe, for the signal handler: this file's one mutable global,
// the exception the project allows, because a handler can reach nothing else. A lock-free
// atomic is async-signal-safe, and a handler that runs on another thread of the process
// sees the value stored before the handler was installed.
std::atomic<int> g_signal_pipe_write{-1};
static_assert(std::atomic<int>::is_always_lock_free);

void on_signal(int sig) {
  const int saved_errno = errno;
  const auto byte = static_cast<unsigned char>(sig);
  const int fd = g_signal_pipe_write.load();
  // A full pipe drops the byte: a wake-up is pending already, and SIGTERM and SIGINT are
  // rare enough that the pipe's 64 KiB never fill with them.
  if (fd >= 0) {
    [[maybe_unused]] const ssize_t written = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

SignalPipe::SignalPipe() : pipe_(make_pipe(/*nonblocking=*/true)) {
  int expected = -1;
  if (!g_signal_pipe_write.compare_exchange_strong(expected, pipe_.write.get())) {
    throw std::logic_error("[supervise] another supervise() is already running in this process");
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;  // only ends of children wake us
  for (installed_ = 0; installed_ < kHandledSignals.size(); ++installed_) {
    if (::sigaction(kHandledSignals[installed_], &action, &previous_[installed_]) != 0) {
      const int error = errno;
      restore();
      errno = error;
      throw_errno("sigaction");
    }
  }
}

SignalPipe::~SignalPipe() { restore(); }

std::vector<int> SignalPipe::wait(std::optional<std::chrono::milliseconds> timeout) {
  pollfd readable{pipe_.read.get(), POLLIN, 0};
  const int timeout_ms = timeout ? static_cast<int>(timeout->count()) : -1;
  if (::poll(&readable, 1, timeout_ms) < 0 && errno != EINTR) throw_errno("poll");
  std::array<unsigned char, 64> bytes{};
  for (;;) {
    const ssize_t n = ::read(pipe_.read.get(), bytes.data(), bytes.size());
    if (n >= 0) return std::vector<int>(bytes.begin(), bytes.begin() + n);
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {};
    if (errno != EINTR) throw_errno("read");
  }
}

void SignalPipe::restore() {
  while (installed_ > 0) {
    --installed_;
    ::sigaction(kHandledSignals[installed_], &previous_[installed_], nullptr);
  }
  g_signal_pipe_write.store(-1);
}

BlockedSignals::BlockedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kHandledSignals) sigaddset(&set, sig);
  ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

BlockedSignals::~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace baton::supervise_detail
