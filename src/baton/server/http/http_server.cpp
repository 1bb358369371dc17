#include "baton/server/http/http_server.h"

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <condition_variable>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "baton/server/http/api_error.h"

namespace baton {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

HttpRequest to_request(const http::request<http::string_body>& message) {
  HttpRequest request;
  request.method = std::string(message.method_string().data(), message.method_string().size());
  const std::string_view target(message.target().data(), message.target().size());
  const std::size_t question = target.find('?');
  request.target = std::string(target.substr(0, question));
  if (question != std::string_view::npos) request.query = std::string(target.substr(question + 1));
  for (const auto& field : message) {
    std::string name(field.name_string().data(), field.name_string().size());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    request.headers[name] = std::string(field.value().data(), field.value().size());
  }
  request.body = message.body();
  return request;
}

// The status line and headers of `head`, as text.
std::string head_text(const HttpHead& head, bool keep_alive, bool chunked,
                      std::size_t content_length) {
  http::response<http::empty_body> res{static_cast<http::status>(head.status), 11};
  res.set(http::field::server, "baton");
  res.set(http::field::content_type, head.content_type);
  for (const auto& [name, value] : head.headers) res.set(name, value);
  if (chunked) {
    res.chunked(true);
  } else {
    res.content_length(content_length);
  }
  res.keep_alive(keep_alive);
  std::ostringstream out;
  out << res.base();
  return out.str();
}

// `address:port`, or `[address]:port` for IPv6.
std::string endpoint_text(const tcp::endpoint& endpoint) {
  const std::string address = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  return endpoint.address().is_v6() ? "[" + address + "]:" + port : address + ":" + port;
}

std::string chunk_frame(const std::string& data) {
  if (data.empty()) return {};
  std::ostringstream out;
  out << std::hex << data.size() << "\r\n" << data << "\r\n";
  return out.str();
}

}  // namespace

class HttpServer::State : public std::enable_shared_from_this<HttpServer::State> {
 public:
  class Session;

  State(HttpServerOptions options, RequestHandler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        acceptor_(net::make_strand(io_)) {
    boost::system::error_code ec;
    const net::ip::address address = net::ip::make_address(options_.host, ec);
    if (ec) {
      throw std::invalid_argument(options_.host + " (" + options_.setting +
                                  "): not an IPv4 or IPv6 address (e.g. 127.0.0.1, 0.0.0.0, ::1)");
    }
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.port));
    try {
      acceptor_.open(endpoint.protocol());
      acceptor_.set_option(net::socket_base::reuse_address(true));
      acceptor_.bind(endpoint);
      acceptor_.listen(net::socket_base::max_listen_connections);
    } catch (const boost::system::system_error& e) {
      throw std::runtime_error("cannot listen on " + endpoint_text(endpoint) +
                               " (" + options_.setting + "): " + e.code().message());
    }
    port_ = acceptor_.local_endpoint().port();
  }

  void start() {
    accept();
    for (int i = 0; i < std::max(1, options_.threads); ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
  }

  void stop_accepting() {
    draining_.store(true);
    // On the acceptor's strand, where its accept handler runs: never both at once. Weakly:
    // once the loop has run out of work (a drain closed the acceptor and every session)
    // nothing runs this, and a strong pointer in the loop's queue kept the State alive.
    net::post(acceptor_.get_executor(), [weak = weak_from_this()] {
      if (const auto self = weak.lock()) {
        beast::error_code ignored;
        self->acceptor_.close(ignored);
      }
    });
  }

  bool wait_idle(std::chrono::duration<double> timeout) {
    std::unique_lock lock(mu_);
    return idle_cv_.wait_for(lock, timeout, [&] { return pending_ == 0; });
  }

  void stop();
  HttpServerStats stats() const {
    std::lock_guard lock(mu_);
    HttpServerStats s = stats_;
    s.connections = sessions_.size();
    s.pending_responses = pending_;
    return s;
  }

  const HttpServerOptions options_;
  const RequestHandler handler_;
  std::atomic<bool> draining_{false};
  int port_ = 0;

  // Session bookkeeping, from the sessions' strands.
  void opened(const std::shared_ptr<Session>& session);
  void closed(Session* session);
  void pending_begun() {
    std::lock_guard lock(mu_);
    ++pending_;
  }
  void pending_ended() {
    std::lock_guard lock(mu_);
    --pending_;
    if (pending_ == 0) idle_cv_.notify_all();
  }
  void count(std::uint64_t HttpServerStats::*counter) {
    std::lock_guard lock(mu_);
    ++(stats_.*counter);
  }

 private:
  void accept();

  net::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<std::jthread> threads_;
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::condition_variable closed_cv_;
  std::set<std::shared_ptr<Session>> sessions_;  // guarded by mu_
  std::size_t pending_ = 0;                      // guarded by mu_
  HttpServerStats stats_;                        // guarded by mu_
  bool stopped_ = false;                         // guarded by mu_
};

