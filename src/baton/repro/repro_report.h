// Reports of `baton repro`: a human-readable table and one JSON object.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "baton/repro/repro_compare.h"

namespace baton {

nlohmann::json to_json(const ReproResult& run);
nlohmann::json to_json(const ReproComparison& comparison);
// What to_json(run) wrote, read back (the cross-process scenario's children report so).
// Throws nlohmann::json::exception on a malformed object.
ReproResult result_from_json(const nlohmann::json& json);

void print_table(std::ostream& out, const ReproResult& run);
void print_table(std::ostream& out, const ReproComparison& comparison);

}  // namespace baton
