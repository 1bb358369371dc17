#include "baton/analysis/strata.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>

#include "baton/analysis/spans.h"

namespace baton {
namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr std::array<std::pair<Factor, std::string_view>, 5> kFactorNames{{
    {Factor::busy, "busy"},
    {Factor::dual, "dual"},
    {Factor::prefill_in_flight, "prefill_in_flight"},
    {Factor::long_context, "long_context"},
    {Factor::host, "host"},
}};

Spans joined(Spans spans) {
  std::sort(spans.begin(), spans.end());
  return join_spans(spans, 0.0);
}

// A change of state at `time`: `counter` (0 busy engines, 1 prefill, 2 long) by `delta`.
struct Step {
  double time;
  int counter;
  int delta;
};

void add_steps(std::vector<Step>& steps, const Spans& spans, int counter) {
  for (const auto& [start, end] : spans) {
    steps.push_back({start, counter, +1});
    steps.push_back({end, counter, -1});
  }
}

// Constant-state stretches [start, end) while some engine is busy.
struct Segment {
  double start, end;
  StratumState state;
};

std::vector<Segment> segments_of(const ExposureInput& input, std::int64_t threshold,
                                 const std::string& host) {
  std::map<std::string, Spans> busy;
  Spans prefill, long_context;
  for (const BusyInterval& interval : input.intervals) {
    if (interval.kind == "embed" || !(interval.end > interval.start)) continue;
    busy[interval.engine].emplace_back(interval.start, interval.end);
    if (interval.kind == "prefill") prefill.emplace_back(interval.start, interval.end);
    if (interval.context_tokens && *interval.context_tokens >= threshold) {
      long_context.emplace_back(interval.start, interval.end);
    }
  }
  std::vector<Step> steps;
  for (auto& [engine, spans] : busy) add_steps(steps, joined(std::move(spans)), 0);
  add_steps(steps, joined(std::move(prefill)), 1);
  add_steps(steps, joined(std::move(long_context)), 2);
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.time < b.time; });
  std::vector<Segment> segments;
  std::array<int, 3> depth{};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    depth[static_cast<std::size_t>(steps[i].counter)] += steps[i].delta;
    const bool last_at_time = i + 1 == steps.size() || steps[i + 1].time > steps[i].time;
    if (!last_at_time || depth[0] == 0 || i + 1 == steps.size()) continue;
    segments.push_back({steps[i].time,
                        steps[i + 1].time,
                        {std::min(depth[0], 3), depth[1] > 0, depth[2] > 0, host}});
  }
  return segments;
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
                const std::set<std::string>& hang_classes, const std::string& host) {
  const std::vector<Segment> segments = segments_of(input, long_context_threshold, host);
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
    } else {
      ++by_state[std::prev(after)->state].hangs;
    }
  }
  for (auto& [state, stratum] : by_state) result.strata.push_back(std::move(stratum));
  return result;
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
    }
  }
  for (auto& [state, stratum] : by_state) result.strata.push_back(std::move(stratum));
  return result;
}

PoissonDesign design_for(const Strata& strata, const std::vector<Factor>& factors) {
  std::set<std::string> hosts;
  for (const Stratum& s : strata.strata) hosts.insert(s.state.host);
  PoissonDesign design;
  // Each factor's columns, and the covariates a state gives them.
  std::vector<std::function<double(const StratumState&)>> value_of;
  const auto column = [&](std::string name, std::function<double(const StratumState&)> f) {
    design.terms.back().columns.push_back(design.columns.size());
    design.columns.push_back(std::move(name));
    value_of.push_back(std::move(f));
  };
  for (const Factor factor : factors) {
    design.terms.push_back({std::string(to_string(factor)), {}});
    switch (factor) {
      case Factor::busy:
        column("busy=2", [](const StratumState& s) { return s.busy == 2 ? 1.0 : 0.0; });
        column("busy=3+", [](const StratumState& s) { return s.busy >= 3 ? 1.0 : 0.0; });
        break;
      case Factor::dual:
        column("dual", [](const StratumState& s) { return s.busy >= 2 ? 1.0 : 0.0; });
        break;
      case Factor::prefill_in_flight:
        column("prefill_in_flight",
               [](const StratumState& s) { return s.prefill_in_flight ? 1.0 : 0.0; });
        break;
      case Factor::long_context:
        column("long_context", [](const StratumState& s) { return s.long_context ? 1.0 : 0.0; });
        break;
      case Factor::host:
        for (auto it = std::next(hosts.begin(), hosts.empty() ? 0 : 1); it != hosts.end(); ++it) {
          column("host=" + *it,
                 [host = *it](const StratumState& s) { return s.host == host ? 1.0 : 0.0; });
        }
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
  return design;
}

}  // namespace baton
