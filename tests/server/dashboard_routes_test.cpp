// The dashboard's routes through a real Router: GET / and its script and style sheet,
// with their content types and without an API key; GET /v1/timeline (behind the key) with
// the engines' lanes, a fault, and its seconds parameter.
#include "baton/server/observe/dashboard_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baton/host/make_device.h"
#include "baton/server/routes/router.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// A Router over a host with no engines and one on-demand model that is never loaded.
class DashboardRoutes : public ::testing::Test {
 protected:
  static std::vector<ModelSpec> specs() {
    ModelSpec spec;
    spec.name = "a";
    spec.on_demand = true;
    return {spec};
  }

  HttpResponse send(const std::string& method, const std::string& target,
                    const std::string& key = "") {
    HttpRequest request;
    request.method = method;
    const std::size_t q = target.find('?');
    request.target = target.substr(0, q);
    if (q != std::string::npos) request.query = target.substr(q + 1);
    if (!key.empty()) request.headers["authorization"] = "Bearer " + key;
    RouteResult result = router_.handle(request);
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(result)) << target;
    return std::holds_alternative<HttpResponse>(result) ? std::get<HttpResponse>(result)
                                                        : HttpResponse{};
  }

  EngineHost host_{make_device("cpu"), TurnOptions{}};
  ModelRegistry models_{specs(), RegistryOptions{},
                        [](const ModelSpec&, const ModelRegistry::Progress&) {
                          return std::unique_ptr<ServedModel>();
                        },
                        [](const ModelSpec&) { return std::uint64_t{0}; },
                        [](const LifecycleEvent&) {}};
  EngineHealth health_{100ms, 5s};
  ServerMetrics metrics_{{"a"}};
  DualEngineClock busy_;
  RecentActivity activity_;
  Router router_{[this] {
    RouterContext context{.models = models_,
                          .host = host_,
                          .health = health_,
                          .metrics = metrics_,
                          .busy = busy_,
                          .api_key = "secret",
                          .policy = "concurrent",
                          .http_stats = {}};
    context.activity = &activity_;
    return context;
  }()};
};

TEST_F(DashboardRoutes, TheRootIsTheDashboardPageWithoutAKey) {
  const HttpResponse page = send("GET", "/");
  EXPECT_EQ(page.head.status, 200);
  EXPECT_EQ(page.head.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<!doctype html>"), std::string::npos);
  EXPECT_NE(page.body.find("<script src=\"/dashboard.js\">"), std::string::npos);
  EXPECT_NE(page.body.find("href=\"/dashboard.css\""), std::string::npos);

  const HttpResponse script = send("GET", "/dashboard.js");
  EXPECT_EQ(script.head.status, 200);
  EXPECT_EQ(script.head.content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(script.body.find("/v1/timeline"), std::string::npos);
  const HttpResponse style = send("GET", "/dashboard.css");
  EXPECT_EQ(style.head.status, 200);
  EXPECT_EQ(style.head.content_type, "text/css; charset=utf-8");

  // Exactly the files of the folder, whole, and nothing else.
  for (const EmbeddedFile& file : dashboard_files()) {
    EXPECT_EQ(send("GET", "/" + std::string(file.name)).body, file.bytes) << file.name;
  }
  EXPECT_EQ(send("GET", "/nothing.js").head.status, 404);
  EXPECT_EQ(send("GET", "/../CMakeLists.txt").head.status, 404);
  EXPECT_EQ(send("POST", "/").head.status, 405);
}

TEST_F(DashboardRoutes, TheTimelineNeedsTheKeyAndHasLanesOverlapAndFaults) {
  EXPECT_EQ(send("GET", "/v1/timeline").head.status, 401);
  const TimePoint now = Clock::now();
  BurstRecord burst;
  burst.engine = "a";
  burst.asked = now - 2s;
  burst.done = now - 1s;
  activity_.burst_done(burst);
  FaultEvent fault;
  fault.kind = FaultKind::hang;
  fault.engine = "a";
  fault.time = now - 1s;
  fault.onset = now - 1500ms;
  fault.wall_time = std::chrono::system_clock::now();
  fault.detail = "injected";
  host_.faults().record(fault);

  const HttpResponse response = send("GET", "/v1/timeline", "secret");
  ASSERT_EQ(response.head.status, 200) << response.body;
  EXPECT_EQ(response.head.content_type, "application/json");
  const json body = json::parse(response.body);
  EXPECT_EQ(body["seconds"], 600.0);
  ASSERT_EQ(body["engines"].size(), 1u);
  EXPECT_EQ(body["engines"][0]["name"], "a");  // configured, though not loaded
  ASSERT_EQ(body["engines"][0]["intervals"].size(), 1u);
  const double start = body["engines"][0]["intervals"][0][0];
  EXPECT_NEAR(start, activity_.unix_seconds(now - 2s), 1e-6);
  EXPECT_TRUE(body["overlap"].empty());
  ASSERT_EQ(body["faults"].size(), 1u);
  EXPECT_EQ(body["faults"][0]["kind"], "hang");
  EXPECT_EQ(body["faults"][0]["engine"], "a");
  EXPECT_EQ(body["faults"][0]["detail"], "injected");
  EXPECT_NEAR(body["faults"][0]["time"].get<double>(), activity_.unix_seconds(now - 1s), 1e-6);
  EXPECT_NEAR(body["faults"][0]["onset"].get<double>(), activity_.unix_seconds(now - 1500ms), 1e-6);
  const double now_s = body["now"];
  EXPECT_GE(now_s, activity_.unix_seconds(now));
}

TEST_F(DashboardRoutes, SecondsOutsideItsRangeOrMalformedIsA400) {
  EXPECT_EQ(json::parse(send("GET", "/v1/timeline?seconds=60", "secret").body)["seconds"], 60.0);
  EXPECT_EQ(json::parse(send("GET", "/v1/timeline?x=1&seconds=3600", "secret").body)["seconds"],
            kTimelineMaxSeconds);
  // Past the maximum it is refused as 0 and -5 are, with the same message, not capped.
  for (const char* bad : {"seconds=", "seconds=abc", "seconds=-5", "seconds=0", "seconds=1e999",
                          "seconds=10s", "seconds=99999", "seconds=3600.5"}) {
    const HttpResponse response = send("GET", std::string("/v1/timeline?") + bad, "secret");
    EXPECT_EQ(response.head.status, 400) << bad;
    EXPECT_EQ(json::parse(response.body)["error"]["param"], "seconds") << bad;
  }
  // A fault outside the window is left out.
  FaultEvent old;
  old.kind = FaultKind::timeout;
  old.time = Clock::now() - 120s;
  host_.faults().record(old);
  EXPECT_TRUE(json::parse(send("GET", "/v1/timeline?seconds=60", "secret").body)["faults"].empty());
  EXPECT_EQ(json::parse(send("GET", "/v1/timeline", "secret").body)["faults"].size(), 1u);
}

}  // namespace
}  // namespace baton
