// baton: hosts several model engines on one GPU and shares it through a GPU turn.
// main() only wires the verbs to the command line and maps failures to exit codes
// (errors/error_kind.h).
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <stdexcept>
#include <string_view>

#include "baton/cli/analyze_command.h"
#include "baton/cli/embed_command.h"
#include "baton/cli/generate_command.h"
#include "baton/cli/make_model_command.h"
#include "baton/cli/plan_command.h"
#include "baton/cli/repro_command.h"
#include "baton/cli/serve_command.h"
#include "baton/cli/supervise_command.h"
#include "baton/common/exit_codes.h"
#include "baton/common/interrupted.h"
#include "baton/errors/error_kind.h"
#include "baton/model/cpu/kernels/blas_kernels.h"

namespace {

bool is_verb(CLI::App& app, std::string_view name) {
  for (const CLI::App* verb : app.get_subcommands([](CLI::App*) { return true; })) {
    if (verb->get_name() == name) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  baton::reexec_with_fitting_blas_kernels(argv);
  CLI::App app{"baton: several model engines, one GPU, a fair and healthy GPU turn"};
  app.require_subcommand(1);
  baton::ReproCommand repro;
  CLI::App* repro_cmd = repro.attach(app);
  baton::SuperviseCommand supervise;
  CLI::App* supervise_cmd = supervise.attach(app);
  baton::AnalyzeCommand analyze;
  CLI::App* analyze_cmd = analyze.attach(app);
  baton::PlanCommand plan;
  CLI::App* plan_cmd = plan.attach(app);
  baton::GenerateCommand generate;
  CLI::App* generate_cmd = generate.attach(app);
  baton::MakeModelCommand make_model;
  CLI::App* make_model_cmd = make_model.attach(app);
  baton::EmbedCommand embed;
  CLI::App* embed_cmd = embed.attach(app);
  baton::ServeCommand serve;
  CLI::App* serve_cmd = serve.attach(app);

  if (argc > 1 && argv[1][0] != '-' && !is_verb(app, argv[1])) {
    std::cerr << "baton: unknown verb '" << argv[1] << "'; see baton --help\n";
    return baton::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return baton::kExitUsage;
  }

  try {
    if (repro_cmd->parsed()) return repro.run();
    if (supervise_cmd->parsed()) return supervise.run();
    if (analyze_cmd->parsed()) return analyze.run();
    if (plan_cmd->parsed()) return plan.run();
    if (make_model_cmd->parsed()) return make_model.run();
    if (generate_cmd->parsed()) return generate.run();
    if (embed_cmd->parsed()) return embed.run();
    if (serve_cmd->parsed()) return serve.run();
  } catch (const baton::Interrupted& e) {
    std::cerr << "baton: " << e.what() << "; nothing half-written was left behind\n";
    // End by the signal itself, so that a shell loop around baton stops too (128 + N if not).
    std::signal(e.signal(), SIG_DFL);
    std::raise(e.signal());
    return baton::kExitSignalBase + e.signal();
  } catch (const std::exception& e) {
    std::cerr << "baton: " << e.what() << "\n";
    return baton::exit_code(baton::classify(e));
  }
  return baton::kExitUsage;
}
