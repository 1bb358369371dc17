// The live dashboard of `baton serve`: GET / (index.html), /dashboard.js and
// /dashboard.css, hand-written files of src/baton/server/dashboard/ compiled into the
// binary (cmake/EmbedFiles.cmake), served without an API key; the page itself calls the
// /v1/ routes with the key the user gives it. And GET /v1/timeline?seconds=N: the engines'
// busy intervals of the last N seconds (default 600, at most 3600), where two or more
// were busy at once, where streams overlapped, and the faults, in Unix seconds.
// Thread-safety: pure functions of their arguments; the files are immutable.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/server/config/serve_config.h"
#include "baton/server/http/http_types.h"
#include "baton/server/observe/recent_activity.h"
#include "baton/watchdog/fault_event.h"

namespace baton {

struct EmbeddedFile {
  std::string_view name;  // e.g. "index.html"
  std::string_view bytes;
};

// The dashboard's files (defined by the .cpp that the build generates).
std::span<const EmbeddedFile> dashboard_files();

// The file served at `path` ("/" is index.html), with its content type; none when no
// file is served there.
std::optional<HttpResponse> dashboard_asset(std::string_view path);

constexpr double kTimelineDefaultSeconds = 600.0;
constexpr double kTimelineMaxSeconds = 3600.0;

// GET /v1/timeline: `query` is the request's query string ("seconds=N"; N over the
// maximum is capped, anything but a positive number is a 400). `engines` names the lanes
// in order; `activity` may be null (no lanes filled). A fault is placed where it was
// detected ("time"); a hang also says where it began ("onset").
// The timeline's lanes: every configured model, loaded or not, in the configuration's order.
std::vector<std::string> model_names(const std::vector<ModelSpec>& specs);

HttpResponse timeline_response(const RecentActivity* activity,
                               const std::vector<std::string>& engines,
                               const std::vector<FaultEvent>& faults, std::string_view query);

}  // namespace baton
