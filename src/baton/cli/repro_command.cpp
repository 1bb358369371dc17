#include "baton/cli/repro_command.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "baton/cli/finite_range.h"
#include "baton/common/exit_codes.h"
#include "baton/repro/child_process.h"
#include "baton/repro/repro_report.h"
#include "baton/repro/scenario_report.h"
#include "baton/turn/host_segment.h"

namespace baton {

CLI::App* ReproCommand::attach(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "repro", "Run synthetic engines side by side under a GPU turn policy and measure them");
  cmd->add_option("--backend", options.backend, "Device backend")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--policy", policy,
                  "GPU turn policy: concurrent, serialize, or partition (side by side, prefill "
                  "sized for part of the chip while others run; CUDA only: on the CPU backend "
                  "it runs as concurrent)")
      ->capture_default_str()
      ->check(CLI::IsMember({"concurrent", "serialize", "partition"}));
  cmd->add_option(
         "--prefill-share", prefill_share,
         "partition: the share of the chip a prefill engine sizes its work for while "
         "other engines run; weights: the engines' +weight=W; auto: from the decoders' measured "
         "steps")
      ->capture_default_str()
      ->check(prefill_share_check());
  cmd->add_option("--quantum", quantum,
                  "serialize: hand the turn over per burst, between the layers of a prefill "
                  "chunk, or between its ops")
      ->capture_default_str()
      ->check(CLI::IsMember({"burst", "layer", "op"}));
  cmd->add_flag("--decode-first", options.turn.decode_first,
                "serialize: waiting decode bursts go before waiting prefill chunks (the "
                "default; --decode-first=false for first come, first served)")
      ->capture_default_str();
  cmd->add_option("--max-hold-ms", options.turn.max_hold_ms,
                  "serialize/op: the longest a prefill piece may hold the turn while other "
                  "engines want it, in ms")
      ->capture_default_str()
      ->check(finite_range(kMinMaxHoldMs, kMaxMaxHoldMs));
  cmd->add_option("--turn-scope", turn_scope,
                  "Who takes turns: this process's engines, or (host; serialize) those of every "
                  "baton process of the machine with the same --turn-name")
      ->capture_default_str()
      ->check(CLI::IsMember({"process", "host"}));
  cmd->add_option("--turn-name", options.turn.host_name,
                  "--turn-scope host: the turn's name (/dev/shm/baton-turn-NAME)")
      ->capture_default_str();
  cmd->add_option("--engine", engine_specs,
                  "An engine: decode, prefill[:TOKENS] or embed, then optionally /OPS (each layer "
                  "split into OPS ops, for --quantum op) and @SMS (an SM target for a CUDA "
                  "engine's GEMMs); or llm:DIR[:PROMPT_TOKENS] or embedding:DIR, a real model's "
                  "engine; or attend[:KEYS]; any of them +weight=W (its share of the GPU beside "
                  "the others: 3 beside 1 gets 3/4) or +idle (loaded, never asked for work); "
                  "repeat for more. Required unless --scenario names the engines");
  cmd->add_option("--duration", options.duration_s, "Seconds to run each scenario")
      ->capture_default_str()
      ->check(finite_range(0.1, 86400.0));
  cmd->add_option("--seed", options.seed, "Seed of the clients' request sizes")
      ->capture_default_str();
  cmd->add_flag("--json", options.json, "Print one JSON object instead of a table");
  cmd->add_option("--ledger", options.ledger_path,
                  "Record every busy interval and fault event into this SQLite file");
  cmd->add_flag("--no-gpu-sampling", no_gpu_sampling,
                "cuda: record no process's GPU use (NVML) into the ledger");
  attach_fault_options(*cmd);
  cmd->add_flag("--compare", options.compare,
                "Run each engine solo, then all together under concurrent, serialize/burst, "
                "serialize/layer and serialize/op (CUDA: and partition at --prefill-share and "
                "auto), side by side");
  cmd->add_option("--scenario", scenario,
                  "Run a named scenario's variants side by side, into one ledger (default "
                  "scenario-NAME.db here, replaced): long-dispatch, overpacked, idle-resident, "
                  "prefill-only, cross-process or seed-replay (docs/scenarios.md)")
      ->check(
          CLI::IsMember(std::vector<std::string>(scenario_names().begin(), scenario_names().end())))
      ->excludes("--engine")
      ->excludes("--compare");
  cmd->add_option("--model", scenario_inputs.model_dir,
                  "--scenario seed-replay and prefill-only: the LLM engines' model directory");
  cmd->add_option("--prompt-tokens", scenario_inputs.prompt_tokens,
                  "--scenario: the LLM engines' prompt length (default 32000 on cuda; 512 for "
                  "seed-replay and 1024 for prefill-only on cpu)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--weights", weights,
                  "How llm: and embedding: models hold their weights: bf16 (default), f32 or q8")
      ->check(CLI::IsMember({"bf16", "f32", "q8"}));
  cmd->add_option("--ledger-policy", options.ledger_policy,
                  "The name this run's rows go under in the ledger (default: the policy)");
  cmd->add_option("--start-gate", options.start_gate,
                  "--scenario cross-process's children: a folder to wait in, engines ready, "
                  "until the other children are");
  return cmd;
}

