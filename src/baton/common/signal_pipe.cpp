#include "baton/common/signal_pipe.h"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <stdexcept>

#include "baton/common/throw_errno.h"

namespace baton {
namespace {

// The write end of the self-pipe, for the signal handler: the project's one mutable
// global, the exception it allows, because a handler can reach nothing else. A lock-free
// atomic is async-signal-safe, and a handler that runs on another thread of the process
// sees the value stored before the handler was installed.
std::atomic<int> g_signal_pipe_write{-1};
static_assert(std::atomic<int>::is_always_lock_free);

void on_signal(int sig) {
  const int saved_errno = errno;
  const auto byte = static_cast<unsigned char>(sig);
  const int fd = g_signal_pipe_write.load();
  // A full pipe drops the byte: a wake-up is pending already, and the signals handled are
  // rare enough that the pipe's 64 KiB never fill with them.
  if (fd >= 0) {
    [[maybe_unused]] const ssize_t written = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

SignalPipe::SignalPipe(std::span<const int> signals, Ignored ignored)
    : pipe_(make_pipe(/*nonblocking=*/true)) {
  int expected = -1;
  if (!g_signal_pipe_write.compare_exchange_strong(expected, pipe_.write.get())) {
    throw std::logic_error("another SignalPipe already handles this process's signals");
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;  // only ends of children wake SIGCHLD
  for (const int sig : signals) {
    Installed slot{sig, {}};
    bool failed = ::sigaction(sig, nullptr, &slot.previous) != 0;
    if (!failed && ignored == Ignored::leave && slot.previous.sa_handler == SIG_IGN) continue;
    failed = failed || ::sigaction(sig, &action, nullptr) != 0;
    if (failed) {
      const int error = errno;
      restore();
      errno = error;
      throw_errno("sigaction");
    }
    installed_.push_back(slot);
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

void SignalPipe::restore() noexcept {
  while (!installed_.empty()) {
    ::sigaction(installed_.back().signal, &installed_.back().previous, nullptr);
    installed_.pop_back();
  }
  g_signal_pipe_write.store(-1);
}

}  // namespace baton
