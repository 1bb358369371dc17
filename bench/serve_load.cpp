// A load test of `baton serve` from outside, over HTTP (Boost.Beast client, one thread).
// Usage: serve_load --url http://127.0.0.1:PORT --models a,b [--clients 256] [--idle 1000]
//                   [--streamers 10] [--pid PID] [--api-key KEY] [--max-tokens 24]
//                   [--temperature T]
//
//   baseline: every client's request alone, one after another, non-streaming and greedy:
//             the text, finish_reason and completion_tokens each request must give. (A
//             tiny random model's greedy text is often the same for many prompts; with
//             --temperature T > 0 each client samples with seed = its index instead, which
//             the server must also repeat exactly, and the texts differ far more.)
//   phase 1:  --clients streaming chat clients at once, split across --models, each with
//             its own prompt; each checks that its streamed text (the deltas, concatenated)
//             equals its baseline text.
//   phase 2:  --idle connections, of which all but --streamers sit idle (a third never send
//             a byte, a third send half a request's headers, a third had one keep-alive
//             request answered), while --streamers clients stream, with the same checks.
//
// A client is complete (HTTP 200, the stream ends with data: [DONE], text, finish_reason
// and usage equal the baseline's), garbled (the stream ended but its text or finish reason
// differs) or failed (anything else: a status other than 200, an SSE error event, no
// [DONE], a broken connection, a timeout). TTFT is the time from sending the request to
// the first delta with content; total, to [DONE]; tokens/s, the completion tokens the
// phase's streams reported in their usage over the phase's wall time. With --pid, the server's
// Threads and VmRSS (/proc/PID/status) are printed before, at most during and after each phase.
// Exit status: 0 when every client of both phases is complete, 1 when any is not, 2 on a
// usage error.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
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
  std::string url;
  std::vector<std::string> models;
  int clients = 256;
  int idle = 1000;
  int streamers = 10;
  int max_tokens = 24;
  int timeout_s = 300;
  double temperature = 0.0;  // > 0: sampled, seeded with the client's index
  long pid = 0;
  std::string api_key;
};


// One client's request and what it must give.
struct Job {
  int index = 0;
  std::string model;
  std::string prompt;
  int max_tokens = 0;
  std::string expected_text;
  std::string expected_finish;
  long expected_completion_tokens = -1;
};

json chat_body(const Job& job, bool stream, double temperature) {
  json body = {{"model", job.model},
               {"messages", json::array({{{"role", "user"}, {"content", job.prompt}}})},
               {"max_tokens", job.max_tokens},
               {"temperature", temperature}};
  if (temperature > 0) body["seed"] = job.index;
  if (stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  return body;
}

http::request<http::string_body> make_request(const Options& options, const HttpTarget& target,
                                              const std::string& body) {
  http::request<http::string_body> req{http::verb::post, "/v1/chat/completions", 11};
  req.set(http::field::host, target.host + ":" + target.port);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::user_agent, "baton-serve-load");
  if (!options.api_key.empty()) req.set(http::field::authorization, "Bearer " + options.api_key);
  req.body() = body;
  req.prepare_payload();
  return req;
}

enum class Outcome { complete, garbled, failed };

struct Result {
  Outcome outcome = Outcome::failed;
  std::string why;             // for garbled and failed
  double ttft_ms = -1;         // to the first delta with content (or the first event)
  double total_ms = -1;        // to data: [DONE]
  long tokens = -1;            // the stream's usage.completion_tokens; -1: none came
};

// --- the server's /proc/PID/status --------------------------------------------------------

struct ProcSample {
  long threads = -1;
  long rss_kb = -1;
};

ProcSample sample_proc(long pid) {
  ProcSample sample;
  if (pid <= 0) return sample;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) sample.threads = std::stol(line.substr(8));
    if (line.rfind("VmRSS:", 0) == 0) sample.rss_kb = std::stol(line.substr(6));
  }
  return sample;
}

