#include "baton/analysis/spans.h"

#include <algorithm>

namespace baton {

Spans join_spans(const Spans& sorted, double gap) {
  Spans out;
  for (const auto& [start, end] : sorted) {
    if (!out.empty() && start - out.back().second < gap) {
      out.back().second = std::max(out.back().second, end);
    } else {
      out.emplace_back(start, end);
    }
  }
  return out;
}

}  // namespace baton
