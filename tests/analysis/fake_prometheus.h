// A stand-in for a Prometheus server in the tests of `baton analyze --prometheus`: it
// listens on a free port of the loopback address (IPv4 or IPv6), reads each GET
// /api/v1/query, and answers with what the test's handler makes of the query and its
// time; or, told not to answer, accepts and holds every connection silent.
// Thread-safety: one thread serves; queries() may be read from any thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace baton::testing {

struct PrometheusQuery {
  std::string query;  // percent-decoded
  double time = 0.0;
};

class FakePrometheus {
 public:
  // The body of the answer (HTTP 200, JSON) to one query.
  using Handler = std::function<std::string(const PrometheusQuery&)>;
  enum class Family { ipv4, ipv6 };

  // std::runtime_error when the address family cannot be listened on here.
  explicit FakePrometheus(Handler handler, Family family = Family::ipv4, bool answer = true)
      : handler_(std::move(handler)), answer_(answer) {
    listener_ = ::socket(family == Family::ipv4 ? AF_INET : AF_INET6, SOCK_STREAM, 0);
    if (listener_ < 0 || !bind_loopback(family) || ::listen(listener_, 16) != 0) {
      if (listener_ >= 0) ::close(listener_);
      throw std::runtime_error("cannot listen on the loopback address");
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~FakePrometheus() {
    stop_ = true;
    thread_.join();
    for (const int fd : held_) ::close(fd);
    ::close(listener_);
  }
  FakePrometheus(const FakePrometheus&) = delete;
  FakePrometheus& operator=(const FakePrometheus&) = delete;

  std::string url() const {
    return family_ == Family::ipv4 ? "http://127.0.0.1:" + std::to_string(port_)
                                   : "http://[::1]:" + std::to_string(port_);
  }
  std::vector<PrometheusQuery> queries() const {
    std::lock_guard lock(mutex_);
    return queries_;
  }

 private:
  bool bind_loopback(Family family) {
    family_ = family;
    sockaddr_storage address{};
    socklen_t size = 0;
    if (family == Family::ipv4) {
      auto* in = reinterpret_cast<sockaddr_in*>(&address);
      in->sin_family = AF_INET;
      in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      size = sizeof(sockaddr_in);
    } else {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&address);
      in6->sin6_family = AF_INET6;
      in6->sin6_addr = in6addr_loopback;
      size = sizeof(sockaddr_in6);
    }
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0) return false;
    if (::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) return false;
    port_ = ntohs(family == Family::ipv4 ? reinterpret_cast<sockaddr_in*>(&address)->sin_port
                                         : reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
    return true;
  }

  void serve() {
    while (!stop_) {
      pollfd p{.fd = listener_, .events = POLLIN, .revents = 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      if (!answer_) {
        held_.push_back(fd);  // accepted, never answered
        continue;
      }
      answer(fd);
      ::close(fd);
    }
  }

  static std::string decoded(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '%' && i + 2 < text.size()) {
        out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += text[i] == '+' ? ' ' : text[i];
      }
    }
    return out;
  }

  // The value of `name` in the target's query string.
  static std::string parameter(const std::string& target, const std::string& name) {
    const std::size_t at = target.find(name + "=");
    if (at == std::string::npos) return "";
    const std::size_t from = at + name.size() + 1;
    return decoded(target.substr(from, target.find('&', from) - from));
  }

  void answer(int fd) {
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) return;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    const std::size_t space = request.find(' ');
    const std::string target = request.substr(space + 1, request.find(' ', space + 1) - space - 1);
    const PrometheusQuery query{.query = parameter(target, "query"),
                                .time = std::stod(parameter(target, "time"))};
    {
      std::lock_guard lock(mutex_);
      queries_.push_back(query);
    }
    const std::string body = handler_(query);
    const std::string reply =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    for (std::size_t sent = 0; sent < reply.size();) {
      const ssize_t n = ::send(fd, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the client gave up (a body over its limit)
      sent += static_cast<std::size_t>(n);
    }
  }

  Handler handler_;
  bool answer_;
  Family family_ = Family::ipv4;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> held_;  // the serving thread's, closed after it ends
  mutable std::mutex mutex_;
  std::vector<PrometheusQuery> queries_;
  std::thread thread_;
};

}  // namespace baton::testing
