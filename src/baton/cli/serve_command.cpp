#include "baton/cli/serve_command.h"

#include <csignal>
#include <iostream>
#include <map>
#include <memory>

#include "baton/cli/progress_bar.h"
#include "baton/common/signal_pipe.h"
#include "baton/server/baton_server.h"

namespace baton {

CLI::App* ServeCommand::attach(CLI::App& app) {
  cmd = app.add_subcommand("serve", "Serve models over the OpenAI HTTP API, one process, one GPU");
  add_serve_options(*cmd, flags);
  return cmd;
}

int ServeCommand::run() {
  ServeConfig config = resolve(flags, *cmd);
  config.reread = [this] { return resolve(flags, *cmd); };  // POST /v1/admin/reload
  // Taken before loading, so that a signal during a long load stops the server cleanly.
  // SIGHUP (the terminal closed) stops it as SIGTERM does; under nohup it stays ignored.
  const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  SignalPipe pipe(signals, SignalPipe::Ignored::leave);
  std::map<std::string, std::unique_ptr<ProgressBar>> bars;
  const LoadProgress progress = [&bars](const std::string& model, std::uint64_t done,
                                        std::uint64_t total) {
    auto& bar = bars[model];
    if (!bar) bar = std::make_unique<ProgressBar>("loading " + model, total, ProgressBar::Unit::bytes);
    bar->update(done);
    if (done >= total) bar.reset();  // clears the line; the model's log line follows
  };
  BatonServer server(config, std::cerr, progress);
  // The one line on stdout: scripts and tests wait for it.
  return server.serve(pipe, std::cout, std::cerr);
}

}  // namespace baton
