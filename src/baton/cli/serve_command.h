// The `baton serve` verb: the OpenAI-compatible server over every configured model in
// one process (server/baton_server.h), configured by --config FILE and flags
// (serve_options.h). Exit codes: 0 after SIGTERM/SIGINT, 2 for a bad configuration or
// model, 70 when the device turns fatal.
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>

#include "baton/cli/serve_options.h"

namespace baton {

struct ServeCommand {
  ServeFlags flags;
  CLI::App* cmd = nullptr;

  CLI::App* attach(CLI::App& app);
  int run();
};

}  // namespace baton
