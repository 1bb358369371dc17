// A whole BatonServer over HTTP with models that load and unload while it serves: an
// on-demand model loaded by racing requests, unload and load by the API, a budget that
// evicts, a model with bad files beside good ones, and the ledger's events afterwards.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "baton/common/signal_pipe.h"
#include "baton/ledger/sqlite.h"
#include "baton/model/writer/model_writer.h"
#include "baton/server/baton_server.h"
#include "model/safetensors_writer.h"
#include "server/http_test_client.h"
#include "server/in_process_server.h"
#include "temp_dir.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::HttpTestClient;

using test::InProcessServer;
using LifecycleServer = InProcessServer;

class LifecycleServerTest : public ::testing::Test {
 protected:
  ModelSpec model(const std::string& name, std::uint64_t seed) {
    ModelSpec spec;
    spec.name = name;
    spec.dir = dir_.path() / name;
    spec.kv_budget_mb = 4;
    write_model(spec.dir, ModelArch::qwen2, model_shape("tiny", ModelArch::qwen2), seed);
    return spec;
  }
  ServeConfig config(std::vector<ModelSpec> models) {
    ServeConfig c;
    c.port = 0;
    c.ledger = dir_.path() / "ledger.db";
    c.watchdog_deadline_s = 30;
    c.shutdown_timeout_s = 5;
    c.models = std::move(models);
    return c;
  }
  // The ledger's events: "class engine" in order.
  std::vector<std::string> ledger_events() {
    Database db(dir_.path() / "ledger.db", Database::Mode::read_only);
    Statement s(db, "SELECT class, coalesce(engine, '') FROM events ORDER BY id");
    std::vector<std::string> events;
    while (s.step()) events.push_back(s.column_text(0) + " " + s.column_text(1));
    return events;
  }

  testing::TempDir dir_;
};

TEST_F(LifecycleServerTest, ModelsLoadUnloadAndEvictOverHttpAndTheLedgerHasEveryEvent) {
  ModelSpec a = model("a", 1), b = model("b", 2), c = model("c", 3), bad = model("bad", 4);
  b.on_demand = c.on_demand = bad.on_demand = true;
  std::ofstream(bad.dir / "model.safetensors", std::ios::trunc) << "{broken";
  ServeConfig cfg = config({a, b, c, bad});
  cfg.memory_budget_mb = 10;  // room for two models of 4 MB of KV and 0.3 MB of weights
  const std::uint64_t each = estimated_memory_bytes(a), budget = std::uint64_t{10} << 20;
  ASSERT_TRUE(2 * each <= budget && budget < 3 * each) << each;
  {
    LifecycleServer server(std::move(cfg));
    EXPECT_EQ(server.state("a"), "ready");
    EXPECT_EQ(server.state("b"), "unloaded");

    // Requests racing b's on-demand load all get an answer from it.
    std::vector<std::future<int>> racing;
    for (int i = 0; i < 6; ++i) {
      racing.push_back(std::async(std::launch::async, [&] {
        int status = 0;
        server.chat("b", &status);
        return status;
      }));
    }
    for (auto& r : racing) EXPECT_EQ(r.get(), 200);
    EXPECT_EQ(server.state("b"), "ready");

    // c does not fit beside a and b: the least recently used (a) goes.
    int status = 0;
    server.chat("c", &status);
    EXPECT_EQ(status, 200);
    EXPECT_EQ(server.state("a"), "unloaded");
    EXPECT_EQ(server.state("b"), "ready");

    // A bad model fails alone, with its reason, and the others keep serving. Its files are
    // found bad only by loading, so the room made for it (b's) is gone: b loads again.
    const std::string failed = server.chat("bad", &status);
    EXPECT_EQ(status, 503) << failed;
    EXPECT_NE(failed.find("model.safetensors"), std::string::npos) << failed;
    const json bad_status = server.get("/v1/models/bad");
    EXPECT_EQ(bad_status["state"], "failed");
    EXPECT_FALSE(bad_status["reason"].get<std::string>().empty());
    server.chat("b", &status);
    EXPECT_EQ(status, 200);

    // Unload and load by the API.
    EXPECT_EQ(server.send("POST", "/v1/models/b/unload").status, 202);
    ASSERT_TRUE(server.wait_for_state("b", "unloaded"));
    EXPECT_EQ(server.send("POST", "/v1/models/a/load").status, 202);
    ASSERT_TRUE(server.wait_for_state("a", "ready"));
    server.chat("a", &status);
    EXPECT_EQ(status, 200);
    EXPECT_EQ(server.send("POST", "/v1/models/a/load").status, 200);  // already ready
    EXPECT_EQ(server.send("POST", "/v1/models/nope/load").status, 404);
    EXPECT_EQ(server.send("GET", "/v1/models/a/unload").status, 405);

    const json models = server.get("/v1/models");
    EXPECT_LE(models["memory"]["used_bytes"].get<std::uint64_t>(),
              models["memory"]["budget_bytes"].get<std::uint64_t>());
    EXPECT_EQ(server.stop(), 0);
  }
  const std::vector<std::string> expected = {"load a", "load b",   "evict a",
                                             "load c", "evict b",  "load_failed bad",
                                             "load b", "unload b", "load a"};
  EXPECT_EQ(ledger_events(), expected);
}

