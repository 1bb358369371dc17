// A latency benchmark of `baton serve` under mixed load, over HTTP (Boost.Beast client, one
// thread): closed-loop streaming chat completions for --duration seconds from two classes
// of clients, and one table of latency per class.
// Usage: serve_latency --url http://HOST:PORT --chat MODEL [--chat-streams 64]
//                      [--chat-tokens 128] [--long MODEL] [--long-streams 1]
//                      [--long-prompt-words 6000] [--long-tokens 16] [--duration 30]
//                      [--warmup 3] [--timeout 300] [--api-key KEY] [--json FILE]
//                      [--logprobs] [--quickack]
//
//   chat: --chat-streams clients, each streaming one greedy request after another with a
//         short prompt of its own (new every request) and max_tokens --chat-tokens;
//   long: --long-streams clients, the same with prompts of --long-prompt-words random words
//         (no request reuses another's cached prefix) and max_tokens --long-tokens.
// A client sends its next request when one ends (100 ms after a failure), until --duration
// is over; requests running then finish, each within --timeout seconds of its start.
// Requests that start in the first --warmup seconds are not counted (their failures are).
// Per request: TTFT (from sending, connecting included on a new connection, to the first
// chunk with content), every inter-token gap (between consecutive chunks with content),
// completion and prompt tokens from the usage chunk (stream_options.include_usage). With
// --logprobs the requests ask for logprobs and a chunk with a token's logprob counts as
// content even when its text is empty: only then does the server send a token whose text
// is empty (most of a `make-model` model's random picks) or not yet whole UTF-8.
// A request fails on a status other than 200, an SSE error event, no data: [DONE], a
// connection error or a timeout. tokens/s: the counted requests' completion tokens over
// --duration - --warmup. Percentiles are nearest-rank ("-": none).
// With --quickack the client acknowledges what it reads at once (TCP_QUICKACK, Linux):
// otherwise a server that leaves Nagle's algorithm on holds a small write back until the
// client's delayed ACK of the last one, up to 40 ms, on a keep-alive connection.
// Exit status: 0 when no request failed, 1 when any did, 2 on a usage error.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "http_url.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Options {
  std::string url, api_key, chat_model, long_model, json_file;
  int chat_streams = 64, chat_tokens = 128;
  int long_streams = 1, long_words = 6000, long_tokens = 16;
  double duration_s = 30, warmup_s = 3;
  int timeout_s = 300;
  bool logprobs = false, quickack = false;
};

// One class of clients and what its counted requests measured.
struct ClientClass {
  std::string name, model;
  int streams = 0, max_tokens = 0, words = 0;  // words: 0 for chat's short prompts
  int ok = 0, failed = 0;
  long completion_tokens = 0;
  std::vector<double> ttft_ms, itl_ms, prompt_tokens;
  // The first 5 kinds of failure (a reason up to its first ": "), each with its first
  // reason whole and a count.
  std::vector<std::pair<std::string, int>> failures;
};

void count_failure(ClientClass& cls, const std::string& why) {
  ++cls.failed;
  const std::string kind = why.substr(0, why.find(": "));
  for (auto& [reason, count] : cls.failures) {
    if (reason.substr(0, reason.find(": ")) == kind) {
      ++count;
      return;
    }
  }
  if (cls.failures.size() < 5) cls.failures.emplace_back(why, 1);
}

// "HTTP 404 model_not_found: The model ..." from an error response's body.
std::string http_failure(int status, const std::string& body) {
  std::string why = "HTTP " + std::to_string(status);
  const json error = json::parse(body, nullptr, false);
  if (error.is_object() && error.contains("error") && error["error"].is_object()) {
    const json& e = error["error"];
    if (e.contains("code") && e["code"].is_string()) why += " " + e["code"].get<std::string>();
    return why + ": " + e.value("message", std::string());
  }
  return why + ": " + body;
}


double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// --- prompts --------------------------------------------------------------------------------

