// HttpServer: HTTP/1.1 over Boost.Beast and Asio, asynchronous: a few I/O threads hold
// every connection (no thread per connection), so a thousand idle or streaming clients
// cost memory, not threads. It parses requests (body over the limit: 413), hands them to
// the RequestHandler, and writes what comes back: a response at once, or a
// PendingResponse (a streamed body goes out chunked as it is produced). While a response
// is pending it watches the socket, so a client that goes away cancels its work; a
// client that does not read within the write timeout is dropped, not waited for.
// Thread-safety: all members are thread-safe; the handler runs on the I/O threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "baton/server/http/http_types.h"

namespace baton {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (see port())
  std::string setting = "--host, --port";  // where host and port were set, for errors
  int threads = 2;
  std::size_t max_body_bytes = std::size_t{8} << 20;
  std::chrono::seconds idle_timeout{75};   // a keep-alive connection with no request
  std::chrono::seconds write_timeout{30};  // a client that reads nothing for this long
};

struct HttpServerStats {
  std::size_t connections = 0;        // open now
  std::size_t pending_responses = 0;  // requests still being answered
  std::uint64_t accepted = 0;
  std::uint64_t dropped_slow = 0;  // clients dropped for not reading
  std::uint64_t disconnects = 0;   // clients that went away mid-response
};

class HttpServer {
 public:
  // Binds and listens (std::system_error when the address is taken); serves once start()ed.
  HttpServer(HttpServerOptions options, RequestHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  void start();
  // No new connections; a request on an open connection gets a 503 and the connection
  // closes. Pending responses go on.
  void stop_accepting();
  // Waits until no response is pending or `timeout` passes; true when none is.
  bool wait_idle(std::chrono::duration<double> timeout);
  // Closes every connection (pending responses are cancelled) and joins the threads.
  void stop();
  HttpServerStats stats() const;

 private:
  class State;
  std::shared_ptr<State> state_;
};

}  // namespace baton
