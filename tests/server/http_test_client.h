// A blocking HTTP/1.1 client for the server tests (Boost.Beast's synchronous API): one
// connection, requests in turn, chunked responses read whole, each within kReadTimeout.
// Thread-safety: one client per thread.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>

namespace baton::test {

struct TestResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool keep_alive = false;
};

class HttpTestClient {
 public:
  static constexpr std::chrono::seconds kReadTimeout{60};

  explicit HttpTestClient(int port) : socket_(io_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  }

  TestResponse send(const std::string& method, const std::string& target,
                    const std::string& body = "",
                    const std::map<std::string, std::string>& headers = {}) {
    namespace http = boost::beast::http;
    http::request<http::string_body> request{http::string_to_verb(method), target, 11};
    request.set(http::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = body;
    if (!body.empty()) request.set(http::field::content_type, "application/json");
    request.prepare_payload();
    http::write(socket_, request);
    return read();
  }

  TestResponse read() {
    namespace http = boost::beast::http;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    // Asynchronous under a deadline: a response the server loses fails the test instead
    // of blocking it until ctest's timeout.
    boost::system::error_code error;
    bool finished = false;
    http::async_read(socket_, buffer_, parser, [&](boost::system::error_code ec, std::size_t) {
      error = ec;
      finished = true;
    });
    io_.restart();
    io_.run_for(kReadTimeout);
    if (!finished) {
      socket_.cancel();
      io_.run();
      throw std::runtime_error("no whole response within 60 s");
    }
    if (error) throw boost::system::system_error(error);
    TestResponse out;
    out.status = static_cast<int>(parser.get().result_int());
    for (const auto& field : parser.get()) {
      std::string name(field.name_string().data(), field.name_string().size());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(field.value().data(), field.value().size());
    }
    out.body = parser.get().body();
    out.keep_alive = parser.get().keep_alive();
    return out;
  }

  boost::asio::ip::tcp::socket& socket() { return socket_; }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace baton::test