struct ProcWatch {
  ProcSample before;
  ProcSample peak;
  ProcSample after;
};

void keep_peak(ProcSample& peak, const ProcSample& now) {
  peak.threads = std::max(peak.threads, now.threads);
  peak.rss_kb = std::max(peak.rss_kb, now.rss_kb);
}

// --- the clients ---------------------------------------------------------------------------

class Load {
 public:
  Load(asio::io_context& io, Options options)
      : io_(io), options_(std::move(options)), target_(parse_url(options_.url)) {}

  awaitable<tcp::resolver::results_type> resolve() {
    tcp::resolver resolver(io_);
    co_return co_await resolver.async_resolve(target_.host, target_.port, use_awaitable);
  }

  // One non-streaming request; fills the job's expectations.
  awaitable<void> baseline(Job& job) {
    beast::tcp_stream stream(io_);
    stream.expires_after(std::chrono::seconds(options_.timeout_s));
    co_await stream.async_connect(endpoints_, use_awaitable);
    auto req =
        make_request(options_, target_, chat_body(job, false, options_.temperature).dump());
    co_await http::async_write(stream, req, use_awaitable);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, use_awaitable);
    if (res.result_int() != 200) {
      throw std::runtime_error("baseline request: HTTP " + std::to_string(res.result_int()) +
                               " " + res.body().substr(0, 300));
    }
    const json reply = json::parse(res.body());
    job.expected_text = reply.at("choices").at(0).at("message").at("content").get<std::string>();
    job.expected_finish = reply.at("choices").at(0).at("finish_reason").get<std::string>();
    job.expected_completion_tokens = reply.at("usage").at("completion_tokens").get<long>();
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  // One streaming request, checked against the job's baseline.
  awaitable<Result> stream_once(const Job& job) {
    Result result;
    try {
      beast::tcp_stream stream(io_);
      stream.expires_after(std::chrono::seconds(options_.timeout_s));
      co_await stream.async_connect(endpoints_, use_awaitable);
      auto req =
        make_request(options_, target_, chat_body(job, true, options_.temperature).dump());
      const Clock::time_point sent = Clock::now();
      co_await http::async_write(stream, req, use_awaitable);
      beast::flat_buffer buffer;
      http::response_parser<http::string_body> parser;
      parser.body_limit(std::numeric_limits<std::uint64_t>::max());
      co_await http::async_read_header(stream, buffer, parser, use_awaitable);
      if (parser.get().result_int() != 200) {
        co_await http::async_read(stream, buffer, parser, use_awaitable);
        result.why = "HTTP " + std::to_string(parser.get().result_int()) + " " +
                     parser.get().body().substr(0, 200);
        co_return result;
      }
      std::string text;
      std::string finish;
      long completion_tokens = -1;
      bool done = false;
      std::size_t consumed = 0;  // of the body: the events already handled
      for (;;) {
        // Handle each whole event ("...\n\n") in the body so far.
        std::string& body = parser.get().body();
        for (;;) {
          const std::size_t end = body.find("\n\n", consumed);
          if (end == std::string::npos) break;
          const std::string event = body.substr(consumed, end - consumed);
          consumed = end + 2;
          if (event.rfind("data: ", 0) != 0) continue;
          const std::string data = event.substr(6);
          if (data == "[DONE]") {
            done = true;
            continue;
          }
          const json chunk = json::parse(data);
          if (chunk.contains("error")) {
            result.why = "SSE error event: " + chunk["error"].dump().substr(0, 200);
            co_return result;
          }
          if (chunk.contains("usage") && chunk["usage"].is_object()) {
            completion_tokens = chunk["usage"].value("completion_tokens", -1L);
          }
          const json& choices = chunk.at("choices");
          if (choices.empty()) continue;
          const json& choice = choices.at(0);
          if (result.ttft_ms < 0) result.ttft_ms = ms_since(sent);  // the first event
          if (choice.contains("delta") && choice["delta"].contains("content") &&
              choice["delta"]["content"].is_string()) {
            const std::string piece = choice["delta"]["content"].get<std::string>();
            if (!piece.empty() && text.empty()) result.ttft_ms = ms_since(sent);
            text += piece;
          }
          if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
            finish = choice["finish_reason"].get<std::string>();
          }
        }
        if (parser.is_done()) break;
        beast::error_code ec;
        co_await http::async_read_some(stream, buffer, parser,
                                       asio::redirect_error(use_awaitable, ec));
        if (ec == http::error::end_of_stream || ec == asio::error::eof) break;
        if (ec) throw beast::system_error(ec);
      }
      result.total_ms = ms_since(sent);
      result.tokens = completion_tokens;
      if (!done) {
        result.why = "the stream ended without data: [DONE]";
      } else if (text != job.expected_text || finish != job.expected_finish) {
        result.outcome = Outcome::garbled;
        result.why = "streamed " + json(text).dump() + " (" + finish + "), alone " +
                     json(job.expected_text).dump() + " (" + job.expected_finish + ")";
      } else if (completion_tokens != job.expected_completion_tokens) {
        result.outcome = Outcome::garbled;
        result.why = "usage.completion_tokens " + std::to_string(completion_tokens) +
                     ", alone " + std::to_string(job.expected_completion_tokens);
      } else {
        result.outcome = Outcome::complete;
      }
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    } catch (const std::exception& error) {
      result.outcome = Outcome::failed;
      result.why = error.what();
    }
    co_return result;
  }

  // Samples the server every 50 ms until *running turns false.
  awaitable<void> watch(std::shared_ptr<bool> running, ProcWatch& proc) {
    asio::steady_timer timer(io_);
    while (*running) {
      keep_peak(proc.peak, sample_proc(options_.pid));
      timer.expires_after(std::chrono::milliseconds(50));
      co_await timer.async_wait(use_awaitable);
    }
  }

  // Runs `jobs` streaming at once; returns their results in order.
  awaitable<std::vector<Result>> stream_all(const std::vector<Job>& jobs) {
    std::vector<Result> results(jobs.size());
    auto left = std::make_shared<std::size_t>(jobs.size());
    asio::steady_timer all_done(io_, Clock::time_point::max());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      asio::co_spawn(
          io_,
          [this, &jobs, &results, &all_done, left, i]() -> awaitable<void> {
            results[i] = co_await stream_once(jobs[i]);
            if (--*left == 0) all_done.cancel();
          },
          asio::detached);
    }
    if (!jobs.empty()) {
      beast::error_code ec;
      co_await all_done.async_wait(asio::redirect_error(use_awaitable, ec));
    }
    co_return results;
  }

  // An idle connection: kind 0 sends nothing, 1 half a request's headers, 2 one keep-alive
  // request (answered) and then nothing. Closed-by-the-server is counted.
  struct Idle {
    explicit Idle(asio::io_context& io) : socket(io) {}
    tcp::socket socket;
    int kind = 0;
    bool closed_by_server = false;
    std::array<char, 256> scratch{};
  };

  awaitable<void> open_idle(Idle& idle) {
    co_await asio::async_connect(idle.socket, endpoints_, use_awaitable);
    if (idle.kind == 1) {
      const std::string half = "POST /v1/chat/completions HTTP/1.1\r\nHost: " + target_.host +
                               "\r\nContent-Type: application/json\r\n";
      co_await asio::async_write(idle.socket, asio::buffer(half), use_awaitable);
    } else if (idle.kind == 2) {
      http::request<http::empty_body> req{http::verb::get, "/health", 11};
      req.set(http::field::host, target_.host + ":" + target_.port);
      if (!options_.api_key.empty()) {
        req.set(http::field::authorization, "Bearer " + options_.api_key);
      }
      co_await http::async_write(idle.socket, req, use_awaitable);
      beast::flat_buffer buffer;
      http::response<http::string_body> res;
      co_await http::async_read(idle.socket, buffer, res, use_awaitable);
      if (res.result_int() != 200 && res.result_int() != 503) {
        throw std::runtime_error("GET /health: HTTP " + std::to_string(res.result_int()));
      }
    }
    // Watch for the server closing it (a read that ends).
    idle.socket.async_read_some(asio::buffer(idle.scratch),
                                [&idle](beast::error_code ec, std::size_t) {
                                  if (ec != asio::error::operation_aborted) {
                                    idle.closed_by_server = true;
                                  }
                                });
  }

  // Opens `count` idle connections, at most 64 connecting at a time. Returns how many failed.
  awaitable<int> open_idles(std::vector<std::unique_ptr<Idle>>& idles, int count) {
    int failed = 0;
    asio::steady_timer batch_done(io_);
    for (int start = 0; start < count; start += 64) {
      const int end = std::min(count, start + 64);
      auto left = std::make_shared<int>(end - start);
      batch_done.expires_at(Clock::time_point::max());
      for (int i = start; i < end; ++i) {
        idles.push_back(std::make_unique<Idle>(io_));
        Idle& idle = *idles.back();
        idle.kind = i % 3;
        asio::co_spawn(
            io_,
            [this, &idle, &failed, &batch_done, left]() -> awaitable<void> {
              try {
                co_await open_idle(idle);
              } catch (const std::exception& error) {
                if (failed++ == 0) std::fprintf(stderr, "idle connection: %s\n", error.what());
              }
              if (--*left == 0) batch_done.cancel();
            },
            asio::detached);
      }
      beast::error_code ec;
      co_await batch_done.async_wait(asio::redirect_error(use_awaitable, ec));
    }
    co_return failed;
  }

  awaitable<void> run(int& exit_code) {
    endpoints_ = co_await resolve();
    std::vector<Job> jobs;
    for (int i = 0; i < options_.clients; ++i) {
      Job job;
      job.index = i;
      job.model = options_.models[static_cast<std::size_t>(i) % options_.models.size()];
      job.prompt = "Client " + std::to_string(i) + " of " + std::to_string(options_.clients) +
                   ": tell me something about the number " + std::to_string(i * 7919 % 1000) +
                   ".";
      job.max_tokens = options_.max_tokens + i % 9;
      jobs.push_back(std::move(job));
    }

    std::printf("serve_load: %s, models %s, server pid %ld\n", options_.url.c_str(),
                join(options_.models).c_str(), options_.pid);
    const Clock::time_point baseline_start = Clock::now();
    for (Job& job : jobs) co_await baseline(job);
    std::set<std::string> distinct;
    for (const Job& job : jobs) distinct.insert(job.expected_text);
    std::printf("baseline: %d %s requests alone (non-streaming, one after another) in %.1f s; "
                "%zu distinct texts\n",
                options_.clients, options_.temperature > 0 ? "seeded" : "greedy",
                ms_since(baseline_start) / 1000.0, distinct.size());
    std::fflush(stdout);

    // Phase 1: every client streams at once.
    ProcWatch proc1;
    proc1.before = sample_proc(options_.pid);
    proc1.peak = proc1.before;
    auto running = std::make_shared<bool>(true);
    asio::co_spawn(io_, watch(running, proc1), asio::detached);
    const Clock::time_point phase1_start = Clock::now();
    const std::vector<Result> phase1 = co_await stream_all(jobs);
    const double phase1_s = ms_since(phase1_start) / 1000.0;
    *running = false;
    proc1.after = sample_proc(options_.pid);

    // Phase 2: --idle connections, --streamers of them streaming.
    const int streamers = std::min({options_.streamers, options_.idle, options_.clients});
    const int idle_count = std::max(0, options_.idle - streamers);
    ProcWatch proc2;
    proc2.before = sample_proc(options_.pid);
    proc2.peak = proc2.before;
    running = std::make_shared<bool>(true);
    asio::co_spawn(io_, watch(running, proc2), asio::detached);
    std::vector<std::unique_ptr<Idle>> idles;
    const int idle_failed = co_await open_idles(idles, idle_count);
    ProcSample idle_open = sample_proc(options_.pid);
    const std::vector<Job> stream_jobs(jobs.begin(), jobs.begin() + streamers);
    const Clock::time_point phase2_start = Clock::now();
    const std::vector<Result> phase2 = co_await stream_all(stream_jobs);
    const double phase2_s = ms_since(phase2_start) / 1000.0;
    int idle_closed = 0;
    for (const auto& idle : idles) idle_closed += idle->closed_by_server ? 1 : 0;
    for (const auto& idle : idles) {
      beast::error_code ignored;
      idle->socket.cancel(ignored);
      idle->socket.close(ignored);
    }
    // Let the server see the closes before the last sample.
    asio::steady_timer settle(io_);
    settle.expires_after(std::chrono::milliseconds(500));
    co_await settle.async_wait(use_awaitable);
    *running = false;
    proc2.after = sample_proc(options_.pid);

    std::printf("\n%-34s %7s %8s %7s %6s %9s %9s %9s %9s %7s %9s\n", "phase", "clients", "complete",
                "garbled", "failed", "TTFT p50", "TTFT p99", "total p50", "total p99", "wall",
                "tokens/s");
    print_row("1: " + std::to_string(options_.clients) + " streaming at once", phase1, phase1_s);
    print_row("2: " + std::to_string(idle_count + streamers) + " connections, " +
                  std::to_string(streamers) + " streaming",
              phase2, phase2_s);
    std::printf("phase 2 idle connections: %d opened (%d sent nothing, %d half a request, %d one "
                "keep-alive request), %d could not be opened, %d closed by the server meanwhile\n",
                idle_count - idle_failed, (idle_count + 2) / 3, (idle_count + 1) / 3, idle_count / 3,
                idle_failed, idle_closed);

    std::printf("\n%-34s %8s %12s\n", "server (/proc/PID/status)", "Threads", "VmRSS");
    print_proc("before phase 1", proc1.before);
    print_proc("during phase 1 (max)", proc1.peak);
    print_proc("after phase 1", proc1.after);
    print_proc("before phase 2", proc2.before);
    print_proc("phase 2, idle connections open", idle_open);
    print_proc("during phase 2 (max)", proc2.peak);
    print_proc("after phase 2", proc2.after);

    print_problems("phase 1", phase1);
    print_problems("phase 2", phase2);
    const bool all_complete = std::all_of(phase1.begin(), phase1.end(), is_complete) &&
                              std::all_of(phase2.begin(), phase2.end(), is_complete) &&
                              idle_failed == 0;
    exit_code = all_complete ? 0 : 1;
  }

 private:
  static bool is_complete(const Result& r) { return r.outcome == Outcome::complete; }

  static double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
    return out;
  }

  // Nearest rank; "-" when there is nothing to rank.
  static std::string percentile(std::vector<double> values, double p) {
    if (values.empty()) return "-";
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(
        std::max(0.0, std::ceil(p / 100.0 * static_cast<double>(values.size())) - 1.0));
    char out[32];
    std::snprintf(out, sizeof out, "%.0f ms", values[std::min(rank, values.size() - 1)]);
    return out;
  }

  static void print_row(const std::string& name, const std::vector<Result>& results,
                        double wall_s) {
    int complete = 0;
    int garbled = 0;
    int failed = 0;
    std::vector<double> ttft;
    std::vector<double> total;
    long tokens = 0;
    for (const Result& r : results) {
      if (r.tokens > 0) tokens += r.tokens;
      if (r.outcome == Outcome::complete) ++complete;
      if (r.outcome == Outcome::garbled) ++garbled;
      if (r.outcome == Outcome::failed) ++failed;
      if (r.outcome != Outcome::failed && r.ttft_ms >= 0) ttft.push_back(r.ttft_ms);
      if (r.outcome != Outcome::failed && r.total_ms >= 0) total.push_back(r.total_ms);
    }
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.1f s", wall_s);
    std::printf("%-34s %7zu %8d %7d %6d %9s %9s %9s %9s %7s %9.0f\n", name.c_str(), results.size(),
                complete, garbled, failed, percentile(ttft, 50).c_str(),
                percentile(ttft, 99).c_str(), percentile(total, 50).c_str(),
                percentile(total, 99).c_str(), wall, wall_s > 0 ? tokens / wall_s : 0.0);
  }

  static void print_proc(const std::string& name, const ProcSample& s) {
    if (s.threads < 0) {
      std::printf("%-34s %8s %12s\n", name.c_str(), "-", "-");
      return;
    }
    char rss[32];
    std::snprintf(rss, sizeof rss, "%.1f MiB", static_cast<double>(s.rss_kb) / 1024.0);
    std::printf("%-34s %8ld %12s\n", name.c_str(), s.threads, rss);
  }

  // The distinct reasons (at most 5, with their counts) of the clients that were not complete.
  static void print_problems(const std::string& phase, const std::vector<Result>& results) {
    std::map<std::string, int> reasons;
    for (const Result& r : results) {
      if (r.outcome != Outcome::complete) ++reasons[r.why.substr(0, 300)];
    }
    if (reasons.empty()) return;
    std::printf("\n%s, not complete:\n", phase.c_str());
    int shown = 0;
    for (const auto& [why, count] : reasons) {
      if (shown++ == 5) {
        std::printf("  ... and %zu more reasons\n", reasons.size() - 5);
        break;
      }
      std::printf("  %d x %s\n", count, why.c_str());
    }
  }

  asio::io_context& io_;
  Options options_;
  HttpTarget target_;
  tcp::resolver::results_type endpoints_;
};