// The ledger is damaged while the server runs (a table renamed away by another
// connection: every commit fails). /health and /metrics say so at once, the server keeps
// answering, and the log and the exit code say what was lost.
TEST_F(LifecycleServerTest, ALedgerThatStopsTakingWritesIsInHealthMetricsTheLogAndTheExit) {
  LifecycleServer server(config({model("a", 1)}));
  {
    Database db(dir_.path() / "ledger.db");
    db.exec("ALTER TABLE intervals RENAME TO intervals_away");
  }
  int status = 0;
  server.chat("a", &status);  // its steps are busy intervals
  EXPECT_EQ(status, 200);
  json health;
  for (int i = 0; i < 200; ++i) {  // the next commit is within a second
    health = server.get("/health");
    if (health["ledger"]["state"] == "failing") break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(health["ledger"]["state"], "failing") << health.dump(2);
  EXPECT_EQ(health["status"], "degraded");
  EXPECT_NE(health["reason"].get<std::string>().find("no such table: intervals"),
            std::string::npos)
      << health.dump(2);
  EXPECT_GT(health["ledger"]["rows_held"].get<int>(), 0);
  EXPECT_EQ(server.send("GET", "/health").status, 200);  // still serving: a warning
  EXPECT_GE(server.metric("baton_ledger_write_failures_total"), 1);
  EXPECT_GT(server.metric("baton_ledger_rows_held"), 0);
  EXPECT_EQ(server.metric("baton_ledger_rows_lost_total"), 0);
  server.chat("a", &status);
  EXPECT_EQ(status, 200);

  const std::string log = server.log_after_stop();
  EXPECT_EQ(server.stop(), 74) << log;
  const std::string path = (dir_.path() / "ledger.db").string();
  EXPECT_NE(log.find("baton serve: warning: ledger " + path + ": cannot write "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("baton serve: the ledger " + path + " is incomplete: "), std::string::npos)
      << log;
  EXPECT_NE(log.find("rows were never written"), std::string::npos) << log;
  EXPECT_NE(log.find("exiting 74"), std::string::npos) << log;
}

TEST_F(LifecycleServerTest, ThePolicyChangesLiveByTheAdminRouteAndEachPolicyIsALedgerRun) {
  ServeConfig cfg = config({model("a", 1)});
  cfg.api_key = "admin-key";
  const std::map<std::string, std::string> key = {{"authorization", "Bearer admin-key"}};
  LifecycleServer server(std::move(cfg));
  const auto admin = [&](const std::string& method, const std::string& body = "") {
    HttpTestClient client(server.port());
    return client.send(method, "/v1/admin/policy", body, key);
  };
  EXPECT_EQ(server.send("GET", "/v1/admin/policy").status, 401);
  test::TestResponse got = admin("GET");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(json::parse(got.body), json::parse(R"({"policy": "concurrent", "arms": ["concurrent",
                "serialize/op+decode-first"]})"));
  const json request = {
      {"model", "a"}, {"messages", {{{"role", "user"}, {"content", "hello"}}}}, {"max_tokens", 24}};
  HttpTestClient before(server.port());  // work under the first policy, whatever the rest do
  EXPECT_EQ(before.send("POST", "/v1/chat/completions", request.dump(), key).status, 200);
  // Requests in flight while the policy changes: none fails.
  std::vector<std::future<int>> chats;
  for (int i = 0; i < 4; ++i) {
    chats.push_back(std::async(std::launch::async, [&] {
      HttpTestClient client(server.port());
      return client.send("POST", "/v1/chat/completions", request.dump(), key).status;
    }));
  }
  got = admin("POST", R"({"policy": "serialize"})");
  ASSERT_EQ(got.status, 200) << got.body;
  const json change = json::parse(got.body);
  EXPECT_EQ(change["from"], "concurrent");
  EXPECT_EQ(change["to"], "serialize/op+decode-first");
  EXPECT_GE(change["gate_closed_ms"].get<double>(), 0.0);
  for (auto& chat : chats) EXPECT_EQ(chat.get(), 200);
  int status = 0;
  HttpTestClient engines(server.port());
  EXPECT_EQ(json::parse(engines.send("GET", "/v1/engines", "", key).body)["policy"],
            "serialize/op+decode-first");
  got = admin("POST", R"({"policy": "partition"})");
  EXPECT_EQ(got.status, 400) << got.body;
  EXPECT_EQ(json::parse(got.body)["error"]["param"], "policy");
  EXPECT_EQ(admin("POST", R"({"mode": 1})").status, 400);
  // The fleet's counters know the arms: the serialize series exist from the start.
  HttpTestClient scrape(server.port());
  const std::string metrics = scrape.send("GET", "/metrics", "", key).body;
  EXPECT_NE(metrics.find("policy=\"serialize/op+decode-first\""), std::string::npos);
  HttpTestClient experiment(server.port());
  EXPECT_EQ(experiment.send("GET", "/v1/experiment", "", key).status, 404);
  HttpTestClient after(server.port());
  status = after.send("POST", "/v1/chat/completions", request.dump(), key).status;
  EXPECT_EQ(status, 200);
  EXPECT_EQ(server.stop(), 0);

  // Each policy is a run of the ledger, the first ended where the second began.
  Database db(dir_.path() / "ledger.db", Database::Mode::read_only);
  Statement runs(db, "SELECT id, policy, start, stop, exit_code FROM runs ORDER BY id");
  std::vector<std::string> policies;
  std::vector<double> starts, stops;
  while (runs.step()) {
    policies.push_back(runs.column_text(1));
    starts.push_back(runs.column_double(2));
    stops.push_back(runs.column_double(3));
    EXPECT_EQ(runs.column_int(4), 0);
  }
  ASSERT_EQ(policies, (std::vector<std::string>{"concurrent", "serialize/op+decode-first"}));
  EXPECT_EQ(stops[0], starts[1]);
  Statement intervals(db, "SELECT count(*) FROM intervals GROUP BY run_id ORDER BY run_id");
  int runs_with_work = 0;
  while (intervals.step()) runs_with_work += intervals.column_int(0) > 0 ? 1 : 0;
  EXPECT_EQ(runs_with_work, 2);  // chats ran under both policies
}

TEST_F(LifecycleServerTest, AReloadAppliesTheTurnTheConfigurationNamesNow) {
  ServeConfig cfg = config({model("a", 1)});
  cfg.api_key = "admin-key";
  auto next = std::make_shared<std::function<ServeConfig()>>();
  cfg.reread = [next] { return (*next)(); };
  const ServeConfig base = cfg;
  LifecycleServer server(std::move(cfg));
  const auto reload = [&] {
    HttpTestClient client(server.port());
    return client.send("POST", "/v1/admin/reload", "", {{"authorization", "Bearer admin-key"}});
  };
  *next = [base] {  // the file now says serialize
    ServeConfig edited = base;
    edited.turn.policy = TurnPolicy::serialize;
    return edited;
  };
  test::TestResponse got = reload();
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(json::parse(got.body)["to"], "serialize/op+decode-first");
  *next = [base]() -> ServeConfig {
    throw ConfigError("baton.toml: policy: 'serial' is not a policy");
  };
  got = reload();
  EXPECT_EQ(got.status, 400) << got.body;
  EXPECT_NE(got.body.find("'serial' is not a policy"), std::string::npos) << got.body;
  *next = [base] {  // a turn none of the arms is: a restart is needed
    ServeConfig edited = base;
    edited.turn.policy = TurnPolicy::partition;
    return edited;
  };
  got = reload();
  EXPECT_EQ(got.status, 400) << got.body;
  EXPECT_EQ(json::parse(got.body)["error"]["param"], "policy");
  HttpTestClient engines(server.port());
  EXPECT_EQ(
      json::parse(engines.send("GET", "/v1/engines", "", {{"authorization", "Bearer admin-key"}})
                      .body)["policy"],
      "serialize/op+decode-first");
}

TEST_F(LifecycleServerTest, TheAdminRoutesNeedAnApiKey) {
  LifecycleServer server(config({model("a", 1)}));
  const test::TestResponse got =
      server.send("POST", "/v1/admin/policy", R"({"policy": "serialize"})");
  EXPECT_EQ(got.status, 403) << got.body;
  EXPECT_EQ(server.get("/v1/engines")["policy"], "concurrent");
}

TEST_F(LifecycleServerTest, ALoadThatCannotFitIs503WithTheReason) {
  ModelSpec a = model("a", 1), b = model("b", 2);
  a.pin = true;
  b.on_demand = true;
  ServeConfig cfg = config({a, b});
  cfg.memory_budget_mb = 5;  // one model of 4 MB of KV and 0.3 MB of weights
  LifecycleServer server(std::move(cfg));
  const test::TestResponse response = server.send("POST", "/v1/models/b/load");
  EXPECT_EQ(response.status, 503);
  EXPECT_NE(response.body.find("memory budget"), std::string::npos) << response.body;
  EXPECT_EQ(server.state("b"), "failed");
  EXPECT_EQ(server.state("a"), "ready");
}

// A model whose files hold no chat template (this GGUF file) serves raw completions; a chat
// is the client's request this model cannot serve: 400 naming "messages", not a 500, and
// without the server's file path.
TEST_F(LifecycleServerTest, AChatWithAModelWithoutATemplateIs400AndACompletionIsServed) {
  ModelSpec spec;
  spec.name = "g";
  spec.dir = std::filesystem::path(BATON_TEST_DATA) / "gguf" / "tiny-llama-bf16.gguf";
  spec.kv_budget_mb = 4;
  LifecycleServer server(config({spec}));
  for (const char* route : {"/v1/chat/completions", "/v1/messages"}) {
    const json request = {{"model", "g"},
                          {"messages", {{{"role", "user"}, {"content", "hello"}}}},
                          {"max_tokens", 4}};
    const test::TestResponse response = server.send("POST", route, request.dump());
    EXPECT_EQ(response.status, 400) << route;
    EXPECT_NE(response.body.find("has no chat template"), std::string::npos) << response.body;
    EXPECT_EQ(response.body.find(".gguf"), std::string::npos) << response.body;
  }
  const json completion = {{"model", "g"}, {"prompt", "hello"}, {"max_tokens", 4}};
  EXPECT_EQ(server.send("POST", "/v1/completions", completion.dump()).status, 200);
}

// A model's template that fails on a chat is the server's fault, not the client's: a 500
// naming the model, without the server's path to it and without blaming "messages". A
// template that does not parse refuses the model at load, with the parse error.
TEST_F(LifecycleServerTest, ABrokenChatTemplateIs500NamingTheModelAndOneThatDoesNotParseFailsTheLoad) {
  ModelSpec broken = model("broken", 1), unparsed = model("unparsed", 2);
  unparsed.on_demand = true;
  std::ofstream(broken.dir / "chat_template.jinja") << "x\n{{ messages[0].nothing.deeper }}";
  std::ofstream(unparsed.dir / "chat_template.jinja") << "{% for m in messages %}\n{{ m }\n";
  LifecycleServer server(config({broken, unparsed}));
  int status = 0;
  const std::string body = server.chat("broken", &status);
  EXPECT_EQ(status, 500) << body;
  EXPECT_NE(body.find("model 'broken'"), std::string::npos) << body;
  EXPECT_NE(body.find("'nothing' is undefined"), std::string::npos) << body;
  EXPECT_NE(body.find("chat_template_error"), std::string::npos) << body;
  EXPECT_EQ(body.find(dir_.path().string()), std::string::npos) << body;
  EXPECT_EQ(body.find("\"param\":\"messages\""), std::string::npos) << body;

  const std::string refused = server.chat("unparsed", &status);
  EXPECT_EQ(status, 503) << refused;
  const json unparsed_status = server.get("/v1/models/unparsed");
  EXPECT_EQ(unparsed_status["state"], "failed");
  const std::string reason = unparsed_status["reason"].get<std::string>();
  EXPECT_NE(reason.find("chat_template.jinja"), std::string::npos) << reason;
  EXPECT_NE(reason.find("line 2"), std::string::npos) << reason;
  EXPECT_EQ(server.stop(), 0);
}

TEST_F(LifecycleServerTest, AnUnloadedStartupModelAnswers503UntilLoaded) {
  LifecycleServer server(config({model("a", 1)}));
  EXPECT_EQ(server.send("POST", "/v1/models/a/unload").status, 202);
  ASSERT_TRUE(server.wait_for_state("a", "unloaded"));
  int status = 0;
  const std::string body = server.chat("a", &status);
  EXPECT_EQ(status, 503);
  EXPECT_NE(body.find("/v1/models/a/load"), std::string::npos) << body;
  EXPECT_EQ(server.get("/v1/engines")["engines"][0]["model_state"], "unloaded");
  EXPECT_EQ(server.send("GET", "/health").status, 200);  // not loaded is not unhealthy
}

TEST_F(LifecycleServerTest, FailedRequestsCountUnderTheirModelAndEngineCountersSpanLoads) {
  LifecycleServer server(config({model("a", 1)}));
  int status = 0;
  server.chat("a", &status);
  ASSERT_EQ(status, 200);
  const json before = server.get("/v1/engines")["engines"][0];
  EXPECT_EQ(before["requests_done"], 1);
  const std::uint64_t generated = before["generated_tokens"];
  EXPECT_GT(generated, 0u);

  EXPECT_EQ(server.send("POST", "/v1/models/a/unload").status, 202);
  ASSERT_TRUE(server.wait_for_state("a", "unloaded"));
  // Unloaded, the seat keeps what its engine counted.
  EXPECT_EQ(server.get("/v1/engines")["engines"][0]["requests_done"], 1);
  server.chat("a", &status);
  EXPECT_EQ(status, 503);
  const json no_max_tokens = {{"model", "a"}, {"messages", {{{"role", "user"}, {"content", "x"}}}}};
  EXPECT_EQ(server.send("POST", "/v1/messages", no_max_tokens.dump()).status, 400);
  EXPECT_EQ(server.send("POST", "/v1/models/a/load").status, 202);
  ASSERT_TRUE(server.wait_for_state("a", "ready"));
  server.chat("a", &status);
  ASSERT_EQ(status, 200);
  const json after = server.get("/v1/engines")["engines"][0];
  EXPECT_EQ(after["requests_done"], 2);
  EXPECT_GT(after["generated_tokens"].get<std::uint64_t>(), generated);

  const std::string requests = "baton_http_requests_total";
  EXPECT_EQ(
      server.metric(requests + R"({model_name="a",route="/v1/chat/completions",status="503"})"), 1);
  EXPECT_EQ(server.metric(requests + R"({model_name="a",route="/v1/messages",status="400"})"), 1);
  EXPECT_EQ(
      server.metric(requests + R"({model_name="a",route="/v1/models/{id}/load",status="202"})"), 1);
  EXPECT_EQ(
      server.metric(requests + R"({model_name="",route="/v1/chat/completions",status="503"})"), -1);
}

TEST_F(LifecycleServerTest, StartUpSaysAContextWasCappedAndWarnsOfAnOpenAddressWithoutAKey) {
  ModelSpec a = model("a", 1);
  a.context_length = 4096;  // the tiny model holds 2048 positions
  ServeConfig open = config({a});
  open.host = "0.0.0.0";
  {
    LifecycleServer server(std::move(open));  // one at a time: each takes the signals
    EXPECT_EQ(server.get("/v1/models/a")["max_model_len"], 2048);
    const std::string log = server.log_after_stop();
    EXPECT_NE(log.find("context 2048 (context_length 4096 capped to the model's "
                       "max_position_embeddings)"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("warning: listening on 0.0.0.0 (--host, --port) with no API key"),
              std::string::npos)
        << log;
  }
  ServeConfig keyed = config({model("b", 2)});
  keyed.host = "0.0.0.0";
  keyed.api_key = "k";
  LifecycleServer quiet(std::move(keyed));
  EXPECT_EQ(quiet.log_after_stop().find("warning"), std::string::npos);
}

// What constructing a server with `cfg` throws; empty when it throws nothing.
std::string construction_error(ServeConfig cfg) {
  std::ostringstream log;
  try {
    BatonServer server(std::move(cfg), log);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST_F(LifecycleServerTest, APortInUseOrABadAddressIsToldBeforeAnyModelLoads) {
  LifecycleServer holder(config({model("a", 1)}));
  // A model whose files are bad: had it been loaded first, its error would be the one told.
  ModelSpec bad = model("bad", 2);
  std::ofstream(bad.dir / "model.safetensors", std::ios::trunc) << "{broken";
  ServeConfig taken = config({bad});
  taken.port = holder.port();
  const std::string in_use = construction_error(taken);
  EXPECT_NE(in_use.find("cannot listen on 127.0.0.1:" + std::to_string(holder.port()) +
                        " (--host, --port)"),
            std::string::npos)
      << in_use;
  ServeConfig nowhere = config({bad});
  nowhere.host = "999.1.1.1";
  const std::string address = construction_error(nowhere);
  EXPECT_NE(address.find("999.1.1.1 (--host, --port): not an IPv4 or IPv6 address"),
            std::string::npos)
      << address;
}

}  // namespace
}  // namespace baton
