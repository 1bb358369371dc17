// How a child process ended, read from its wait status: a line for the log, the exit code
// the supervisor passes on, and whether a restart may fix it.
// Thread-safety: pure functions, safe from any thread.
#pragma once

#include <sys/types.h>

#include <string>

namespace baton::supervise_detail {

// "SIGTERM" and the like for the common signals, else "signal N".
std::string signal_name(int sig);
// "child PID exited with code N" or "child PID was killed by signal N (NAME)", with a note
// for the fatal code 70 and for a core dump.
std::string describe_end(pid_t pid, int status);
// The child's exit code, or 128 + the signal that killed it, as shells report it.
int exit_code_of(int status);
// The ends a restart may fix: the device was lost (exit 70), or the process was killed or
// crashed.
bool restartable(int status);

}  // namespace baton::supervise_detail
