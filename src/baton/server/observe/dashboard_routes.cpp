#include "baton/server/observe/dashboard_routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "baton/server/api/openai_response.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using nlohmann::json;

std::string_view content_type_of(std::string_view name) {
  const auto ends_with = [name](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".png")) return "image/png";
  if (ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// The value of `key` in a query string "a=1&b=2" (no percent-decoding: the dashboard's
// parameters are plain numbers).
std::optional<std::string_view> query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      return eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

double window_seconds(std::string_view query) {
  const std::optional<std::string_view> text = query_value(query, "seconds");
  if (!text) return kTimelineDefaultSeconds;
  double value = 0.0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || !std::isfinite(value) ||
      value <= 0.0 || value > kTimelineMaxSeconds) {
    // Refused, not capped: the answer would cover less than was asked without saying so.
    throw bad_parameter("seconds", "seconds must be a positive number of seconds (at most " +
                                       std::to_string(static_cast<int>(kTimelineMaxSeconds)) +
                                       "), not '" + std::string(*text) + "'");
  }
  return value;
}

json spans_json(const std::vector<Span>& spans) {
  json out = json::array();
  for (const Span& s : spans) out.push_back({s.start, s.end});
  return out;
}

double unix_of(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

json faults_json(const RecentActivity* activity, const std::vector<FaultEvent>& faults, double from,
                 double now) {
  json out = json::array();
  for (const FaultEvent& event : faults) {
    // On the intervals' clock where there is one, so that a mark falls in its bar.
    const double time =
        activity != nullptr ? activity->unix_seconds(event.time) : unix_of(event.wall_time);
    if (time < from || time > now + 1.0) continue;
    json entry = {{"time", time},
                  {"kind", to_string(event.kind)},
                  {"engine", event.engine},
                  {"fatal", event.fatal},
                  {"detail", event.detail}};
    if (event.onset && activity != nullptr) entry["onset"] = activity->unix_seconds(*event.onset);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

std::optional<HttpResponse> dashboard_asset(std::string_view path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  const std::string_view name = path == "/" ? "index.html" : path.substr(1);
  for (const EmbeddedFile& file : dashboard_files()) {
    if (file.name != name) continue;
    HttpResponse response{
        .head = {.status = 200, .content_type = std::string(content_type_of(name)), .headers = {}},
        .body = std::string(file.bytes)};
    // The files change only with the binary: a reload after an upgrade must fetch them.
    response.head.headers.emplace_back("Cache-Control", "no-cache");
    return response;
  }
  return std::nullopt;
}

std::vector<std::string> model_names(const std::vector<ModelSpec>& specs) {
  std::vector<std::string> names;
  for (const ModelSpec& spec : specs) names.push_back(spec.name);
  return names;
}

HttpResponse timeline_response(const RecentActivity* activity,
                               const std::vector<std::string>& engines,
                               const std::vector<FaultEvent>& faults, std::string_view query) {
  const double seconds = window_seconds(query);
  ActivityWindow window;
  if (activity != nullptr) {
    window = activity->window(seconds, engines);
  } else {
    window.now = unix_of(std::chrono::system_clock::now());
    for (const std::string& name : engines) window.engines.push_back({name, {}});
  }
  json lanes = json::array();
  for (const EngineLane& lane : window.engines) {
    lanes.push_back({{"name", lane.engine}, {"intervals", spans_json(lane.intervals)}});
  }
  const json body = {{"now", window.now},
                     {"seconds", seconds},
                     {"engines", std::move(lanes)},
                     {"overlap", spans_json(window.overlap)},
                     {"stream_overlap", spans_json(window.stream_overlap)},
                     {"faults", faults_json(activity, faults, window.now - seconds, window.now)}};
  return {.head = {.status = 200, .content_type = "application/json", .headers = {}},
          .body = dump(body)};
}

}  // namespace baton