// One connection: reads a request, answers it, and reads the next while keep-alive holds.
// Everything runs on the session's strand.
class HttpServer::State::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, State& server) : stream_(std::move(socket)), server_(server) {}

  void run() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_request(); });
  }

  // From any thread: cancels a pending response and closes the socket.
  void close_from_outside() {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
  }

 private:
  void read_request() {
    parser_.emplace();
    parser_->body_limit(server_.options_.max_body_bytes);
    stream_.expires_after(server_.options_.idle_timeout);
    // The head first: a client that sent `Expect: 100-continue` waits for our word before
    // it sends the body (curl: a second, for bodies over 1 MB).
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_head(ec); });
  }

  void on_head(beast::error_code ec) {
    if (ec) return on_request(ec);  // a body over the limit is known from its Content-Length
    if (!beast::iequals(parser_->get()[http::field::expect], "100-continue")) return read_body();
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this()](beast::error_code write_ec, std::size_t) {
                       if (write_ec) return self->close();
                       self->read_body();
                     });
  }

  void read_body() {
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
  }

  void on_request(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      respond(ApiError(413,
                       "the request body is over the limit of " +
                           std::to_string(server_.options_.max_body_bytes) + " bytes",
                       "invalid_request_error", "request_too_large")
                  .response());
      return;
    }
    if (ec) return close();  // end of stream, timeout, a malformed request line
    const http::request<http::string_body>& message = parser_->get();
    keep_alive_ = message.keep_alive();
    stream_.expires_never();
    if (server_.draining_.load()) {
      keep_alive_ = false;
      respond(ApiError(503, "the server is shutting down", "server_error", "shutting_down")
                  .with_retry_after(1)
                  .response());
      return;
    }
    RouteResult result = dispatch(to_request(message));
    if (auto* response = std::get_if<HttpResponse>(&result)) return respond(std::move(*response));
    begin_pending(std::move(std::get<std::shared_ptr<PendingResponse>>(result)));
  }

  RouteResult dispatch(const HttpRequest& request) {
    try {
      return server_.handler_(request);
    } catch (const ApiError& error) {
      return error.response();
    } catch (const std::exception& error) {
      return ApiError(500, std::string("internal error: ") + error.what(), "server_error")
          .response();
    }
  }

  void respond(HttpResponse response) {
    out_ = head_text(response.head, keep_alive_, false, response.body.size()) + response.body;
    last_write_ = true;
    write();
  }

  void begin_pending(std::shared_ptr<PendingResponse> pending) {
    pending_ = std::move(pending);
    head_sent_ = false;
    streamed_ = false;
    server_.pending_begun();
    watch_client();
    pending_->start([weak = weak_from_this()] {
      if (auto self = weak.lock()) {
        net::post(self->stream_.get_executor(), [self] { self->pump(); });
      }
    });
  }

  // Takes what the pending response has ready and writes it, unless a write is running.
  void pump() {
    if (!pending_ || writing_ || closed_) return;
    PendingResponse::Chunk chunk = pending_->take();
    std::string out;
    if (chunk.done && !chunk.head && !head_sent_) {
      chunk.head = HttpHead{.status = 500, .content_type = "application/json", .headers = {}};
      chunk.body = ApiError(500, "the response ended before it began", "server_error").body();
    }
    if (chunk.head) {
      head_sent_ = true;
      streamed_ = chunk.streamed;
      out = head_text(*chunk.head, keep_alive_, streamed_, chunk.body.size());
      if (!streamed_) {
        out += chunk.body;
        chunk.done = true;  // an unstreamed response is sent whole
      }
    }
    if (streamed_) out += chunk_frame(chunk.body);
    if (chunk.done) {
      if (streamed_) out += "0\r\n\r\n";
      end_pending();
      last_write_ = true;
    }
    if (out.empty()) return;
    out_ = std::move(out);
    write();
  }

  void write() {
    writing_ = true;
    stream_.expires_after(server_.options_.write_timeout);
    net::async_write(
        stream_, net::buffer(out_),
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_written(ec); });
  }

  void on_written(beast::error_code ec) {
    writing_ = false;
    if (closed_) return;
    stream_.expires_never();
    if (ec) {
      server_.count(ec == beast::error::timeout ? &HttpServerStats::dropped_slow
                                                : &HttpServerStats::disconnects);
      return close();
    }
    if (!last_write_) return pump();
    last_write_ = false;
    if (!keep_alive_) return shut_down();
    if (watching_) {
      next_after_watch_ = true;  // the watch read ends first, then the next request
      beast::error_code ignored;
      stream_.socket().cancel(ignored);
      return;
    }
    read_request();
  }

  // While the engine works, a read that ends tells us the client went away. Data that
  // arrives (a pipelined request) stays in the buffer for the next parse.
  void watch_client() {
    watching_ = true;
    stream_.socket().async_read_some(
        buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
          self->on_watch(ec, n);
        });
  }

  void on_watch(beast::error_code ec, std::size_t n) {
    watching_ = false;
    if (!ec) buffer_.commit(n);
    if (ec && ec != net::error::operation_aborted && pending_) {
      server_.count(&HttpServerStats::disconnects);
      return close();
    }
    if (next_after_watch_) {
      next_after_watch_ = false;
      if (!closed_) read_request();
    }
  }

  void end_pending() {
    if (!pending_) return;
    pending_.reset();
    server_.pending_ended();
  }

  void shut_down() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    if (pending_) pending_->cancel();
    end_pending();
    beast::error_code ignored;
    stream_.socket().close(ignored);
    server_.closed(this);
  }

  beast::tcp_stream stream_;
  State& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<PendingResponse> pending_;
  std::string out_;
  bool keep_alive_ = true;
  bool writing_ = false;
  bool last_write_ = false;  // the write running ends the response
  bool streamed_ = false;
  bool head_sent_ = false;
  bool watching_ = false;
  bool next_after_watch_ = false;
  bool closed_ = false;
};

