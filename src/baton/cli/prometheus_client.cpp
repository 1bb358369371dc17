#include "baton/cli/prometheus_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <stdexcept>

namespace baton {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

struct Endpoint {
  std::string host, port, prefix;
};

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
  const std::size_t colon = rest.rfind(':');
  e.host = colon == std::string::npos ? rest : rest.substr(0, colon);
  e.port = colon == std::string::npos ? "80" : rest.substr(colon + 1);
  if (e.host.empty() || e.port.empty()) {
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

}  // namespace

nlohmann::json prometheus_query(const std::string& url, const std::string& query, double time) {
  const Endpoint e = parse(url);
  http::response<http::string_body> response;
  try {
    boost::asio::io_context io;
    tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    stream.expires_after(std::chrono::seconds(30));
    stream.connect(resolver.resolve(e.host, e.port));
    http::request<http::empty_body> request(http::verb::get,
                                            e.prefix +
                                                "/api/v1/query?query=" + percent_encoded(query) +
                                                "&time=" + percent_encoded(std::to_string(time)),
                                            11);
    request.set(http::field::host, e.host);
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::read(stream, buffer, response);
  } catch (const boost::system::system_error& error) {
    throw std::runtime_error("Prometheus at " + url + ": " + error.code().message());
  }
  const nlohmann::json body = nlohmann::json::parse(response.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    throw std::runtime_error("Prometheus at " + url + ": HTTP " +
                             std::to_string(response.result_int()) + ", not the query API's JSON");
  }
  if (body.value("status", "") != "success") {
    throw std::runtime_error("Prometheus at " + url + " refused the query: " +
                             body.value("error", std::string("(no message)")));
  }
  return body.at("data");
}

}  // namespace baton
