// `baton supervise`: runs a command as a child process and starts it again when it ends
// in a way that a restart can fix: the fatal exit code 70 (kExitGpuFatal, the device can
// no longer be used) or death by a signal. Restarts wait an exponential backoff (Backoff,
// in backoff.h) and are capped. SIGTERM and SIGINT are forwarded to the child for a clean
// stop; after one, the supervisor restarts nothing. Every other exit of the child ends the
// supervision with the child's code. See docs/operations.md for the exit codes and service
// managers; the codes themselves are in cli/exit_codes.h.
//
// Thread-safety: supervise() takes over the process's SIGTERM, SIGINT and SIGCHLD
// handlers while it runs (restoring them when it returns), so at most one call may run in
// a process at a time; a second concurrent call throws std::logic_error. It never calls
// waitpid(-1): other children of the process are left alone. SuperviseOptions and
// SuperviseOutcome are plain values.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "baton/common/exit_codes.h"  // kExitCannotExecute, kExitSignalBase, kExitGpuFatal
#include "baton/supervise/backoff.h"  // Backoff, parse_duration, parse_backoff

namespace baton {

struct SuperviseOptions {
  std::vector<std::string> command;  // the child's argv; command[0] is looked up in PATH
  int max_restarts = 10;             // restarts allowed over the supervisor's life
  Backoff backoff;
};

struct SuperviseOutcome {
  int exit_code = 0;               // what the supervisor process should exit with
  int starts = 0;                  // children started (a failed exec counts)
  int restarts = 0;                // starts after the first
  std::optional<int> stop_signal;  // the SIGTERM or SIGINT that stopped the supervision
};

// Runs options.command until it ends for good; blocks. Logs each restart, each forwarded
// signal and the reason it gives up to `log`, one line each, starting with "[supervise]".
// Exit code: the child's when it exits with anything but 70; 70 once max_restarts is used
// up; 127 when the command cannot be executed; after a forwarded signal, the child's code
// or 128 + the signal that ended it; 128 + the signal when one arrives during a backoff.
// Throws std::invalid_argument for an empty command or a negative max_restarts, and
// std::system_error when a pipe, fork or signal handler cannot be set up.
SuperviseOutcome supervise(const SuperviseOptions& options, std::ostream& log);

}  // namespace baton
