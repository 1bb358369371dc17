#include "baton/server/http/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/http_test_client.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::eventually;

using test::HttpTestClient;

// A response another thread feeds: push() bodies, finish() ends it.
class FedResponse final : public PendingResponse {
 public:
  explicit FedResponse(bool streamed) : streamed_(streamed) {}

  // What was pushed before the session started it is announced at once, as a producer
  // that starts work in start() never needs to.
  void start(std::function<void()> wake) override {
    bool ready = false;
    {
      std::lock_guard lock(mu_);
      wake_ = wake;
      ready = !pieces_.empty() || done_;
    }
    if (ready) wake();
  }
  Chunk take() override {
    std::lock_guard lock(mu_);
    Chunk chunk;
    if (pieces_.empty() && !done_) return chunk;
    if (!streamed_ && !done_) return chunk;
    if (!head_sent_) {
      chunk.head = HttpHead{.status = 200,
                            .content_type = streamed_ ? "text/event-stream" : "text/plain",
                            .headers = {}};
      chunk.streamed = streamed_;
      head_sent_ = true;
    }
    for (const std::string& piece : pieces_) chunk.body += piece;
    pieces_.clear();
    chunk.done = done_;
    return chunk;
  }
  void cancel() override { cancelled.store(true); }

  void push(std::string piece, bool last = false) {
    std::function<void()> wake;
    {
      std::lock_guard lock(mu_);
      pieces_.push_back(std::move(piece));
      done_ = last;
      wake = wake_;
    }
    if (wake) wake();
  }
  bool started() {
    std::lock_guard lock(mu_);
    return static_cast<bool>(wake_);
  }

  std::atomic<bool> cancelled{false};

 private:
  const bool streamed_;
  std::mutex mu_;
  std::function<void()> wake_;
  std::deque<std::string> pieces_;
  bool done_ = false;
  bool head_sent_ = false;
};

HttpServerOptions loopback(std::size_t max_body = 1 << 20) {
  HttpServerOptions options;
  options.port = 0;
  options.threads = 2;
  options.max_body_bytes = max_body;
  return options;
}

RouteResult echo(const HttpRequest& request) {
  if (request.target == "/throw") throw std::runtime_error("boom");
  const nlohmann::json body = {
      {"method", request.method}, {"target", request.target}, {"body", request.body}};
  return HttpResponse{.head = {.status = request.target == "/missing" ? 404 : 200,
                               .content_type = "application/json",
                               .headers = {}},
                      .body = body.dump()};
}

// Writes a POST to `target` and reads nothing back.
void send_only(HttpTestClient& client, const std::string& target, const std::string& body = "{}") {
  boost::beast::http::request<boost::beast::http::string_body> request{
      boost::beast::http::verb::post, target, 11};
  request.body() = body;
  request.prepare_payload();
  boost::beast::http::write(client.socket(), request);
}

TEST(HttpServer, AnswersRequestsInTurnOnOneKeepAliveConnection) {
  HttpServer server(loopback(), echo);
  server.start();
  HttpTestClient client(server.port());
  for (int i = 0; i < 3; ++i) {
    const auto response = client.send("POST", "/x?query=1", "{\"n\":" + std::to_string(i) + "}");
    ASSERT_EQ(response.status, 200);
    const auto body = nlohmann::json::parse(response.body);
    EXPECT_EQ(body["target"], "/x");  // the query is not part of the route
    EXPECT_EQ(body["body"], "{\"n\":" + std::to_string(i) + "}");
    EXPECT_TRUE(response.keep_alive);
  }
  EXPECT_EQ(client.send("GET", "/missing").status, 404);
  EXPECT_EQ(server.stats().accepted, 1u);
}

TEST(HttpServer, BodyOverTheLimitIs413InTheOpenAiErrorShape) {
  HttpServer server(loopback(100), echo);
  server.start();
  HttpTestClient client(server.port());
  const auto response = client.send("POST", "/x", std::string(1000, 'a'));
  EXPECT_EQ(response.status, 413);
  const auto body = nlohmann::json::parse(response.body);
  EXPECT_TRUE(body["error"]["message"].get<std::string>().find("100 bytes") != std::string::npos);
  EXPECT_EQ(body["error"]["code"], "request_too_large");
}

// Reads from `socket` into `into` until `delimiter` or `timeout`; false on a timeout.
bool read_until(boost::asio::io_context& io, boost::asio::ip::tcp::socket& socket,
                std::string& into, std::string_view delimiter, std::chrono::seconds timeout) {
  bool done = false;
  boost::asio::async_read_until(socket, boost::asio::dynamic_buffer(into), delimiter,
                                [&](boost::system::error_code ec, std::size_t) { done = !ec; });
  io.restart();
  io.run_for(timeout);
  if (!done) socket.cancel();
  return done;
}

TEST(HttpServer, AnswersExpect100ContinueBeforeTheBodyIsSent) {
  HttpServer server(loopback(4 << 20), echo);
  server.start();
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"),
                  static_cast<unsigned short>(server.port())});
  const std::string body = "{\"text\":\"" + std::string(2 << 20, 'a') + "\"}";
  const std::string head = "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\nExpect: 100-continue\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(head));
  std::string received;
  // Well within curl's one second of waiting: the server answers the head alone.
  ASSERT_TRUE(read_until(io, socket, received, "\r\n\r\n", std::chrono::seconds(5)))
      << "no 100 Continue while the body waits";
  EXPECT_EQ(received, "HTTP/1.1 100 Continue\r\n\r\n");
  received.clear();
  boost::asio::write(socket, boost::asio::buffer(body));
  ASSERT_TRUE(read_until(io, socket, received, "\r\n\r\n", std::chrono::seconds(30)));
  EXPECT_EQ(received.rfind("HTTP/1.1 200", 0), 0u) << received.substr(0, 200);
}