// Common English words, 1.3 tokens each on average in the tokenizer of `baton make-model`
// (so that 6000 words make a prompt of about 8K tokens), one each in most real ones.
constexpr const char* kWords[] = {
    "about",   "after", "again",   "boat",    "boats",      "come",   "could",   "counting",
    "evening", "every", "first",   "going",   "harbour",    "learn",  "light",   "lighthouse",
    "lived",   "long",  "many",    "morning", "near",       "next",   "old",     "other",
    "over",    "pair",  "pieces",  "pier",    "remembered", "road",   "said",    "sea",
    "small",   "storm", "teacher", "time",    "town",       "train",  "trees",   "walked",
    "way",     "went",  "wind",    "window",  "words",      "would",  "year",    "years",
    "against", "along", "already", "asked",   "baker",      "bread",  "bright",  "cold",
    "down",    "hand",  "home",    "joining", "knew",       "looked", "machine", "night",
    "noon",    "older", "right",   "rocks",   "single",     "sound",  "stone",   "winter"};
constexpr std::size_t kWordCount = sizeof kWords / sizeof kWords[0];

std::string random_words(std::mt19937_64& rng, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += (i == 0 ? "" : " ");
    text += kWords[rng() % kWordCount];
  }
  return text;
}

// A prompt of its own for each client and request: short for chat, `words` long otherwise.
std::string make_prompt(const ClientClass& cls, int client, long request) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(request) * 1000003u +
                      static_cast<std::uint64_t>(client) * 7919u + (cls.words > 0 ? 17u : 0u));
  const std::string head =
      "Client " + std::to_string(client) + ", request " + std::to_string(request) + ". ";
  if (cls.words > 0) return head + random_words(rng, cls.words);
  return head + "Write a short story with these words: " +
         random_words(rng, 12 + static_cast<int>(rng() % 40)) + ".";
}

json chat_body(const ClientClass& cls, const std::string& prompt, bool logprobs) {
  json body = {{"model", cls.model},
               {"messages", json::array({{{"role", "user"}, {"content", prompt}}})},
               {"max_tokens", cls.max_tokens},
               {"temperature", 0.0},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (logprobs) body["logprobs"] = true;
  return body;
}

// --- one request ----------------------------------------------------------------------------

struct Sample {
  Clock::time_point start;
  bool ok = false, done = false;  // done: saw data: [DONE]
  std::string why;                // when failed
  double ttft_ms = -1;
  std::vector<double> gaps_ms;
  long completion_tokens = 0, prompt_tokens = -1;
  std::optional<Clock::time_point> last_token;
};

// A client's keep-alive connection, opened again after a failure.
struct Connection {
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  void close() {
    stream.reset();
    buffer.consume(buffer.size());  // the rest of an unfinished response
  }
};

// A chunk with text in its delta or, with --logprobs, with a token's logprob (a token whose
// text is empty, or not yet whole UTF-8, comes in a chunk only then).
bool carries_token(const json& choice) {
  const auto non_empty = [](const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key)) return false;
    const json& value = object[key];
    return value.is_string() ? !value.get_ref<const std::string&>().empty()
                             : value.is_array() && !value.empty();
  };
  return (choice.contains("delta") && non_empty(choice["delta"], "content")) ||
         (choice.contains("logprobs") && non_empty(choice["logprobs"], "content"));
}

// One SSE event's data, received at `at`. Returns false on an SSE error event.
bool handle_event(const std::string& data, Clock::time_point at, Sample& s) {
  if (data == "[DONE]") {
    s.done = true;
    return true;
  }
  const json chunk = json::parse(data);
  if (chunk.contains("error")) {
    s.why = "SSE error event: " + chunk["error"].dump().substr(0, 200);
    return false;
  }
  if (chunk.contains("usage") && chunk["usage"].is_object()) {
    s.completion_tokens = chunk["usage"].value("completion_tokens", 0L);
    s.prompt_tokens = chunk["usage"].value("prompt_tokens", -1L);
  }
  if (!chunk.contains("choices") || chunk["choices"].empty()) return true;
  if (!carries_token(chunk["choices"][0])) return true;
  if (s.last_token) {
    s.gaps_ms.push_back(ms_between(*s.last_token, at));
  } else {
    s.ttft_ms = ms_between(s.start, at);
  }
  s.last_token = at;
  return true;
}

class Bench {
 public:
  Bench(asio::io_context& io, const Options& options)
      : io_(io), options_(options), target_(parse_url(options.url)) {}

  awaitable<void> resolve() {
    tcp::resolver resolver(io_);
    endpoints_ = co_await resolver.async_resolve(target_.host, target_.port, use_awaitable);
  }

