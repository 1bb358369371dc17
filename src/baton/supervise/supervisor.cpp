#include "baton/supervise/supervisor.h"

#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <stdexcept>
#include <system_error>

#include "baton/common/exit_codes.h"
#include "baton/common/signal_pipe.h"
#include "baton/supervise/backoff.h"
#include "baton/supervise/child_end.h"
#include "baton/supervise/child_process.h"
#include "baton/supervise/handled_signals.h"

namespace baton {
namespace {

using std::chrono::milliseconds;
using supervise_detail::Child;
using supervise_detail::describe_end;
using supervise_detail::exit_code_of;
using supervise_detail::format_duration;
using supervise_detail::restartable;
using supervise_detail::signal_name;
using supervise_detail::Start;
using supervise_detail::start_child;

// Writes one whole line and flushes it: the line must be out before a backoff sleep.
void say(std::ostream& log, const std::string& line) { log << "[supervise] " << line << std::endl; }

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
    const milliseconds left =
        std::max(milliseconds(0),
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

SuperviseOutcome supervise(const SuperviseOptions& options, std::ostream& log) {
  check(options);
  // SIGCHLD must be handled even where it was ignored (that would reap the child unseen).
  SignalPipe signals(supervise_detail::kHandledSignals, SignalPipe::Ignored::take_over);
  SuperviseOutcome outcome;
  for (;;) {
    Start started = start_child(options.command);
    ++outcome.starts;
    if (started.exec_error != 0) {
      say(log, "cannot execute '" + options.command.front() +
                   "': " + std::generic_category().message(started.exec_error) + "; exiting with " +
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
      say(log, describe_end(pid, status) + "; giving up after " + std::to_string(outcome.restarts) +
                   " restarts (--max-restarts " + std::to_string(options.max_restarts) +
                   "), exiting with " + std::to_string(kExitGpuFatal));
      outcome.exit_code = kExitGpuFatal;
      return outcome;
    }
    ++outcome.restarts;
    const milliseconds wait = options.backoff.before_restart(outcome.restarts);
    say(log, describe_end(pid, status) + "; restart " + std::to_string(outcome.restarts) + " of " +
                 std::to_string(options.max_restarts) + " in " + format_duration(wait));
    if (const std::optional<int> sig = sleep_unless_stopped(signals, wait)) {
      outcome.stop_signal = sig;
      outcome.exit_code = kExitSignalBase + *sig;
      say(log, signal_name(*sig) +
                   " during the backoff: stopping without a new child, exiting with " +
                   std::to_string(outcome.exit_code));
      return outcome;
    }
  }
}

}  // namespace baton