TEST(HttpServer, ABodyOverTheLimitIsRefusedBeforeItsExpect100Continue) {
  HttpServer server(loopback(100), echo);
  server.start();
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"),
                  static_cast<unsigned short>(server.port())});
  boost::asio::write(socket, boost::asio::buffer(std::string(
                                 "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                                 "1000\r\nExpect: 100-continue\r\n\r\n")));
  std::string received;
  ASSERT_TRUE(read_until(io, socket, received, "\r\n\r\n", std::chrono::seconds(5)));
  EXPECT_EQ(received.rfind("HTTP/1.1 413", 0), 0u) << received;  // no body asked for
}

TEST(HttpServer, AHandlerThatThrowsGivesA500AndTheServerGoesOn) {
  HttpServer server(loopback(), echo);
  server.start();
  HttpTestClient client(server.port());
  const auto response = client.send("GET", "/throw");
  EXPECT_EQ(response.status, 500);
  EXPECT_TRUE(response.body.find("boom") != std::string::npos);
  EXPECT_EQ(client.send("GET", "/ok").status, 200);
}

TEST(HttpServer, StreamsAPendingResponseChunkedAsItIsFed) {
  auto fed = std::make_shared<FedResponse>(true);
  HttpServer server(loopback(), [&](const HttpRequest&) -> RouteResult { return fed; });
  server.start();
  std::jthread feeder([&] {
    ASSERT_TRUE(eventually([&] { return fed->started(); }));
    for (int i = 0; i < 50; ++i) fed->push("data: " + std::to_string(i) + "\n\n");
    fed->push("data: [DONE]\n\n", true);
  });
  HttpTestClient client(server.port());
  const auto response = client.send("POST", "/stream", "{}");
  feeder.join();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.headers.at("content-type"), "text/event-stream");
  EXPECT_EQ(response.headers.at("transfer-encoding"), "chunked");
  std::string expected;
  for (int i = 0; i < 50; ++i) expected += "data: " + std::to_string(i) + "\n\n";
  EXPECT_EQ(response.body, expected + "data: [DONE]\n\n");
  EXPECT_TRUE(eventually([&] { return server.stats().pending_responses == 0; }));
}

TEST(HttpServer, SendsAnUnstreamedPendingResponseWholeWhenItIsDone) {
  auto fed = std::make_shared<FedResponse>(false);
  HttpServer server(loopback(), [&](const HttpRequest&) -> RouteResult { return fed; });
  server.start();
  std::jthread feeder([&] {
    ASSERT_TRUE(eventually([&] { return fed->started(); }));
    fed->push("hello ");
    fed->push("world", true);
  });
  HttpTestClient client(server.port());
  const auto response = client.send("POST", "/whole", "{}");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.headers.at("content-length"), "11");
  EXPECT_EQ(response.body, "hello world");
}

TEST(HttpServer, AClientThatGoesAwayCancelsItsPendingResponse) {
  auto fed = std::make_shared<FedResponse>(true);
  HttpServer server(loopback(), [&](const HttpRequest&) -> RouteResult { return fed; });
  server.start();
  {
    HttpTestClient client(server.port());
    send_only(client, "/stream");
    ASSERT_TRUE(eventually([&] { return fed->started(); }));
  }  // the client closes its socket without reading
  EXPECT_TRUE(eventually([&] { return fed->cancelled.load(); }));
  EXPECT_TRUE(eventually([&] { return server.stats().pending_responses == 0; }));
  EXPECT_EQ(server.stats().disconnects, 1u);
}

TEST(HttpServer, HoldsManyPendingConnectionsOnTwoThreads) {
  constexpr int kClients = 200;
  std::mutex mu;
  std::vector<std::shared_ptr<FedResponse>> fed;
  HttpServer server(loopback(), [&](const HttpRequest&) -> RouteResult {
    auto response = std::make_shared<FedResponse>(true);
    std::lock_guard lock(mu);
    fed.push_back(response);
    return response;
  });
  server.start();
  std::vector<std::unique_ptr<HttpTestClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<HttpTestClient>(server.port()));
    send_only(*clients.back(), "/stream", std::to_string(i));
  }
  ASSERT_TRUE(eventually([&] { return server.stats().pending_responses == kClients; }));
  EXPECT_EQ(server.stats().connections, static_cast<std::size_t>(kClients));
  {
    std::lock_guard lock(mu);
    for (auto& response : fed) response->push("data: x\n\n", true);
  }
  for (auto& client : clients) EXPECT_EQ(client->read().body, "data: x\n\n");
}

TEST(HttpServer, StopCancelsWhatIsPendingAndReturns) {
  auto fed = std::make_shared<FedResponse>(true);
  HttpServer server(loopback(), [&](const HttpRequest&) -> RouteResult { return fed; });
  server.start();
  HttpTestClient client(server.port());
  send_only(client, "/stream");
  ASSERT_TRUE(eventually([&] { return fed->started(); }));
  server.stop();
  EXPECT_TRUE(fed->cancelled.load());
  EXPECT_EQ(server.stats().connections, 0u);
}

TEST(HttpServer, WhileDrainingARequestOnAnOpenConnectionGetsA503) {
  HttpServer server(loopback(), echo);
  server.start();
  HttpTestClient client(server.port());
  EXPECT_EQ(client.send("GET", "/a").status, 200);
  server.stop_accepting();
  const auto response = client.send("GET", "/b");
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.at("retry-after"), "1");
  EXPECT_FALSE(response.keep_alive);
  EXPECT_TRUE(server.wait_idle(std::chrono::seconds(1)));
}

}  // namespace
}  // namespace baton
