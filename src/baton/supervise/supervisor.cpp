#include "baton/supervise/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <ostream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "baton/cli/exit_codes.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLongestDuration = std::chrono::hours(24);
// The signals supervise() handles: the two it forwards, and SIGCHLD to wake up on a child's end.
constexpr std::array<int, 3> kHandledSignals = {SIGTERM, SIGINT, SIGCHLD};

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), std::string("[supervise] ") + what);
}

// Writes one whole line and flushes it: the line must be out before a backoff sleep.
void say(std::ostream& log, const std::string& line) { log << "[supervise] " << line << std::endl; }

// ---- Durations ---------------------------------------------------------------------------

// Parses `text` into `out`; returns what is wrong with it, or nullptr.
const char* duration_problem(std::string_view text, milliseconds& out) {
  std::string_view number = text;
  double unit_ms = 1000.0;
  if (number.ends_with("ms")) {
    number.remove_suffix(2);
    unit_ms = 1.0;
  } else if (number.ends_with("s")) {
    number.remove_suffix(1);
  }
  double value = 0.0;
  const char* end = number.data() + number.size();
  const auto [stop, ec] = std::from_chars(number.data(), end, value);
  if (number.empty() || ec != std::errc() || stop != end || !std::isfinite(value)) {
    return "expected seconds, or a number with the suffix ms or s (200ms, 5s, 1.5)";
  }
  if (value < 0.0) return "must not be negative";
  const double ms = value * unit_ms;
  if (ms > static_cast<double>(kLongestDuration.count())) return "must not exceed a day";
  out = milliseconds(std::llround(ms));
  return nullptr;
}

std::string format_duration(milliseconds d) {
  if (d.count() != 0 && d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

// ---- File descriptors and the self-pipe ------------------------------------------------

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }

  int get() const { return fd_; }
  // close() is not retried on EINTR: the descriptor is released either way (Linux, macOS),
  // and a retry could close one that another thread has just opened.
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Both ends close on exec, so no child inherits them. `nonblocking`: both ends, too.
Pipe make_pipe(bool nonblocking) {
  int fds[2];
#ifdef __linux__
  if (::pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) != 0) throw_errno("pipe");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
#else
  if (::pipe(fds) != 0) throw_errno("pipe");
  Pipe ends{UniqueFd(fds[0]), UniqueFd(fds[1])};
  for (const int fd : fds) {
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) throw_errno("fcntl");
    if (nonblocking && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
      throw_errno("fcntl");
    }
  }
  return ends;
#endif
}

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

// Installs the handlers of kHandledSignals, which write the signal's number into a pipe,
// so that the main loop waits for signals, children and timeouts with one poll() and no
// race. Restores the previous handlers on destruction. One per process at a time.
class SignalPipe {
 public:
  SignalPipe() : pipe_(make_pipe(/*nonblocking=*/true)) {
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
  ~SignalPipe() { restore(); }
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Waits up to `timeout` (forever without one) and returns the signals that arrived, in
  // order (64 at most; the rest stay for the next call). Empty when the time ran out or a
  // signal interrupted the wait before its byte was written.
  std::vector<int> wait(std::optional<milliseconds> timeout) {
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

 private:
  void restore() {
    while (installed_ > 0) {
      --installed_;
      ::sigaction(kHandledSignals[installed_], &previous_[installed_], nullptr);
    }
    g_signal_pipe_write.store(-1);
  }

  Pipe pipe_;
  std::array<struct sigaction, kHandledSignals.size()> previous_{};
  std::size_t installed_ = 0;
};

// Blocks kHandledSignals on this thread for its lifetime: around fork(), so that no handler
// of ours runs in the new child before it has put the default handlers back.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (const int sig : kHandledSignals) sigaddset(&set, sig);
    ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
  }
  ~BlockedSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;

  const sigset_t& previous() const { return previous_; }

 private:
  sigset_t previous_{};
};

// ---- The child -------------------------------------------------------------------------

