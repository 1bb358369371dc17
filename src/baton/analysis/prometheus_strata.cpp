#include "baton/analysis/prometheus_strata.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace baton {
namespace {

using nlohmann::json;

const json& series_of(const json& data, const char* what) {
  if (!data.is_object() || data.value("resultType", "") != "matrix" || !data.contains("result") ||
      !data["result"].is_array()) {
    throw std::invalid_argument(std::string("Prometheus: the ") + what +
                                " query did not return a matrix");
  }
  return data["result"];
}

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
  return StratumState{busy == "3+" ? 3 : std::stoi(busy),
                      flag(metric, "prefill_in_flight"),
                      flag(metric, "long_context"),
                      label(metric, "instance"),
                      label(metric, "policy"),
                      label(metric, "backend"),
                      "",   // driver: the counters carry none
                      ""};  // day
}

// Whether the process behind a series started inside the window: the start time its
// instance reported at the scrape nearest the series' first sample.
class ProcessStarts {
 public:
  ProcessStarts(const json& data, double window_start) : window_start_(window_start) {
    for (const json& series : series_of(data, "process start")) {
      auto& samples = by_instance_[label(series.at("metric"), "instance")];
      for (const json& sample : series.at("values")) {
        samples.emplace_back(sample.at(0).get<double>(),
                             std::stod(sample.at(1).get<std::string>()));
      }
    }
  }
  bool started_inside(const json& series) const {
    const auto it = by_instance_.find(label(series.at("metric"), "instance"));
    const json& values = series.at("values");
    if (it == by_instance_.end() || values.empty()) return false;
    const double first = values.at(0).at(0).get<double>();
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
  for (const json& sample : values) {
    const double value = std::stod(sample.at(1).get<std::string>());
    if (previous) increase += value >= *previous ? value - *previous : value;
    previous = value;
  }
  return increase;
}

Strata strata_from_prometheus(const PrometheusSeries& data,
                              const std::set<std::string>& hang_classes) {
  const ProcessStarts starts(data.starts, data.window_start);
  const auto increase = [&](const json& series) {
    return counter_increase(series.at("values"), starts.started_inside(series));
  };
  std::map<StratumState, Stratum> by_state;
  for (const json& series : series_of(data.exposure, "exposure")) {
    const std::optional<StratumState> state = state_of(series.at("metric"));
    if (!state) continue;
    Stratum& s = by_state[*state];
    s.state = *state;
    s.hours += increase(series) / 3600.0;
  }
  Strata result;
  for (const json& series : series_of(data.faults, "faults")) {
    const json& metric = series.at("metric");
    if (!hang_classes.contains(label(metric, "class"))) continue;
    const auto count = std::llround(increase(series));
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
