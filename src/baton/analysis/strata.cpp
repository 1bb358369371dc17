#include "baton/analysis/strata.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <cctype>
#include <functional>
#include <map>

#include "baton/analysis/spans.h"
#include "baton/common/clock.h"

namespace baton {
namespace {

constexpr std::array<std::pair<Factor, std::string_view>, 10> kFactorNames{{
    {Factor::busy, "busy"},
    {Factor::dual, "dual"},
    {Factor::prefill_in_flight, "prefill_in_flight"},
    {Factor::long_context, "long_context"},
    {Factor::host, "host"},
    {Factor::policy, "policy"},
    {Factor::backend, "backend"},
    {Factor::driver, "driver"},
    {Factor::other_gpu_client, "other_gpu_client"},
    {Factor::day, "day"},
}};

Spans joined(Spans spans) {
  std::sort(spans.begin(), spans.end());
  return join_spans(spans, 0.0);
}

// A change of state at `time`: `counter` by `delta`. Counters: 0 busy engines, 1 prefill,
// 2 long context, then one per label (a policy, backend or driver value of the runs, or the
// other GPU clients' state).
struct Step {
  double time;
  std::size_t counter;
  int delta;
};

void add_steps(std::vector<Step>& steps, Spans spans, std::size_t counter) {
  for (const auto& [start, end] : joined(std::move(spans))) {
    steps.push_back({start, counter, +1});
    steps.push_back({end, counter, -1});
  }
}

// Constant-state stretches [start, end) while some engine is busy.
struct Segment {
  double start, end;
  StratumState state;
};

std::string utc_day(double unix_seconds) {
  const auto t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

// The one value among the open labels of `kind`, "mixed" for several, "" for none.
std::string label_of(const std::vector<std::pair<int, std::string>>& labels,
                     const std::vector<int>& depth, int kind) {
  std::string value;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].first != kind || depth[i + 3] == 0) continue;
    if (!value.empty() && value != labels[i].second) return "mixed";
    value = labels[i].second;
  }
  return value;
}

// Appends [start, end) in `state`, split at UTC midnights so that each piece has one day.
void add_segment(std::vector<Segment>& segments, double start, double end, StratumState state) {
  while (start < end) {
    const double midnight = (std::floor(start / kSecondsPerDay) + 1.0) * kSecondsPerDay;
    const double piece_end = std::min(end, midnight);
    state.day = utc_day(start);
    segments.push_back({start, piece_end, state});
    start = piece_end;
  }
}

std::vector<Segment> segments_of(const ExposureInput& input, std::int64_t threshold,
                                 const std::string& host, double other_client_sm_percent) {
  std::map<std::string, Spans> busy;
  Spans prefill, long_context;
  // (0 policy | 1 backend | 2 driver | 3 other GPU clients, value)
  std::map<std::pair<int, std::string>, Spans> by_label;
  for (const GpuUsePiece& piece : gpu_use_pieces(input.gpu_polls)) {
    by_label[{3, other_client_state(piece, other_client_sm_percent)}].emplace_back(piece.start,
                                                                                   piece.end);
  }
  // Outside every poll: not sampled, where the source has polls at all.
  const std::string unsampled = input.gpu_polls.empty() ? "" : "unsampled";
  for (const BusyInterval& interval : input.intervals) {
    if (interval.kind == "embed" || !(interval.end > interval.start)) continue;
    const std::pair span{interval.start, interval.end};
    busy[interval.engine].push_back(span);
    if (interval.kind == "prefill") prefill.push_back(span);
    if (interval.context_tokens && *interval.context_tokens >= threshold) {
      long_context.push_back(span);
    }
    if (!interval.policy.empty()) by_label[{0, interval.policy}].push_back(span);
    if (!interval.backend.empty()) by_label[{1, interval.backend}].push_back(span);
    if (!interval.driver.empty()) by_label[{2, interval.driver}].push_back(span);
  }
  std::vector<Step> steps;
  for (auto& [engine, spans] : busy) add_steps(steps, std::move(spans), 0);
  add_steps(steps, std::move(prefill), 1);
  add_steps(steps, std::move(long_context), 2);
  std::vector<std::pair<int, std::string>> labels;
  for (auto& [label, spans] : by_label) {
    add_steps(steps, std::move(spans), 3 + labels.size());
    labels.push_back(label);
  }
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.time < b.time; });
  std::vector<Segment> segments;
  std::vector<int> depth(3 + labels.size(), 0);
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    depth[steps[i].counter] += steps[i].delta;
    if (steps[i + 1].time == steps[i].time || depth[0] == 0) continue;
    const std::string other_client = label_of(labels, depth, 3);
    add_segment(segments, steps[i].time, steps[i + 1].time,
                {std::min(depth[0], 3), depth[1] > 0, depth[2] > 0, host,
                 label_of(labels, depth, 0), label_of(labels, depth, 1), label_of(labels, depth, 2),
                 "", other_client.empty() ? unsampled : other_client});
  }
  return segments;
}

