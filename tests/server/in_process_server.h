// Test helper: a whole BatonServer serving over HTTP on its own thread, in this process
// (stopped by SIGUSR2 through its SignalPipe), with shortcuts for GET, a chat and /metrics.
// Thread-safety: one test thread drives it; requests may come from any thread.
#pragma once

#include <csignal>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "baton/common/signal_pipe.h"
#include "baton/server/baton_server.h"
#include "server/http_test_client.h"

namespace baton::test {

class InProcessServer {
 public:
  explicit InProcessServer(ServeConfig config) : server_(std::move(config), log_) {
    // The port listens from construction on: connections wait for serve() to accept.
    thread_ = std::thread([this] { exit_ = server_.serve(signals_, out_, log_); });
  }
  ~InProcessServer() { stop(); }

  int stop() {
    if (thread_.joinable()) {
      std::raise(SIGUSR2);
      thread_.join();
    }
    return exit_;
  }

  int port() const { return server_.port(); }
  nlohmann::json get(const std::string& target) {
    return nlohmann::json::parse(send("GET", target).body);
  }
  test::TestResponse send(const std::string& method, const std::string& target,
                          const std::string& body = "") {
    HttpTestClient client(server_.port());
    return client.send(method, target, body);
  }
  std::string chat(const std::string& model, int* status = nullptr) {
    const nlohmann::json request = {{"model", model},
                                    {"messages", {{{"role", "user"}, {"content", "hello"}}}},
                                    {"max_tokens", 4}};
    const test::TestResponse response = send("POST", "/v1/chat/completions", request.dump());
    if (status != nullptr) *status = response.status;
    return response.body;
  }
  // A series of /metrics, or -1 when it is absent.
  double metric(const std::string& series) {
    std::istringstream lines(send("GET", "/metrics").body);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
  }
  // What the server logged: read once it stopped (the serving thread writes it).
  std::string log_after_stop() {
    stop();
    return log_.str();
  }
  std::string state(const std::string& model) {
    return get("/v1/models/" + model)["state"].get<std::string>();
  }
  bool wait_for_state(const std::string& model, const std::string& want) {
    for (int i = 0; i < 1000; ++i) {
      if (state(model) == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  static constexpr int kStop[] = {SIGUSR2};
  SignalPipe signals_{kStop, SignalPipe::Ignored::take_over};
  std::ostringstream out_, log_;  // the serving thread's once it runs
  BatonServer server_;
  std::thread thread_;
  int exit_ = -1;
};

}  // namespace baton::test
