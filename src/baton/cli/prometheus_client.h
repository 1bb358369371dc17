// A Prometheus server's HTTP API, as `baton analyze --prometheus URL` reads it: one
// instant query (GET /api/v1/query), its "data" object returned. Plain HTTP on the URL's
// host and port (a path prefix kept, as behind a proxy); no TLS.
// Thread-safety: a pure function of the network.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace baton {

// std::invalid_argument for a URL that is not http://HOST[:PORT][/PREFIX]; std::runtime_error
// naming the URL for a server that cannot be reached, an HTTP error or a query Prometheus
// refuses (its own error message).
// `time`: the query's evaluation time, Unix seconds.
nlohmann::json prometheus_query(const std::string& url, const std::string& query, double time);

}  // namespace baton
