#include "baton/cli/supervise_command.h"

#include <iostream>

#include "baton/supervise/backoff.h"
#include "baton/supervise/supervisor.h"

namespace baton {

CLI::App* SuperviseCommand::attach(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "supervise",
      "Run a command and restart it when it exits with 70 (the device can no longer be used) "
      "or dies by a signal");
  cmd->add_option("--max-restarts", max_restarts,
                  "Restarts allowed; when they are used up, exit with 70")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--backoff", backoff,
                  "Wait before a restart, INITIAL[:MAX]: doubles from INITIAL up to MAX "
                  "(seconds, or with the suffix ms or s: 200ms:5s)")
      ->capture_default_str();
  cmd->add_option("COMMAND", command, "The command to run and its arguments, after --")->required();
  // Everything from COMMAND on belongs to it, even without --: `supervise sh -c 'exit 3'`.
  cmd->positionals_at_end();
  return cmd;
}

int SuperviseCommand::run() {
  SuperviseOptions options;
  options.command = command;
  options.max_restarts = max_restarts;
  options.backoff = parse_backoff(backoff);
  return supervise(options, std::cerr).exit_code;
}

}  // namespace baton