  // One client of `cls`: requests one after another until `end`.
  awaitable<void> client(ClientClass& cls, int index, Clock::time_point warm_end,
                         Clock::time_point end) {
    Connection conn;
    asio::steady_timer pause(io_);
    for (long request = 0; Clock::now() < end; ++request) {
      const std::string body =
          chat_body(cls, make_prompt(cls, index, request), options_.logprobs).dump();
      const Sample s = co_await send(conn, body);
      if (!s.ok) {
        count_failure(cls, s.why.substr(0, 300));
        pause.expires_after(std::chrono::milliseconds(100));
        co_await pause.async_wait(use_awaitable);
      } else if (s.start >= warm_end) {
        record(cls, s);
      }
    }
  }

 private:
  static void record(ClientClass& cls, const Sample& s) {
    ++cls.ok;
    cls.completion_tokens += s.completion_tokens;
    if (s.ttft_ms >= 0) cls.ttft_ms.push_back(s.ttft_ms);
    cls.itl_ms.insert(cls.itl_ms.end(), s.gaps_ms.begin(), s.gaps_ms.end());
    if (s.prompt_tokens >= 0) cls.prompt_tokens.push_back(static_cast<double>(s.prompt_tokens));
  }

  // Sends one request on the client's keep-alive connection, closed after a failure.
  awaitable<Sample> send(Connection& conn, const std::string& body) {
    Sample s;
    s.start = Clock::now();
    try {
      co_await exchange(conn, body, s);
    } catch (const beast::system_error& error) {
      s.why = error.code() == beast::error::timeout
                  ? "timeout: not done within " + std::to_string(options_.timeout_s) + " s"
                  : "connection error: " + error.code().message();
    } catch (const std::exception& error) {
      s.why = std::string("bad SSE event: ") + error.what();
    }
    if (!s.ok) conn.close();
    co_return s;
  }

  http::request<http::string_body> make_request(const std::string& body) const {
    http::request<http::string_body> req{http::verb::post, "/v1/chat/completions", 11};
    req.set(http::field::host, target_.host + ":" + target_.port);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::user_agent, "baton-serve-latency");
    if (!options_.api_key.empty())
      req.set(http::field::authorization, "Bearer " + options_.api_key);
    req.body() = body;
    req.prepare_payload();
    return req;
  }

  // Writes the request and reads the response, filling `s`. Throws on a broken connection.
  awaitable<void> exchange(Connection& conn, const std::string& body, Sample& s) {
    if (!conn.stream) conn.stream.emplace(io_);
    beast::tcp_stream& stream = *conn.stream;
    stream.expires_at(s.start + std::chrono::seconds(options_.timeout_s));
    if (!stream.socket().is_open()) co_await stream.async_connect(endpoints_, use_awaitable);
    auto req = make_request(body);
    co_await http::async_write(stream, req, use_awaitable);
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    co_await http::async_read_header(stream, conn.buffer, parser, use_awaitable);
    quick_ack(stream);
    if (parser.get().result_int() != 200) {
      co_await http::async_read(stream, conn.buffer, parser, use_awaitable);
      s.why = http_failure(parser.get().result_int(), parser.get().body());
      co_return;
    }
    co_await read_events(stream, conn.buffer, parser, s);
    if (!s.why.empty()) co_return;  // an SSE error event
    s.ok = s.done;
    if (!s.done) s.why = "no [DONE]: the stream ended without data: [DONE]";
    if (!parser.keep_alive()) conn.close();
  }

  // With --quickack: the next data read is acknowledged at once (Linux resets this).
  void quick_ack(beast::tcp_stream& stream) const {
    if (!options_.quickack) return;
    const int one = 1;
    setsockopt(stream.socket().native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  }

  // Handles each whole SSE event ("data: ...\n\n") as it arrives, stamped with the time
  // its read finished, until the body ends or an error event comes.
  awaitable<void> read_events(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                              http::response_parser<http::string_body>& parser, Sample& s) {
    Clock::time_point at = Clock::now();
    for (;;) {
      std::string& text = parser.get().body();
      std::size_t consumed = 0;
      for (std::size_t end; (end = text.find("\n\n", consumed)) != std::string::npos;) {
        const std::string event = text.substr(consumed, end - consumed);
        consumed = end + 2;
        if (event.rfind("data: ", 0) == 0 && !handle_event(event.substr(6), at, s)) co_return;
      }
      text.erase(0, consumed);
      if (parser.is_done()) co_return;
      co_await http::async_read_some(stream, buffer, parser, use_awaitable);
      at = Clock::now();
      quick_ack(stream);
    }
  }

  asio::io_context& io_;
  const Options& options_;
  HttpTarget target_;
  tcp::resolver::results_type endpoints_;
};

