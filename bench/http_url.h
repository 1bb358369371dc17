// The host and port of a load tool's --url (http://HOST[:PORT][/...]), for the Beast
// clients of bench/serve_load and bench/serve_latency.
// Thread-safety: a plain value and a pure function.
#pragma once

#include <stdexcept>
#include <string>

struct HttpTarget {
  std::string host;
  std::string port;
};

inline HttpTarget parse_url(const std::string& url) {
  const std::string prefix = "http://";
  if (url.rfind(prefix, 0) != 0) throw std::invalid_argument("--url must start with http://");
  std::string rest = url.substr(prefix.size());
  if (const std::size_t slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return {.host = rest, .port = "80"};
  return {.host = rest.substr(0, colon), .port = rest.substr(colon + 1)};
}