void HttpServer::State::accept() {
  acceptor_.async_accept(net::make_strand(io_),
                         [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
                           if (ec == net::error::operation_aborted || !self->acceptor_.is_open())
                             return;
                           if (!ec) {
                             // Each SSE event is a small write: without this, Nagle's algorithm
                             // holds it until the client acknowledges the last one (up to 40 ms of
                             // delayed ACK on keep-alive).
                             beast::error_code ignored;
                             socket.set_option(tcp::no_delay(true), ignored);
                             auto session = std::make_shared<Session>(std::move(socket), *self);
                             self->opened(session);
                             session->run();
                           }
                           self->accept();
                         });
}

void HttpServer::State::opened(const std::shared_ptr<Session>& session) {
  std::lock_guard lock(mu_);
  if (stopped_) {
    session->close_from_outside();
    return;
  }
  sessions_.insert(session);
  ++stats_.accepted;
}

void HttpServer::State::closed(Session* session) {
  std::lock_guard lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->get() == session) {
      sessions_.erase(it);  // the session lives on in its pending handlers, if any
      closed_cv_.notify_all();
      return;
    }
  }
}

void HttpServer::State::stop() {
  std::set<std::shared_ptr<Session>> sessions;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    sessions = sessions_;
  }
  stop_accepting();
  for (const auto& session : sessions) session->close_from_outside();
  sessions.clear();
  // With the acceptor and every socket closed the loop runs out of work and returns; a
  // session that does not close in time is abandoned with the loop.
  {
    std::unique_lock lock(mu_);
    if (!closed_cv_.wait_for(lock, std::chrono::seconds(5), [&] { return sessions_.empty(); })) {
      io_.stop();
    }
  }
  for (auto& thread : threads_) thread.join();
  std::lock_guard lock(mu_);
  sessions_.clear();
}

HttpServer::HttpServer(HttpServerOptions options, RequestHandler handler)
    : state_(std::make_shared<State>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() { stop(); }

int HttpServer::port() const { return state_->port_; }
void HttpServer::start() { state_->start(); }
void HttpServer::stop_accepting() { state_->stop_accepting(); }
bool HttpServer::wait_idle(std::chrono::duration<double> timeout) {
  return state_->wait_idle(timeout);
}
void HttpServer::stop() { state_->stop(); }
HttpServerStats HttpServer::stats() const { return state_->stats(); }

}  // namespace baton