// --- the table ------------------------------------------------------------------------------

// Nearest rank of sorted values; nullopt when there is nothing to rank.
std::optional<double> percentile(const std::vector<double>& values, double p) {
  if (values.empty()) return std::nullopt;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const auto index = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return values[std::min(index, values.size() - 1)];
}

std::string cell(std::optional<double> value, const char* format = "%.1f") {
  if (!value) return "-";
  char out[32];
  std::snprintf(out, sizeof out, format, *value);
  return out;
}

json json_value(std::optional<double> value) { return value ? json(*value) : json(nullptr); }

struct Figures {
  std::optional<double> ttft_p50, ttft_p99, itl_p50, itl_p99, prompt_p50;
  double tokens_per_s = 0;
};

// Sorts the class's samples.
Figures figures(ClientClass& cls, double window_s) {
  for (auto* v : {&cls.ttft_ms, &cls.itl_ms, &cls.prompt_tokens}) std::sort(v->begin(), v->end());
  return {.ttft_p50 = percentile(cls.ttft_ms, 50),
          .ttft_p99 = percentile(cls.ttft_ms, 99),
          .itl_p50 = percentile(cls.itl_ms, 50),
          .itl_p99 = percentile(cls.itl_ms, 99),
          .prompt_p50 = percentile(cls.prompt_tokens, 50),
          .tokens_per_s = static_cast<double>(cls.completion_tokens) / window_s};
}

void print_table(const std::vector<ClientClass>& classes, const std::vector<Figures>& figs) {
  std::printf(
      "| class | model | streams | requests ok | failed | prompt tokens p50 | TTFT p50 ms "
      "| TTFT p99 ms | inter-token p50 ms | inter-token p99 ms | tokens/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const ClientClass& cls = classes[i];
    const Figures& f = figs[i];
    std::printf("| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %.1f |\n", cls.name.c_str(),
                cls.model.c_str(), cls.streams, cls.ok, cls.failed,
                cell(f.prompt_p50, "%.0f").c_str(), cell(f.ttft_p50).c_str(),
                cell(f.ttft_p99).c_str(), cell(f.itl_p50, "%.2f").c_str(),
                cell(f.itl_p99, "%.2f").c_str(), f.tokens_per_s);
  }
  for (const ClientClass& cls : classes) {
    for (const auto& [why, count] : cls.failures) {
      std::printf("%s failed %d x: %s\n", cls.name.c_str(), count, why.c_str());
    }
  }
}

json to_json(const std::vector<ClientClass>& classes, const std::vector<Figures>& figs,
             const Options& options, const std::string& command, double window_s) {
  json out = {{"command", command},
              {"url", options.url},
              {"duration_s", options.duration_s},
              {"warmup_s", options.warmup_s},
              {"window_s", window_s}};
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const ClientClass& cls = classes[i];
    const Figures& f = figs[i];
    json failures = json::array();
    for (const auto& [why, count] : cls.failures) {
      failures.push_back({{"reason", why}, {"count", count}});
    }
    out[cls.name] = {
        {"model", cls.model},
        {"streams", cls.streams},
        {"max_tokens", cls.max_tokens},
        {"requests_ok", cls.ok},
        {"failed", cls.failed},
        {"ttft_ms", {{"p50", json_value(f.ttft_p50)}, {"p99", json_value(f.ttft_p99)}}},
        {"itl_ms", {{"p50", json_value(f.itl_p50)}, {"p99", json_value(f.itl_p99)}}},
        {"inter_token_gaps", cls.itl_ms.size()},
        {"completion_tokens", cls.completion_tokens},
        {"tokens_per_s", f.tokens_per_s},
        {"prompt_tokens_p50", json_value(f.prompt_p50)},
        {"failures", failures}};
  }
  return out;
}