// A started child, until it is reaped. Destroying it while it runs (only on an exception)
// kills it with SIGKILL and reaps it: no orphan, no zombie.
class Child {
 public:
  Child() = default;
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(Child&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}
  Child& operator=(Child&&) = delete;
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }

  pid_t pid() const { return pid_; }
  // Sending to a child that has ended but is not reaped yet is harmless: its pid stays
  // reserved until waitpid, so the signal can never reach another process.
  void signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // The wait status once the child has ended (and is reaped); nothing while it runs.
  std::optional<int> try_reap() { return reap(WNOHANG); }
  int wait() { return *reap(0); }

 private:
  std::optional<int> reap(int flags) {
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, flags);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      if (r == 0) return std::nullopt;
      if (errno == EINTR) continue;
      pid_ = -1;  // ECHILD: someone else reaped it; its pid may be reused, never signal it
      throw_errno("waitpid");
    }
  }

  pid_t pid_ = -1;
};

// Runs in the new child: only async-signal-safe calls, since the parent may have other
// threads (a test process does). execvp is not on POSIX's list, but glibc's (2.24 and
// later) searches PATH with no heap and no locks. An exec failure is reported to the
// parent through `report_fd` (closed on exec, so a success reads as end of file).
[[noreturn]] void become(char* const argv[], const sigset_t& mask, pid_t parent, int report_fd) {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (const int sig : kHandledSignals) ::sigaction(sig, &default_action, nullptr);
#ifdef __linux__
  // If the supervisor dies (even by SIGKILL), the child goes too rather than run on as an
  // orphan that a restarted supervisor would not know about.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitCannotExecute);  // it died before prctl
#else
  (void)parent;
#endif
  ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  ::execvp(argv[0], argv);
  const int error = errno;
  [[maybe_unused]] const auto written = ::write(report_fd, &error, sizeof error);
  ::_exit(kExitCannotExecute);
}

// Reads exactly `size` bytes; false at end of file.
bool read_all(int fd, void* buffer, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(buffer);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, bytes + got, size - got);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("read");
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

struct Start {
  Child child;         // running when exec succeeded
  int exec_error = 0;  // else the errno of the failed exec; that child is reaped already
};

Start start(const std::vector<std::string>& command) {
  std::vector<char*> argv;  // built before fork: the child must not allocate
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  Pipe report = make_pipe(/*nonblocking=*/false);
  const pid_t parent = ::getpid();
  pid_t pid = -1;
  {
    BlockedSignals blocked;
    pid = ::fork();
    if (pid == 0) become(argv.data(), blocked.previous(), parent, report.write.get());
  }
  if (pid < 0) throw_errno("fork");
  Child child(pid);
  report.write.reset();  // else the read below would never see end of file
  int exec_error = 0;
  if (read_all(report.read.get(), &exec_error, sizeof exec_error)) {
    child.wait();
    return Start{Child(), exec_error};
  }
  return Start{std::move(child), 0};
}

// ---- How a child ended ------------------------------------------------------------------

std::string signal_name(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "signal " + std::to_string(sig);
  }
}

std::string describe_end(pid_t pid, int status) {
  std::string text = "child " + std::to_string(pid);
  if (WIFEXITED(status)) {
    text += " exited with code " + std::to_string(WEXITSTATUS(status));
    if (WEXITSTATUS(status) == kExitGpuFatal) text += " (the device can no longer be used)";
    return text;
  }
  text += " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
          signal_name(WTERMSIG(status)) + ")";
#ifdef WCOREDUMP
  if (WCOREDUMP(status)) text += ", core dumped";
#endif
  return text;
}

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : kExitSignalBase + WTERMSIG(status);
}

// The ends a restart may fix: the device was lost, or the process was killed or crashed.
bool restartable(int status) {
  return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == kExitGpuFatal);
}

// ---- The loop ----------------------------------------------------------------------------

// Waits for `child` to end and returns its wait status. Forwards SIGTERM and SIGINT to it
// and records the first in `outcome.stop_signal`.
int wait_for_end(Child& child, SignalPipe& signals, SuperviseOutcome& outcome, std::ostream& log) {
  for (;;) {
    if (const std::optional<int> status = child.try_reap()) return *status;
    for (const int sig : signals.wait(std::nullopt)) {
      if (sig == SIGCHLD) continue;  // the next try_reap() looks
      if (!outcome.stop_signal) outcome.stop_signal = sig;
      say(log, signal_name(sig) + ": forwarding it to child " + std::to_string(child.pid()) +
                   "; no restart after it ends");
      child.signal(sig);
    }
  }
}

