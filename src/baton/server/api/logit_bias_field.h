// OpenAI's "logit_bias" field: a JSON object from token ids (decimal strings) to biases
// in [-100, 100], at most 300 entries, read into a LogitBias; and the check of its ids
// against a model's vocabulary, which only the route knows. Every mistake is a 400 with
// param "logit_bias" naming the offending key or value.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/model/output/logit_bias.h"

namespace baton {

// The field's value (present, not null) as a LogitBias sorted by token id; an empty
// object gives an empty one (no bias).
LogitBias parse_logit_bias(const nlohmann::json& value);

}  // namespace baton
