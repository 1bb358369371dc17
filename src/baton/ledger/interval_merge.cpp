#include "baton/ledger/interval_merge.h"

#include "baton/common/context_bucket.h"

#include <algorithm>
#include <map>
#include <utility>

namespace baton {
namespace {

// Intervals without a context length form a bucket of their own.
std::optional<std::size_t> bucket_of(const std::optional<std::int64_t>& tokens) {
  if (!tokens) return std::nullopt;
  return context_bucket(static_cast<std::size_t>(std::max<std::int64_t>(0, *tokens)));
}

MergeSide side_of(const IntervalRow& row) {
  return {.kind = row.kind,
          .request_id = row.request_id,
          .context_tokens = row.context_tokens,
          .start = row.start,
          .end = row.end};
}

}  // namespace

bool extends_interval(const MergeSide& first, const MergeSide& next, double max_gap_s) {
  return first.kind == next.kind && first.request_id == next.request_id &&
         bucket_of(first.context_tokens) == bucket_of(next.context_tokens) &&
         next.start >= first.start && next.start <= first.end + max_gap_s;
}

std::vector<IntervalRow> merge_consecutive(std::vector<IntervalRow> rows, double max_gap_s) {
  std::vector<IntervalRow> merged;
  merged.reserve(rows.size());
  std::map<std::pair<std::int64_t, std::string>, std::size_t> last_of_engine;
  for (IntervalRow& row : rows) {
    auto key = std::make_pair(row.run_id, row.engine);
    auto it = last_of_engine.find(key);
    if (it != last_of_engine.end() && extends_interval(side_of(merged[it->second]), side_of(row), max_gap_s)) {
      IntervalRow& into = merged[it->second];
      into.end = std::max(into.end, row.end);
      if (row.context_tokens) {
        into.context_tokens = std::max(*into.context_tokens, *row.context_tokens);
      }
      into.bursts += row.bursts;
      continue;
    }
    last_of_engine[std::move(key)] = merged.size();
    merged.push_back(std::move(row));
  }
  return merged;
}

}  // namespace baton
