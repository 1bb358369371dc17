#include "baton/supervise/child_process.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <cstddef>

#include "baton/common/exit_codes.h"
#include "baton/common/unique_fd.h"
#include "baton/supervise/handled_signals.h"
#include "baton/supervise/throw_errno.h"

namespace baton::supervise_detail {
namespace {

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

}  // namespace

Child::~Child() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void Child::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> Child::try_reap() { return reap(WNOHANG); }

int Child::wait() { return *reap(0); }

std::optional<int> Child::reap(int flags) {
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

Start start_child(const std::vector<std::string>& command) {
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
    return Start{.child = Child(), .exec_error = exec_error};
  }
  return Start{.child = std::move(child), .exec_error = 0};
}

}  // namespace baton::supervise_detail
