// Reports of `baton repro --scenario`: the variants side by side in one table, then the
// hang analysis for seed-replay; or one JSON object.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "baton/repro/scenario_run.h"

namespace baton {

nlohmann::json to_json(const ScenarioResult& result);
void print_table(std::ostream& out, const ScenarioResult& result);

}  // namespace baton
