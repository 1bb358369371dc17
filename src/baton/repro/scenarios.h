// The named scenarios of `baton repro --scenario NAME`: each answers one open question of
// the investigation behind baton by running a few variants of one set-up side by side.
//  - long-dispatch: single very long dispatches, alone and next to a decoder;
//  - overpacked:    command-buffer caps off (one buffer per burst) against the defaults;
//  - idle-resident: a second engine resident but idle, against the same engine busy;
//  - prefill-only:  a chunked prefill in flight with no second engine busy;
//  - cross-process: two processes, one engine each, against the same engines in one;
//  - seed-replay:   two LLM engines with long prompts, hangs injected in overlap and every
//                   failed request retried with its prefill redone (the study's pattern).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/repro/repro_options.h"

namespace baton {

struct ScenarioInputs {
  ReproOptions base;      // backend, duration, seed, ledger, watchdog and faults from the CLI
  std::string model_dir;  // the LLM engines' model (prefill-only, seed-replay)
  std::size_t prompt_tokens = 0;  // 0: the scenario's default for the backend
};

struct ScenarioVariant {
  std::string key;    // short, in the ledger's policy: "<scenario>:<key>"
  std::string label;  // in the table
  ReproOptions options;
  // > 1: each engine runs in its own `baton repro` process, sharing a host-wide turn.
  int processes = 1;
};

struct Scenario {
  std::string name;
  std::string question;
  std::vector<ScenarioVariant> variants;
  // seed-replay: after the runs, the uniform-placement and dependence tests on the ledger.
  bool analyze_hangs = false;
};

const std::vector<std::string_view>& scenario_names();

// Throws std::invalid_argument naming the problem: an unknown name (listing the known
// ones), or a scenario that needs --model without one.
Scenario make_scenario(std::string_view name, const ScenarioInputs& inputs);

}  // namespace baton