// Sleeps for `wait`; returns early with a SIGTERM or SIGINT that arrives meanwhile (or
// had arrived unseen). Looks at the pipe at least once, even for a zero wait.
std::optional<int> sleep_unless_stopped(SignalPipe& signals, milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const milliseconds left = std::max(
        milliseconds(0),
        std::chrono::ceil<milliseconds>(deadline - std::chrono::steady_clock::now()));
    for (const int sig : signals.wait(left)) {
      if (sig != SIGCHLD) return sig;
    }
    if (left.count() == 0) return std::nullopt;
  }
}

void check(const SuperviseOptions& options) {
  if (options.command.empty()) {
    throw std::invalid_argument(
        "[supervise] no COMMAND to run: baton supervise [OPTIONS] -- COMMAND [ARGS...]");
  }
  if (options.max_restarts < 0) {
    throw std::invalid_argument("[supervise] --max-restarts must not be negative");
  }
}

}  // namespace

milliseconds Backoff::before_restart(int restart) const {
  milliseconds wait = initial;
  for (int i = 1; i < restart && wait < max && wait.count() > 0; ++i) wait *= 2;
  return std::min(wait, max);
}

milliseconds parse_duration(std::string_view text) {
  milliseconds value{};
  if (const char* problem = duration_problem(text, value)) {
    throw std::invalid_argument("[supervise] duration '" + std::string(text) + "': " + problem);
  }
  return value;
}

Backoff parse_backoff(std::string_view text) {
  const auto fail = [text](const std::string& why) {
    return std::invalid_argument("[supervise] --backoff '" + std::string(text) +
                                 "': " + why + "; expected INITIAL[:MAX], such as 200ms:5s");
  };
  const std::size_t colon = text.find(':');
  Backoff backoff;
  if (const char* problem = duration_problem(text.substr(0, colon), backoff.initial)) {
    throw fail(std::string("INITIAL: ") + problem);
  }
  if (colon == std::string_view::npos) {
    backoff.max = std::max(backoff.max, backoff.initial);
    return backoff;
  }
  if (const char* problem = duration_problem(text.substr(colon + 1), backoff.max)) {
    throw fail(std::string("MAX: ") + problem);
  }
  if (backoff.max < backoff.initial) throw fail("MAX is shorter than INITIAL");
  return backoff;
}

SuperviseOutcome supervise(const SuperviseOptions& options, std::ostream& log) {
  check(options);
  SignalPipe signals;
  SuperviseOutcome outcome;
  for (;;) {
    Start started = start(options.command);
    ++outcome.starts;
    if (started.exec_error != 0) {
      say(log, "cannot execute '" + options.command.front() + "': " +
                   std::generic_category().message(started.exec_error) + "; exiting with " +
                   std::to_string(kExitCannotExecute));
      outcome.exit_code = kExitCannotExecute;
      return outcome;
    }
    const pid_t pid = started.child.pid();
    const int status = wait_for_end(started.child, signals, outcome, log);
    if (outcome.stop_signal || !restartable(status)) {
      outcome.exit_code = exit_code_of(status);
      return outcome;
    }
    if (outcome.restarts >= options.max_restarts) {
      say(log, describe_end(pid, status) + "; giving up after " +
                   std::to_string(outcome.restarts) + " restarts (--max-restarts " +
                   std::to_string(options.max_restarts) + "), exiting with " +
                   std::to_string(kExitGpuFatal));
      outcome.exit_code = kExitGpuFatal;
      return outcome;
    }
    ++outcome.restarts;
    const milliseconds wait = options.backoff.before_restart(outcome.restarts);
    say(log, describe_end(pid, status) + "; restart " + std::to_string(outcome.restarts) +
                 " of " + std::to_string(options.max_restarts) + " in " + format_duration(wait));
    if (const std::optional<int> sig = sleep_unless_stopped(signals, wait)) {
      outcome.stop_signal = sig;
      outcome.exit_code = kExitSignalBase + *sig;
      say(log, signal_name(*sig) + " during the backoff: stopping without a new child, exiting with " +
                   std::to_string(outcome.exit_code));
      return outcome;
    }
  }
}

}  // namespace baton