void ReproCommand::attach_fault_options(CLI::App& cmd) {
  FaultPlan& f = options.faults;
  const auto non_negative = finite_range(0.0, 1e9);
  const auto probability = finite_range(0.0, 1.0);
  cmd.add_option("--inject-hang-rate", f.hang_rate,
                 "Inject hangs at this rate per second of overlap (two or more streams busy)")
      ->check(non_negative)
      ->group("Fault injection");
  cmd.add_option("--inject-hang-prob", f.hang_probability,
                 "Probability that a committed command buffer hangs, overlap or not")
      ->check(probability)
      ->group("Fault injection");
  cmd.add_option("--inject-timeout-prob", f.timeout_probability,
                 "Probability that a committed command buffer fails with a timeout")
      ->check(probability)
      ->group("Fault injection");
  cmd.add_option("--inject-slowdown-rate", f.slowdown_rate,
                 "Slowdown episodes per second: a busy stream runs slower for a while")
      ->check(non_negative)
      ->group("Fault injection");
  cmd.add_option("--slowdown-factor", f.slowdown_factor, "How many times slower")
      ->capture_default_str()
      ->check(finite_range(1.0, 1000.0))
      ->group("Fault injection");
  cmd.add_option("--slowdown-seconds", f.slowdown_seconds, "How long a slowdown episode lasts")
      ->capture_default_str()
      ->check(finite_range(0.001, 3600.0))
      ->group("Fault injection");
  cmd.add_option("--inject-fatal-after", f.fatal_after_s,
                 "After this many seconds the device ignores submissions (fatal: exit 70)")
      ->check(finite_range(0.001, 1e9))
      ->group("Fault injection");
  cmd.add_option("--inject-device-fault-after", f.device_fault_after_s,
                 "After this many seconds one command buffer faults on the device (CUDA: a "
                 "write to an illegal address, a real sticky error; fatal: exit 70)")
      ->check(finite_range(0.001, 1e9))
      ->group("Fault injection");
  cmd.add_option("--fault-seed", fault_seed, "Seed of the fault injector (default: --seed)")
      ->group("Fault injection");
  watchdog_deadline_s = std::chrono::duration<double>(options.watchdog.deadline).count();
  cmd.add_option("--watchdog-deadline", watchdog_deadline_s,
                 "Seconds without progress after which a stream is hung")
      ->capture_default_str()
      ->check(finite_range(0.01, 3600.0))
      ->group("Watchdog");
  cmd.add_option("--slowdown-threshold", options.watchdog.slowdown_factor,
                 "A burst this many times its recent baseline (slowdown_detector.h) is a "
                 "slowdown")
      ->capture_default_str()
      ->check(finite_range(1.5, 1000.0))
      ->group("Watchdog");
  cmd.add_option("--slowdown-min-excess", slowdown_min_excess_ms,
                 "... and at least this many ms longer than it (default: 150 on cpu, 5 on cuda)")
      ->check(finite_range(0.0, 3.6e6))
      ->group("Watchdog");
}