std::vector<ClientClass> make_classes(const Options& o) {
  std::vector<ClientClass> classes{{.name = "chat",
                                    .model = o.chat_model,
                                    .streams = o.chat_streams,
                                    .max_tokens = o.chat_tokens}};
  if (!o.long_model.empty() && o.long_streams > 0) {
    classes.push_back({.name = "long",
                       .model = o.long_model,
                       .streams = o.long_streams,
                       .max_tokens = o.long_tokens,
                       .words = o.long_words});
  }
  return classes;
}

// Resolves the server, then starts every client of every class.
awaitable<void> start(Bench& bench, std::vector<ClientClass>& classes, const Options& o) {
  co_await bench.resolve();
  const Clock::time_point begin = Clock::now();
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  const Clock::time_point warm_end = begin + seconds(o.warmup_s);
  const Clock::time_point end = begin + seconds(o.duration_s);
  auto executor = co_await asio::this_coro::executor;
  for (ClientClass& cls : classes) {
    for (int i = 0; i < cls.streams; ++i) {
      asio::co_spawn(executor, bench.client(cls, i, warm_end, end), asio::detached);
    }
  }
}

void add_options(CLI::App& app, Options& o) {
  const auto number = [&app](const char* name, auto& value, const char* help, auto low, auto high) {
    app.add_option(name, value, help)->capture_default_str()->check(CLI::Range(low, high));
  };
  app.add_option("--url", o.url, "The server, http://HOST:PORT")->required();
  app.add_option("--api-key", o.api_key, "Bearer key, when the server has one");
  app.add_option("--chat", o.chat_model, "The chat class's model")->required();
  number("--chat-streams", o.chat_streams, "Chat clients (0: the long class alone)", 0, 100000);
  number("--chat-tokens", o.chat_tokens, "max_tokens of a chat request", 1, 1000000);
  app.add_option("--long", o.long_model, "The long class's model (none: no long class)");
  number("--long-streams", o.long_streams, "Long-prompt clients", 0, 100000);
  number("--long-prompt-words", o.long_words, "Words of a long prompt", 1, 10000000);
  number("--long-tokens", o.long_tokens, "max_tokens of a long request", 1, 1000000);
  number("--duration", o.duration_s, "Seconds during which requests start", 0.1, 86400.0);
  number("--warmup", o.warmup_s, "First seconds whose requests are not counted", 0.0, 86400.0);
  number("--timeout", o.timeout_s, "Seconds a request may take", 1, 86400);
  app.add_option("--json", o.json_file, "Also write the figures to this JSON file");
  app.add_flag("--logprobs", o.logprobs,
               "Ask for logprobs: every token then comes in a chunk (with text or not)");
  app.add_flag("--quickack", o.quickack,
               "Acknowledge received data at once (TCP_QUICKACK after every read): a server "
               "without TCP_NODELAY then does not wait for this client's delayed ACKs");
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"Latency of baton serve under mixed load: short chat streams and long prompts"};
  add_options(app, options);
  try {
    app.parse(argc, argv);
    if (options.warmup_s >= options.duration_s) {
      throw CLI::ValidationError("--warmup", "must be below --duration");
    }
    parse_url(options.url);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "serve_latency: %s\n", error.what());
    return 2;
  }
  std::string command = "serve_latency";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  std::printf("%s\n\n", command.c_str());
  std::fflush(stdout);

  std::vector<ClientClass> classes = make_classes(options);
  asio::io_context io;
  Bench bench(io, options);
  std::exception_ptr failure;
  asio::co_spawn(io, start(bench, classes, options),
                 [&failure](std::exception_ptr error) { failure = error; });
  io.run();
  try {
    if (failure) std::rethrow_exception(failure);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "serve_latency: %s\n", error.what());
    return 1;
  }
  const double window_s = options.duration_s - options.warmup_s;
  std::vector<Figures> figs;
  for (ClientClass& cls : classes) figs.push_back(figures(cls, window_s));
  print_table(classes, figs);
  if (!options.json_file.empty()) {
    std::ofstream file(options.json_file);
    file << to_json(classes, figs, options, command, window_s).dump(2) << "\n";
    if (!file) {
      std::fprintf(stderr, "serve_latency: cannot write %s\n", options.json_file.c_str());
      return 1;
    }
  }
  const bool any_failed = std::any_of(classes.begin(), classes.end(),
                                      [](const ClientClass& c) { return c.failed > 0; });
  return any_failed ? 1 : 0;
}
