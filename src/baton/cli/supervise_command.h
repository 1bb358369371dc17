// The `baton supervise` verb: command-line options, and running them (the logic is in
// supervise/supervisor.h).
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace baton {

struct SuperviseCommand {
  std::vector<std::string> command;  // COMMAND and its arguments
  int max_restarts = 10;
  std::string backoff = "1s:60s";

  // Declares the verb's options on `app` and returns the subcommand.
  CLI::App* attach(CLI::App& app);
  // Checks what CLI11 cannot (throws std::invalid_argument), then supervises COMMAND until
  // it ends for good; returns the exit code.
  int run();
};

}  // namespace baton
