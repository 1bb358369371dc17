// The matrices of the Prometheus HTTP API (resultType "matrix": series, each its labels
// and [time, "value"] samples), read with checks that say what is wrong in the data, and
// merged from the pieces of a range read in several queries (`baton analyze --prometheus`
// pages its window: one query of a week can outgrow the response limit).
// Thread-safety: pure functions; a MatrixMerger belongs to one thread at a time.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace baton {

struct PrometheusSample {
  double time = 0.0;  // Unix seconds
  double value = 0.0;
};

// The series of a query's "data" that must be a matrix; `what` names the query in errors
// ("exposure"). std::invalid_argument when it is not a matrix or a series lacks its
// "metric" object or "values" array.
const nlohmann::json& matrix_series(const nlohmann::json& data, std::string_view what);

// One sample of `series`, checked: std::invalid_argument naming the series and what is
// wrong when it is not [time, "number"] (a value is a string in the API, "NaN" and
// "+Inf" included; those are refused too, a counter is finite).
PrometheusSample prometheus_sample(const nlohmann::json& sample, const nlohmann::json& series,
                                   std::string_view what);

// The pieces of one range query merged: each series (by its labels) with its samples in
// time order, a sample that two pieces share (their common edge) kept once.
class MatrixMerger {
 public:
  explicit MatrixMerger(std::string what) : what_(std::move(what)) {}
  // Adds one piece's "data"; std::invalid_argument as matrix_series() and
  // prometheus_sample() say.
  void add(const nlohmann::json& data);
  // {"resultType": "matrix", "result": [...]}: the series in label order.
  nlohmann::json result() const;

 private:
  struct Series {
    nlohmann::json metric;
    std::map<double, nlohmann::json> samples;  // by time
  };
  std::string what_;
  std::map<std::string, Series> series_;  // by the labels' JSON text
};

}  // namespace baton
