#include "baton/repro/scenarios.h"

#include <limits>
#include <stdexcept>

namespace baton {
namespace {

TurnOptions turn(TurnPolicy policy, Quantum quantum = Quantum::burst,
                 TurnScope scope = TurnScope::process) {
  TurnOptions options;
  options.policy = policy;
  options.quantum = quantum;
  options.scope = scope;
  options.decode_first = false;  // the scenarios keep the plain first-come order they measured
  return options;
}

// One variant of `inputs.base` with these engines under this turn.
ScenarioVariant variant(const ScenarioInputs& inputs, std::string key, std::string label,
                        const std::vector<std::string>& specs, TurnOptions policy) {
  ScenarioVariant v{
      .key = std::move(key), .label = std::move(label), .options = inputs.base, .processes = 1};
  v.options.engines = parse_engine_specs(specs, inputs.base.backend);
  v.options.turn = policy;
  // The spins the run was given (its backend's, or the environment's).
  v.options.turn.spin = inputs.base.turn.spin;
  v.options.turn.handover_spin = inputs.base.turn.handover_spin;
  // Same-named turn state for every variant of a run, so that two processes meet.
  v.options.turn.host_name = inputs.base.turn.host_name;
  return v;
}

std::string llm_spec(const ScenarioInputs& inputs, std::string_view scenario,
                     std::size_t cpu_tokens, std::size_t cuda_tokens) {
  if (inputs.model_dir.empty()) {
    throw std::invalid_argument("--scenario " + std::string(scenario) +
                                " needs --model DIR, a model directory (`baton make-model "
                                "--shape qwen2.5-0.5b` writes one with 32768 positions)");
  }
  const std::size_t tokens = inputs.prompt_tokens != 0       ? inputs.prompt_tokens
                             : inputs.base.backend == "cuda" ? cuda_tokens
                                                             : cpu_tokens;
  return "llm:" + inputs.model_dir + ":" + std::to_string(tokens);
}

Scenario long_dispatch(const ScenarioInputs& in) {
  Scenario s{.name = "long-dispatch",
             .question =
                 "Is it concurrency of submission, or one long dispatch? A decoder next to an "
                 "engine whose every layer is one attention kernel over a long context (D = 256), "
                 "with and without the turn.",
             .variants = {}};
  s.variants.push_back(
      variant(in, "attend", "attend alone", {"attend"}, turn(TurnPolicy::concurrent)));
  s.variants.push_back(
      variant(in, "decode", "decode alone", {"decode"}, turn(TurnPolicy::concurrent)));
  s.variants.push_back(variant(in, "both-concurrent", "attend + decode, concurrent",
                               {"attend", "decode"}, turn(TurnPolicy::concurrent)));
  s.variants.push_back(variant(in, "both-serialize", "attend + decode, serialize",
                               {"attend", "decode"}, turn(TurnPolicy::serialize)));
  return s;
}

Scenario overpacked(const ScenarioInputs& in) {
  Scenario s{.name = "overpacked",
             .question =
                 "Do overpacked command buffers matter? The same decode and prefill engines with "
                 "the buffer caps (50 ops or 50 MB) and with no caps (one buffer per burst).",
             .variants = {}};
  const CommitLimits off{.max_ops = std::numeric_limits<std::size_t>::max(),
                         .max_bytes = std::numeric_limits<std::size_t>::max()};
  const std::vector<std::string> engines = {"decode", "prefill"};
  for (TurnPolicy policy : {TurnPolicy::concurrent, TurnPolicy::serialize}) {
    const std::string name(to_string(policy));
    ScenarioVariant capped =
        variant(in, "caps-" + name, "default caps, " + name, engines, turn(policy, Quantum::layer));
    ScenarioVariant packed =
        variant(in, "no-caps-" + name, "caps off, " + name, engines, turn(policy, Quantum::layer));
    packed.options.limits = off;
    s.variants.push_back(std::move(capped));
    s.variants.push_back(std::move(packed));
  }
  return s;
}

Scenario idle_resident(const ScenarioInputs& in) {
  Scenario s{.name = "idle-resident",
             .question =
                 "Co-residence or submission? A decoder alone, next to a prefill engine that is "
                 "loaded (weights resident) but sent nothing, and next to the same engine busy.",
             .variants = {}};
  s.variants.push_back(
      variant(in, "alone", "decode alone", {"decode"}, turn(TurnPolicy::concurrent)));
  s.variants.push_back(variant(in, "idle", "decode + prefill resident, idle",
                               {"decode", "prefill+idle"}, turn(TurnPolicy::concurrent)));
  s.variants.push_back(variant(in, "busy", "decode + prefill busy", {"decode", "prefill"},
                               turn(TurnPolicy::concurrent)));
  return s;
}

Scenario prefill_only(const ScenarioInputs& in) {
  Scenario s{.name = "prefill-only",
             .question =
                 "A prefill in flight, or two engines busy? One engine's chunked prefill with no "
                 "other engine busy, a decoder alone, and both together.",
             .variants = {}};
  const std::string prefill = in.model_dir.empty() ? "prefill" : llm_spec(in, s.name, 1024, 32000);
  s.variants.push_back(
      variant(in, "prefill", "prefill alone", {prefill}, turn(TurnPolicy::concurrent)));
  s.variants.push_back(
      variant(in, "decode", "decode alone", {"decode"}, turn(TurnPolicy::concurrent)));
  s.variants.push_back(variant(in, "both", "prefill + decode, concurrent", {prefill, "decode"},
                               turn(TurnPolicy::concurrent)));
  return s;
}

Scenario cross_process(const ScenarioInputs& in) {
  Scenario s{.name = "cross-process",
             .question =
                 "One process or two? The same two engines in one process and in two processes "
                 "on one device, with no turn and with the turn (host-wide across processes).",
             .variants = {}};
  const std::vector<std::string> engines = {"decode", "prefill"};
  s.variants.push_back(variant(in, "one-concurrent", "one process, concurrent", engines,
                               turn(TurnPolicy::concurrent)));
  s.variants.push_back(variant(in, "one-serialize", "one process, serialize", engines,
                               turn(TurnPolicy::serialize, Quantum::layer)));
  ScenarioVariant two = variant(in, "two-concurrent", "two processes, concurrent", engines,
                                turn(TurnPolicy::concurrent, Quantum::burst, TurnScope::host));
  two.processes = 2;
  s.variants.push_back(std::move(two));
  ScenarioVariant two_turn = variant(in, "two-serialize", "two processes, serialize@host", engines,
                                     turn(TurnPolicy::serialize, Quantum::layer, TurnScope::host));
  two_turn.processes = 2;
  s.variants.push_back(std::move(two_turn));
  return s;
}

Scenario seed_replay(const ScenarioInputs& in) {
  Scenario s{.name = "seed-replay",
             .question =
                 "Do hangs cluster? Two LLM engines with long prompts, hangs injected while both "
                 "streams are busy, every failed request retried with its prefill redone; then "
                 "the analysis's uniform-placement and dependence tests on the ledger.",
             .variants = {},
             .analyze_hangs = true};
  const std::string llm = llm_spec(in, s.name, 512, 32000);
  ScenarioVariant v = variant(in, "replay", "2 LLM engines, hangs, retried", {llm, llm},
                              turn(TurnPolicy::concurrent));
  v.options.retry_failed = true;
  if (!v.options.faults.any()) v.options.faults.hang_rate = 0.5;  // per second of overlap
  s.variants.push_back(std::move(v));
  return s;
}

}  // namespace

const std::vector<std::string_view>& scenario_names() {
  static const std::vector<std::string_view> names = {"long-dispatch", "overpacked",
                                                      "idle-resident", "prefill-only",
                                                      "cross-process", "seed-replay"};
  return names;
}

Scenario make_scenario(std::string_view name, const ScenarioInputs& inputs) {
  if (name == "long-dispatch") return long_dispatch(inputs);
  if (name == "overpacked") return overpacked(inputs);
  if (name == "idle-resident") return idle_resident(inputs);
  if (name == "prefill-only") return prefill_only(inputs);
  if (name == "cross-process") return cross_process(inputs);
  if (name == "seed-replay") return seed_replay(inputs);
  std::string known;
  for (std::string_view n : scenario_names()) known += (known.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("unknown scenario '" + std::string(name) + "'; known: " + known);
}

}  // namespace baton