// Names in natural order: digit runs compare as numbers ("h9" before "h10"); dates
// (YYYY-MM-DD) come out in time order either way.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) != 0 &&
        std::isdigit(static_cast<unsigned char>(b[j])) != 0) {
      const std::size_t i0 = i, j0 = j;
      while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])) != 0) ++i;
      while (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j])) != 0) ++j;
      std::string x = a.substr(i0, i - i0), y = b.substr(j0, j - j0);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal but for leading zeros: any fixed order
}

// Each term's level of a cell: 0 at its reference, k at its k-th column, so that the table
// lists busy=1, 2, 3+ and days in their order.
std::vector<std::size_t> levels_of(const PoissonDesign& design, const PoissonCell& cell) {
  std::vector<std::size_t> levels;
  for (const PoissonTerm& term : design.terms) {
    std::size_t level = 0;
    for (std::size_t k = 0; k < term.columns.size() && level == 0; ++k) {
      if (cell.covariates[term.columns[k]] != 0.0) level = k + 1;
    }
    levels.push_back(level);
  }
  return levels;
}

}  // namespace

std::optional<Factor> parse_factor(std::string_view name) {
  for (const auto& [factor, text] : kFactorNames) {
    if (text == name) return factor;
  }
  return std::nullopt;
}

std::string_view to_string(Factor factor) {
  for (const auto& [f, text] : kFactorNames) {
    if (f == factor) return text;
  }
  return "?";
}

std::string known_factors() {
  std::string names;
  for (const auto& [factor, text] : kFactorNames)
    names += (names.empty() ? "" : ", ") + std::string(text);
  return names;
}

Strata stratify(const ExposureInput& input, std::int64_t long_context_threshold,
                const std::set<std::string>& hang_classes, const std::string& host,
                double other_client_sm_percent) {
  const std::vector<Segment> segments =
      segments_of(input, long_context_threshold, host, other_client_sm_percent);
  std::map<StratumState, Stratum> by_state;
  for (const Segment& s : segments) {
    Stratum& stratum = by_state[s.state];
    stratum.state = s.state;
    stratum.hours += (s.end - s.start) / kSecondsPerHour;
  }
  Strata result;
  for (const HangRecord& hang : input.hangs) {
    if (!hang_classes.contains(hang.error_class)) continue;
    // The segment holding the hang's instant: the last one starting at or before it.
    auto after = std::upper_bound(segments.begin(), segments.end(), hang.time,
                                  [](double t, const Segment& s) { return t < s.start; });
    if (after == segments.begin() || !(hang.time < std::prev(after)->end)) {
      ++result.hangs_while_idle;
      result.events.push_back({std::nullopt, hang});
    } else {
      Stratum& s = by_state[std::prev(after)->state];
      ++s.hangs;
      if (!hang.engine.empty()) ++s.attributed_hangs;
      result.events.push_back({std::prev(after)->state, hang});
    }
  }
  for (auto& [state, stratum] : by_state) result.strata.push_back(std::move(stratum));
  return result;
}

double busy_hours(const Strata& strata) {
  double hours = 0.0;
  for (const Stratum& s : strata.strata) hours += s.hours;
  return hours;
}

