// Request and its result: one unit of work a client hands an engine.
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton {

struct Request {
  std::uint64_t id = 0;
  std::uint32_t bursts = 1;  // decode steps (tokens), prefill chunks or embed calls
};

struct RequestResult {
  std::uint64_t id = 0;
  std::vector<double> burst_ms;  // latency of each burst, turn wait included
};

// The engine is stopping (or stopped) and did not finish the request. Retryable:
// the same request may be sent again to a running engine.
class EngineStopped : public std::runtime_error {
 public:
  explicit EngineStopped(const std::string& engine)
      : std::runtime_error("[engine " + engine + "] stopped before the request finished; retry") {}
};

}  // namespace baton
