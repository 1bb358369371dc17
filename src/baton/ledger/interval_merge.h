// Merging consecutive bursts into one busy interval, so that a ledger of hours of decode
// steps stays small. Two intervals merge when they are of the same run, engine, kind and
// request, the second starts no later than `max_gap_s` after the first ends, and their
// context lengths fall in the same power-of-two bucket. The merged interval keeps the
// largest context length and counts its bursts, so a long-context threshold that is a
// power of two (the default 32768 is 2^15) classifies merged intervals exactly.
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "baton/ledger/ledger_rows.h"

namespace baton {

// What the rule compares of two bursts of one engine; the live exposure counters
// (server/observe) apply the same rule to bursts before they reach a ledger.
struct MergeSide {
  std::string_view kind;
  std::optional<std::int64_t> request_id;
  std::optional<std::int64_t> context_tokens;
  double start = 0;
  double end = 0;
};

// Whether `next`, its engine's burst after `first`, extends `first`.
bool extends_interval(const MergeSide& first, const MergeSide& next, double max_gap_s);

// `rows` in the order each engine produced them (engines may interleave).
std::vector<IntervalRow> merge_consecutive(std::vector<IntervalRow> rows, double max_gap_s);

}  // namespace baton