Strata merge_strata(const std::vector<Strata>& parts) {
  std::map<StratumState, Stratum> by_state;
  Strata result;
  for (const Strata& part : parts) {
    result.hangs_while_idle += part.hangs_while_idle;
    for (const Stratum& s : part.strata) {
      Stratum& into = by_state[s.state];
      into.state = s.state;
      into.hours += s.hours;
      into.hangs += s.hangs;
      into.attributed_hangs += s.attributed_hangs;
    }
  }
  for (auto& [state, stratum] : by_state) result.strata.push_back(std::move(stratum));
  return result;
}

PoissonDesign design_for(const Strata& strata, const std::vector<Factor>& factors) {
  PoissonDesign design;
  // Each factor's columns, and the covariates a state gives them.
  std::vector<std::function<double(const StratumState&)>> value_of;
  const auto column = [&](std::string name, std::function<double(const StratumState&)> f) {
    design.terms.back().columns.push_back(design.columns.size());
    design.columns.push_back(std::move(name));
    value_of.push_back(std::move(f));
  };
  // A factor of named levels: a column for each level past the first, which is
  // `reference` where it occurred, else the first in natural order.
  const auto levels = [&](Factor factor, std::string StratumState::*field,
                          const std::string& reference = "") {
    std::set<std::string> names;
    for (const Stratum& s : strata.strata) names.insert(s.state.*field);
    std::vector<std::string> ordered(names.begin(), names.end());
    std::sort(ordered.begin(), ordered.end(), natural_less);
    if (const auto it = std::find(ordered.begin(), ordered.end(), reference);
        !reference.empty() && it != ordered.end()) {
      std::rotate(ordered.begin(), it, std::next(it));
    }
    if (!ordered.empty()) {
      design.terms.back().reference = std::string(to_string(factor)) + "=" + ordered[0];
    }
    for (std::size_t k = 1; k < ordered.size(); ++k) {
      column(std::string(to_string(factor)) + "=" + ordered[k],
             [field, name = ordered[k]](const StratumState& s) {
               return s.*field == name ? 1.0 : 0.0;
             });
    }
  };
  for (const Factor factor : factors) {
    design.terms.push_back(PoissonTerm{.name = std::string(to_string(factor))});
    switch (factor) {
      case Factor::busy:
        design.terms.back().reference = "busy=1";
        column("busy=2", [](const StratumState& s) { return s.busy == 2 ? 1.0 : 0.0; });
        column("busy=3+", [](const StratumState& s) { return s.busy >= 3 ? 1.0 : 0.0; });
        break;
      case Factor::dual:
        design.terms.back().reference = "one engine busy";
        column("dual", [](const StratumState& s) { return s.busy >= 2 ? 1.0 : 0.0; });
        break;
      case Factor::prefill_in_flight:
        design.terms.back().reference = "no prefill in flight";
        column("prefill_in_flight",
               [](const StratumState& s) { return s.prefill_in_flight ? 1.0 : 0.0; });
        break;
      case Factor::long_context:
        design.terms.back().reference = "no long context";
        column("long_context", [](const StratumState& s) { return s.long_context ? 1.0 : 0.0; });
        break;
      case Factor::host:
        levels(factor, &StratumState::host);
        break;
      case Factor::policy:
        levels(factor, &StratumState::policy);
        break;
      case Factor::backend:
        levels(factor, &StratumState::backend);
        break;
      case Factor::driver:
        levels(factor, &StratumState::driver);
        break;
      case Factor::other_gpu_client:
        levels(factor, &StratumState::other_gpu_client, "idle");
        break;
      case Factor::day:
        levels(factor, &StratumState::day);
        break;
    }
  }
  std::map<std::vector<double>, PoissonCell> cells;
  for (const Stratum& s : strata.strata) {
    std::vector<double> x;
    for (const auto& f : value_of) x.push_back(f(s.state));
    PoissonCell& cell = cells[x];
    cell.covariates = x;
    cell.hours += s.hours;
    cell.events += s.hangs;
  }
  for (auto& [x, cell] : cells) design.cells.push_back(std::move(cell));
  std::stable_sort(design.cells.begin(), design.cells.end(),
                   [&](const PoissonCell& a, const PoissonCell& b) {
                     return levels_of(design, a) < levels_of(design, b);
                   });
  return design;
}

}  // namespace baton
