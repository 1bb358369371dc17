#include "baton/analysis/prometheus_matrix.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace baton {
namespace {

using nlohmann::json;

// The series named as a user would select it: {instance="h1:8000",busy="2"}.
std::string series_name(const json& series) {
  const auto metric = series.find("metric");
  if (metric == series.end() || !metric->is_object()) return "{}";
  std::string name;
  for (const auto& [label, value] : metric->items()) {
    name += (name.empty() ? "" : ",") + label + "=" +
            (value.is_string() ? "\"" + value.get<std::string>() + "\"" : value.dump());
  }
  return "{" + name + "}";
}

[[noreturn]] void bad_sample(const json& sample, const json& series, std::string_view what,
                             const std::string& problem) {
  throw std::invalid_argument("Prometheus: the " + std::string(what) + " series " +
                              series_name(series) + " has a sample " + sample.dump() + ": " +
                              problem);
}

}  // namespace

const json& matrix_series(const json& data, std::string_view what) {
  if (!data.is_object() || !data.contains("resultType") || data["resultType"] != "matrix" ||
      !data.contains("result") || !data["result"].is_array()) {
    throw std::invalid_argument("Prometheus: the " + std::string(what) +
                                " query did not return a matrix");
  }
  for (const json& series : data["result"]) {
    if (!series.is_object() || !series.contains("metric") || !series["metric"].is_object() ||
        !series.contains("values") || !series["values"].is_array()) {
      throw std::invalid_argument("Prometheus: the " + std::string(what) +
                                  " query returned a series without its labels (\"metric\") "
                                  "or samples (\"values\"): " +
                                  series.dump().substr(0, 200));
    }
  }
  return data["result"];
}

PrometheusSample prometheus_sample(const json& sample, const json& series, std::string_view what) {
  if (!sample.is_array() || sample.size() != 2) {
    bad_sample(sample, series, what, "not [time, \"value\"]");
  }
  if (!sample[0].is_number() || !std::isfinite(sample[0].get<double>())) {
    bad_sample(sample, series, what, "its time is not a number");
  }
  if (!sample[1].is_string()) bad_sample(sample, series, what, "its value is not a string");
  const std::string& text = sample[1].get_ref<const std::string&>();
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    bad_sample(sample, series, what, "its value is not a finite number");
  }
  return {.time = sample[0].get<double>(), .value = value};
}

void MatrixMerger::add(const json& data) {
  for (const json& one : matrix_series(data, what_)) {
    Series& into = series_[one["metric"].dump()];
    into.metric = one["metric"];
    for (const json& sample : one["values"]) {
      into.samples.emplace(prometheus_sample(sample, one, what_).time, sample);
    }
  }
}

json MatrixMerger::result() const {
  json result = json::array();
  for (const auto& [key, series] : series_) {
    json values = json::array();
    for (const auto& [time, sample] : series.samples) values.push_back(sample);
    result.push_back({{"metric", series.metric}, {"values", std::move(values)}});
  }
  return {{"resultType", "matrix"}, {"result", std::move(result)}};
}

}  // namespace baton
