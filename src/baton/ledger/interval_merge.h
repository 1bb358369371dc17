// Merging consecutive bursts into one busy interval, so that a ledger of hours of decode
// steps stays small. Two intervals merge when they are of the same run, engine, kind and
// request, the second starts no later than `max_gap_s` after the first ends, and their
// context lengths fall in the same power-of-two bucket. The merged interval keeps the
// largest context length and counts its bursts, so a long-context threshold that is a
// power of two (the default 32768 is 2^15) classifies merged intervals exactly.
// Thread-safety: a pure function.
#pragma once

#include <vector>

#include "baton/ledger/ledger_rows.h"

namespace baton {

// `rows` in the order each engine produced them (engines may interleave).
std::vector<IntervalRow> merge_consecutive(std::vector<IntervalRow> rows, double max_gap_s);

}  // namespace baton
