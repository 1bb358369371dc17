// What the HTTP layer (http_server.h) hands the routes and gets back, without Beast:
// a parsed request, a response that is complete at once, and a PendingResponse that
// another thread (an engine) produces over time: a streamed completion, or one that is
// sent whole when it is done. The routes can be tested without a socket.
// Thread-safety: HttpRequest and HttpResponse are values; PendingResponse says its own.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace baton {

struct HttpRequest {
  std::string method;                         // "GET", "POST", ...
  std::string target;                         // the path, without the query
  std::string query;                          // after the '?', raw; empty when none
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;

  const std::string* header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? nullptr : &it->second;
  }
};

struct HttpHead {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

struct HttpResponse {
  HttpHead head;
  std::string body;
};

// A response another thread produces. The session calls start() once, then take() each
// time it is woken and free to write, until a take() returns done; cancel() when the
// client goes away or does not read. A streamed response's body is sent chunked as it
// comes; an unstreamed one is sent whole with its length.
// Thread-safety: wake is called from any thread; start(), take() and cancel() from the
// session's strand, one at a time.
class PendingResponse {
 public:
  struct Chunk {
    std::optional<HttpHead> head;  // on the first take() that returns anything
    bool streamed = false;         // with head: chunked body (SSE)
    std::string body;              // bytes to send now
    bool done = false;             // nothing comes after
  };

  virtual ~PendingResponse() = default;
  virtual void start(std::function<void()> wake) = 0;
  virtual Chunk take() = 0;
  virtual void cancel() = 0;
};

using RouteResult = std::variant<HttpResponse, std::shared_ptr<PendingResponse>>;

// What the HTTP layer calls for every request, on one of its I/O threads: must not block.
using RequestHandler = std::function<RouteResult(const HttpRequest&)>;

}  // namespace baton
