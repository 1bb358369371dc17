// Router: the HTTP API of `baton serve`, from a parsed request to a response: the OpenAI
// routes (chat completions, completions, embeddings, models) and baton's own (health,
// metrics, engines). It authenticates /v1/ routes when an API key is set (compared in
// constant time), finds the model (404 lists the loaded ones), turns the request into an
// engine request, and hands back a PendingResponse the engine fills.
// Thread-safety: handle() may run on every I/O thread at once; the rest is set-up.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "baton/host/engine_host.h"
#include "baton/server/dual_engine_clock.h"
#include "baton/server/engine_health.h"
#include "baton/server/http_server.h"
#include "baton/server/http_types.h"
#include "baton/server/metrics.h"
#include "baton/server/openai_request.h"
#include "baton/server/served_model.h"

namespace baton {

struct RouterContext {
  std::vector<ServedModel*> models;  // in the configuration's order
  EngineHost& host;
  EngineHealth& health;
  ServerMetrics& metrics;
  DualEngineClock& busy;
  std::string api_key;  // empty: no authentication
  std::string policy;   // the turn policy, described (turn_options.h)
  std::function<HttpServerStats()> http_stats;  // set before serving
};

class Router {
 public:
  explicit Router(RouterContext context);
  RouteResult handle(const HttpRequest& request);
  // HTTP status and reason of GET /health right now (for logs and tests).
  HttpResponse health() const;

 private:
  RouteResult completion(const HttpRequest& request, CompletionCall::Kind kind);
  RouteResult embeddings(const HttpRequest& request);
  HttpResponse models() const;
  HttpResponse metrics() const;
  HttpResponse engines() const;
  bool authorized(const HttpRequest& request) const;
  // The model named `name` of the kind the route serves; ApiError 404 otherwise.
  ServedModel& find(const std::string& name, bool chat) const;
  GenerationRequest generation_request(const CompletionCall& call, const ServedModel& model);
  std::string next_unique();
  void count(const std::string& model, const std::string& route, int status) const;

  RouterContext context_;
  std::map<std::string, ServedModel*> by_name_;
  const std::string id_prefix_;
  std::atomic<std::uint64_t> serial_{0};
};

// Equal, in time that depends only on the lengths (an API key check leaks nothing else).
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace baton
