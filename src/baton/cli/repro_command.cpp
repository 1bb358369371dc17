#include "baton/cli/repro_command.h"

#include <iostream>
#include <stdexcept>

#include "baton/cli/exit_codes.h"
#include "baton/repro/repro_report.h"

namespace baton {

CLI::App* ReproCommand::attach(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "repro", "Run synthetic engines side by side under a GPU turn policy and measure them");
  cmd->add_option("--backend", options.backend, "Device backend")->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--policy", policy, "GPU turn policy")->capture_default_str()
      ->check(CLI::IsMember({"concurrent", "serialize"}));
  cmd->add_option("--quantum", quantum,
                  "serialize: hand the turn over per burst, between the layers of a prefill "
                  "chunk, or between its ops")
      ->capture_default_str()->check(CLI::IsMember({"burst", "layer", "op"}));
  cmd->add_flag("--decode-first", options.turn.decode_first,
                "serialize: waiting decode bursts go before waiting prefill chunks");
  cmd->add_option("--engine", engine_specs,
                  "An engine: decode, prefill[:TOKENS] or embed (repeat for more)")->required();
  cmd->add_option("--duration", options.duration_s, "Seconds to run each scenario")
      ->capture_default_str()->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--seed", options.seed, "Seed of the clients' request sizes")->capture_default_str();
  cmd->add_flag("--json", options.json, "Print one JSON object instead of a table");
  cmd->add_flag("--compare", options.compare,
                "Run each engine solo, then all together under concurrent, serialize/burst and "
                "serialize/layer, side by side");
  return cmd;
}

int ReproCommand::run() {
  options.engines = parse_engine_specs(engine_specs);
  const TurnOptions env = TurnOptions::with_env_defaults();
  options.turn.spin = env.spin;
  options.turn.policy = *parse_turn_policy(policy);
  options.turn.quantum = *parse_quantum(quantum);

  if (options.compare) {
    const ReproComparison comparison = run_comparison(options);
    if (options.json) {
      std::cout << to_json(comparison).dump(2) << "\n";
    } else {
      print_table(std::cout, comparison);
    }
  } else {
    const ReproResult result = run_repro(options);
    if (options.json) {
      std::cout << to_json(result).dump(2) << "\n";
    } else {
      print_table(std::cout, result);
    }
  }
  return kExitOk;
}

}  // namespace baton