// Phase 2 holds --idle sockets at once: raise the soft limit on descriptors to the hard one.
void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::string models;
  CLI::App app{"Load test of baton serve: streaming chat clients checked against their greedy "
               "answers alone, then idle connections next to a few streams"};
  app.add_option("--url", options.url, "The server, http://HOST:PORT")->required();
  app.add_option("--models", models, "Chat models to split the clients across, a,b")->required();
  app.add_option("--clients", options.clients, "Streaming clients of phase 1")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--idle", options.idle, "Connections of phase 2 (streaming ones included)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--streamers", options.streamers, "Streaming clients of phase 2")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--max-tokens", options.max_tokens,
                 "max_tokens of client 0 (client i asks for this + i % 9)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--timeout", options.timeout_s, "Seconds a request may take")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.add_option("--temperature", options.temperature,
                 "0: greedy (default); above 0 each client samples with seed = its index")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 2.0));
  app.add_option("--pid", options.pid, "The server's pid, for /proc/PID/status");
  app.add_option("--api-key", options.api_key, "Bearer key, when the server has --api-key");
  // A later --clients (etc.) wins: scripts/serve-load-table passes its defaults first.
  for (CLI::Option* option : app.get_options()) {
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  CLI11_PARSE(app, argc, argv);
  std::stringstream list(models);
  for (std::string name; std::getline(list, name, ',');) {
    if (!name.empty()) options.models.push_back(name);
  }
  if (options.models.empty()) {
    std::fprintf(stderr, "serve_load: --models names no model\n");
    return 2;
  }
  raise_fd_limit();

  asio::io_context io;
  Load load(io, options);
  int exit_code = 1;
  std::exception_ptr failure;
  asio::co_spawn(io, load.run(exit_code), [&failure](std::exception_ptr error) {
    failure = error;
  });
  io.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "serve_load: %s\n", error.what());
      return 1;
    }
  }
  return exit_code;
}
