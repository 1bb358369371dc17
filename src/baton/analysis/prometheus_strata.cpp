#include "baton/analysis/prometheus_strata.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "baton/analysis/prometheus_matrix.h"

namespace baton {
namespace {

using nlohmann::json;

std::string label(const json& metric, const char* name) {
  const auto it = metric.find(name);
  return it != metric.end() && it->is_string() ? it->get<std::string>() : "";
}

bool flag(const json& metric, const char* name) {
  const std::string value = label(metric, name);
  if (value != "true" && value != "false") {
    throw std::invalid_argument(std::string("Prometheus: label ") + name + "=\"" + value +
                                "\" is neither true nor false");
  }
  return value == "true";
}

// The state the series' labels name; nullopt for busy="0" (no LLM engine busy).
std::optional<StratumState> state_of(const json& metric) {
  const std::string busy = label(metric, "busy");
  if (busy == "0") return std::nullopt;
  if (busy != "1" && busy != "2" && busy != "3+") {
    throw std::invalid_argument("Prometheus: label busy=\"" + busy + "\" is not 0, 1, 2 or 3+");
  }
  // driver and day: the counters carry none
  return StratumState{.busy = busy == "3+" ? 3 : std::stoi(busy),
                      .prefill_in_flight = flag(metric, "prefill_in_flight"),
                      .long_context = flag(metric, "long_context"),
                      .host = label(metric, "instance"),
                      .policy = label(metric, "policy"),
                      .backend = label(metric, "backend")};
}

// Whether the process behind a series started inside the window: the start time its
// instance reported at the scrape nearest the series' first sample.
class ProcessStarts {
 public:
  ProcessStarts(const json& data, double window_start) : window_start_(window_start) {
    for (const json& series : matrix_series(data, "process start")) {
      auto& samples = by_instance_[label(series["metric"], "instance")];
      for (const json& sample : series["values"]) {
        const PrometheusSample s = prometheus_sample(sample, series, "process start");
        samples.emplace_back(s.time, s.value);
      }
    }
  }
  bool started_inside(const json& series) const {
    const auto it = by_instance_.find(label(series["metric"], "instance"));
    const json& values = series["values"];
    if (it == by_instance_.end() || values.empty()) return false;
    const double first = prometheus_sample(values[0], series, "counter").time;
    const auto nearest = std::min_element(
        it->second.begin(), it->second.end(), [first](const auto& a, const auto& b) {
          return std::abs(a.first - first) < std::abs(b.first - first);
        });
    return nearest != it->second.end() && nearest->second >= window_start_;
  }

 private:
  double window_start_;
  std::map<std::string, std::vector<std::pair<double, double>>> by_instance_;  // (time, start)
};

}  // namespace

double counter_increase(const json& values, bool from_zero) {
  double increase = 0.0;
  std::optional<double> previous;
  if (from_zero) previous = 0.0;
  const json unnamed = json::object();
  for (const json& sample : values) {
    const double value = prometheus_sample(sample, unnamed, "counter").value;
    if (previous) increase += value >= *previous ? value - *previous : value;
    previous = value;
  }
  return increase;
}

Strata strata_from_prometheus(const PrometheusSeries& data,
                              const std::set<std::string>& hang_classes) {
  const ProcessStarts starts(data.starts, data.window_start);
  const auto increase = [&](const json& series, const char* what) {
    for (const json& sample : series["values"]) prometheus_sample(sample, series, what);
    return counter_increase(series["values"], starts.started_inside(series));
  };
  std::map<StratumState, Stratum> by_state;
  for (const json& series : matrix_series(data.exposure, "exposure")) {
    const std::optional<StratumState> state = state_of(series["metric"]);
    if (!state) continue;
    Stratum& s = by_state[*state];
    s.state = *state;
    s.hours += increase(series, "exposure") / 3600.0;
  }
  Strata result;
  for (const json& series : matrix_series(data.faults, "faults")) {
    const json& metric = series["metric"];
    if (!hang_classes.contains(label(metric, "class"))) continue;
    const auto count = std::llround(increase(series, "faults"));
    const std::optional<StratumState> state = state_of(metric);
    if (!state) {
      result.hangs_while_idle += count;
      continue;
    }
    Stratum& s = by_state[*state];
    s.state = *state;
    s.hangs += count;
    if (!label(metric, "engine").empty()) s.attributed_hangs += count;
  }
  for (auto& [state, stratum] : by_state) result.strata.push_back(std::move(stratum));
  return result;
}

}  // namespace baton