namespace {

int fatal_exit(const std::string& why) {
  std::cerr << "baton: the device can no longer be used (" << why << "); exiting with "
            << kExitGpuFatal << " so that a supervisor restarts the process\n";
  return kExitGpuFatal;
}

// A run whose ledger failed a write says so on stderr (how many rows it misses, if any) and
// exits 74 (after a fatal 70).
int ledger_exit(const std::string& path, const std::vector<const ReproResult*>& runs) {
  for (const ReproResult* run : runs) {
    if (run->ledger && run->ledger->troubled()) {
      std::cerr << "baton: the ledger " << path << " " << trouble_summary(*run->ledger)
                << "; exiting " << kExitLedgerIncomplete << "\n";
      return kExitLedgerIncomplete;
    }
  }
  return kExitOk;
}

}  // namespace

int ReproCommand::run() {
  if (scenario.empty() && engine_specs.empty()) {
    throw std::invalid_argument("--engine is required (or --scenario NAME)");
  }
  if (scenario.empty()) options.engines = parse_engine_specs(engine_specs, options.backend);
  const TurnOptions env = TurnOptions::with_env_defaults(options.backend);
  options.turn.spin = env.spin;
  options.turn.handover_spin = env.handover_spin;
  options.turn.policy = *parse_turn_policy(policy);
  options.turn.quantum = *parse_quantum(quantum);
  options.turn.scope = *parse_turn_scope(turn_scope);
  apply(options.turn, *parse_prefill_share(prefill_share));
  options.weights = *parse_weight_format(weights);
  options.gpu_sampling = !no_gpu_sampling;
  options.faults.seed = fault_seed.value_or(options.seed);
  options.watchdog.deadline = std::chrono::milliseconds(
      static_cast<std::int64_t>(std::llround(watchdog_deadline_s * 1000.0)));
  options.watchdog.slowdown_min_excess =
      slowdown_min_excess_ms ? std::chrono::milliseconds(std::llround(*slowdown_min_excess_ms))
                             : WatchdogOptions::for_backend(options.backend).slowdown_min_excess;
  if (options.turn.policy == TurnPolicy::partition && options.backend == "cpu") {
    std::cerr << "baton: note: partition on the cpu backend runs the engines side by side as "
                 "concurrent does; only CUDA splits the device between them\n";
  }

  if (!scenario.empty()) return run_named_scenario();
  if (options.compare) {
    const ReproComparison comparison = run_comparison(options);
    if (options.json) {
      std::cout << to_json(comparison).dump(2) << "\n";
    } else {
      print_table(std::cout, comparison);
    }
    std::vector<const ReproResult*> runs;
    for (const ReproResult& run : comparison.solo) runs.push_back(&run);
    for (const ReproResult& run : comparison.runs) {
      if (run.faults.fatal) return fatal_exit(run.faults.fatal_detail);
      runs.push_back(&run);
    }
    return ledger_exit(options.ledger_path, runs);
  } else {
    const ReproResult result = run_repro(options);
    if (options.json) {
      std::cout << to_json(result).dump(2) << "\n";
    } else {
      print_table(std::cout, result);
    }
    if (result.faults.fatal) return fatal_exit(result.faults.fatal_detail);
    return ledger_exit(options.ledger_path, {&result});
  }
}

int ReproCommand::run_named_scenario() {
  if (options.ledger_path.empty()) {
    // A ledger of its own, replaced on each run, so the analysis sees this run's rows only.
    options.ledger_path = "scenario-" + scenario + ".db";
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(options.ledger_path + suffix);
    }
  }
  // The cross-process variants meet on a turn of this run's own, unless --turn-name says;
  // it is removed however the run ends.
  struct OwnTurn {
    std::string name;
    ~OwnTurn() {
      try {
        if (!name.empty()) HostSegment::remove(name);
      } catch (const std::exception& e) {
        std::cerr << "baton: " << e.what() << "\n";  // a leftover file, not a failed run
      }
    }
  } own_turn;
  if (options.turn.host_name == TurnOptions{}.host_name) {
    options.turn.host_name = own_turn.name = "scenario-" + std::to_string(::getpid());
  }
  scenario_inputs.base = options;
  const ScenarioResult result =
      run_scenario(make_scenario(scenario, scenario_inputs), self_executable());
  if (options.json) {
    std::cout << to_json(result).dump(2) << "\n";
  } else {
    print_table(std::cout, result);
  }
  std::vector<const ReproResult*> runs;
  for (const VariantResult& v : result.variants) {
    if (v.result.faults.fatal) return fatal_exit(v.result.faults.fatal_detail);
    runs.push_back(&v.result);
  }
  return ledger_exit(options.ledger_path, runs);
}

}  // namespace baton
