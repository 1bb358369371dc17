// A Prometheus server's HTTP API, as `baton analyze --prometheus URL` reads it: instant
// queries (GET /api/v1/query), their "data" object returned, and the raw samples of a
// series selector over a window, read in pieces that each fit the response limit and
// merged. Plain HTTP on the URL's host and port (a bracketed IPv6 address too; a path
// prefix kept, as behind a proxy); no TLS. Every request has a deadline: a server that
// accepts and never answers is an error after `timeout`, not a hang.
// Thread-safety: pure functions of the network.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace baton {

struct PrometheusServer {
  std::string url;  // http://HOST[:PORT][/PREFIX], HOST a name, an IPv4 or [IPv6] address
  std::chrono::milliseconds timeout{30000};  // for each request, from resolving to the body
};

// std::invalid_argument for a URL that is not http://HOST[:PORT][/PREFIX]; std::runtime_error
// naming the URL for a server that cannot be reached, does not answer within the timeout,
// an HTTP error or a query Prometheus refuses (its own error message).
// `time`: the query's evaluation time, Unix seconds.
nlohmann::json prometheus_query(const PrometheusServer& server, const std::string& query,
                                double time);

// The raw samples of `selector` (a metric name and label matchers) in (start, end], as the
// data of one query `selector[end - start]` at `end` would hold them: a matrix. Read as
// queries over pieces of at most a day, a piece halved while its answer outgrows the
// response limit (8 MiB); errors as prometheus_query(), and std::invalid_argument for a
// matrix that is not one (prometheus_matrix.h).
nlohmann::json prometheus_samples(const PrometheusServer& server, const std::string& selector,
                                  double start, double end);

}  // namespace baton
