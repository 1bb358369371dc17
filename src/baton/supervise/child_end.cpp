#include "baton/supervise/child_end.h"

#include <signal.h>
#include <sys/wait.h>

#include "baton/common/exit_codes.h"

namespace baton::supervise_detail {

std::string signal_name(int sig) {
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    default:
      return "signal " + std::to_string(sig);
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

bool restartable(int status) {
  return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == kExitGpuFatal);
}

}  // namespace baton::supervise_detail
