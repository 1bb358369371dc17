// The `baton repro` verb: command-line options, and running them.
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "baton/repro/repro_options.h"

namespace baton {

struct ReproCommand {
  ReproOptions options;
  std::string policy = "concurrent";
  std::string quantum = "burst";
  std::vector<std::string> engine_specs;

  // Declares the verb's options on `app` and returns the subcommand.
  CLI::App* attach(CLI::App& app);
  // Checks what CLI11 cannot (throws std::invalid_argument), then runs; returns the exit code.
  int run();
};

}  // namespace baton
