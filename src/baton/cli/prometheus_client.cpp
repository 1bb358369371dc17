#include "baton/cli/prometheus_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "baton/analysis/prometheus_matrix.h"

namespace baton {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

constexpr std::uint64_t kBodyLimit = 8u << 20;
constexpr double kFirstPiece = 86400.0;  // seconds of samples a query asks for at first
constexpr double kSmallestPiece = 60.0;  // halving stops here: the selector matches too much

struct Endpoint {
  std::string host, port, prefix;
  std::string authority;  // host[:port] as the URL gives it, for the Host header
};

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

Endpoint parse(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    throw std::invalid_argument("--prometheus: '" + url + "' is not an http:// URL");
  }
  std::string rest = url.substr(scheme.size());
  Endpoint e;
  if (const std::size_t slash = rest.find('/'); slash != std::string::npos) {
    e.prefix = rest.substr(slash);
    rest.resize(slash);
    while (!e.prefix.empty() && e.prefix.back() == '/') e.prefix.pop_back();
  }
  e.authority = rest;
  std::string port_part;  // ":PORT" or empty
  if (rest.starts_with('[')) {  // [IPv6]:PORT, as RFC 3986 writes it
    const std::size_t close = rest.find(']');
    if (close == std::string::npos) {
      throw std::invalid_argument("--prometheus: '" + url + "' opens '[' without its ']'");
    }
    e.host = rest.substr(1, close - 1);
    port_part = rest.substr(close + 1);
  } else {
    const std::size_t colon = rest.find(':');
    e.host = rest.substr(0, colon);
    if (colon != std::string::npos) port_part = rest.substr(colon);
    if (port_part.find(':', 1) != std::string::npos) {
      throw std::invalid_argument("--prometheus: '" + url +
                                  "': an IPv6 address goes in brackets, http://[::1]:9090");
    }
  }
  if (!port_part.empty() && port_part.front() != ':') {
    throw std::invalid_argument("--prometheus: '" + url + "' has '" + port_part +
                                "' after its host");
  }
  e.port = port_part.empty() ? "80" : port_part.substr(1);
  if (e.host.empty() || !all_digits(e.port)) {
    throw std::invalid_argument("--prometheus: '" + url + "' names no host or port");
  }
  return e;
}

std::string percent_encoded(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// An answer over the body limit: prometheus_samples() asks for a smaller piece.
class ResponseTooLarge : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Response {
  unsigned status = 0;
  std::string body;
};

// One GET, every step asynchronous so that one deadline covers them all: the calls of a
// blocking socket would wait for ever on a server that accepts and never answers.
Response get(const Endpoint& e, const std::string& target, std::chrono::milliseconds timeout) {
  boost::asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  http::request<http::empty_body> request(http::verb::get, target, 11);
  request.set(http::field::host, e.authority);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kBodyLimit);
  std::optional<beast::error_code> outcome;
  const auto done = [&](beast::error_code ec) { outcome = ec; };
  resolver.async_resolve(e.host, e.port, [&](beast::error_code resolved, auto endpoints) {
    if (resolved) return done(resolved);
    stream.async_connect(endpoints, [&](beast::error_code connected, const tcp::endpoint&) {
      if (connected) return done(connected);
      http::async_write(stream, request, [&](beast::error_code written, std::size_t) {
        if (written) return done(written);
        http::async_read(stream, buffer, parser,
                         [&](beast::error_code read, std::size_t) { done(read); });
      });
    });
  });
  io.run_for(timeout);
  if (!outcome) {
    throw std::runtime_error(
        "no answer within " + std::to_string(timeout.count() / 1000.0).substr(0, 5) +
        " s (try again later, or allow more with --timeout)");
  }
  if (*outcome == http::error::body_limit) {
    throw ResponseTooLarge("its answer is over the 8 MiB response limit");
  }
  if (*outcome) throw boost::system::system_error(*outcome);
  return {.status = parser.get().result_int(), .body = std::move(parser.get().body())};
}

}  // namespace

nlohmann::json prometheus_query(const PrometheusServer& server, const std::string& query,
                                double time) {
  const Endpoint e = parse(server.url);
  Response response;
  const std::string where = "Prometheus at " + server.url + ": ";
  try {
    response = get(e,
                   e.prefix + "/api/v1/query?query=" + percent_encoded(query) +
                       "&time=" + percent_encoded(std::to_string(time)),
                   server.timeout);
  } catch (const boost::system::system_error& error) {
    throw std::runtime_error(where + error.code().message());
  } catch (const ResponseTooLarge& error) {
    throw ResponseTooLarge(where + error.what());
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(where + error.what());
  }
  const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    throw std::runtime_error(where + "HTTP " + std::to_string(response.status) +
                             ", not the query API's JSON");
  }
  if (const auto status = body.find("status"); status == body.end() || *status != "success") {
    const auto error = body.find("error");
    throw std::runtime_error("Prometheus at " + server.url + " refused the query: " +
                             (error != body.end() && error->is_string()
                                  ? error->get<std::string>()
                                  : std::string("(no message)")));
  }
  if (!body.contains("data")) throw std::runtime_error(where + "an answer without its data");
  return body["data"];
}

nlohmann::json prometheus_samples(const PrometheusServer& server, const std::string& selector,
                                  double start, double end) {
  MatrixMerger merged(selector);
  double piece = kFirstPiece;
  while (end > start) {
    const double length = std::min(piece, end - start);
    const auto ms = std::llround(length * 1000.0);
    try {
      merged.add(prometheus_query(server, selector + "[" + std::to_string(ms) + "ms]", end));
    } catch (const ResponseTooLarge& error) {
      if (piece <= kSmallestPiece) {
        throw std::runtime_error(std::string(error.what()) + " for a minute of " + selector +
                                 ": narrow it with --selector");
      }
      piece = std::max(kSmallestPiece, std::floor(piece / 2.0));
      continue;
    }
    end -= length;
  }
  return merged.result();
}

}  // namespace baton
