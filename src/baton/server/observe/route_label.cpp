#include "baton/server/observe/route_label.h"

#include <algorithm>
#include <array>

namespace baton {
namespace {

constexpr std::array<std::string_view, 18> kFixedRoutes = {"/v1/chat/completions",
                                                           "/v1/completions",
                                                           "/v1/embeddings",
                                                           "/v1/models",
                                                           "/health",
                                                           "/metrics",
                                                           "/v1/engines",
                                                           "/v1/messages",
                                                           "/v1/responses",
                                                           "/tokenize",
                                                           "/detokenize",
                                                           "/v1/timeline",
                                                           "/v1/admin/policy",
                                                           "/v1/admin/reload",
                                                           "/v1/experiment",
                                                           "/",
                                                           "/dashboard.js",
                                                           "/dashboard.css"};

}  // namespace

bool is_fixed_route(std::string_view path) {
  return std::find(kFixedRoutes.begin(), kFixedRoutes.end(), path) != kFixedRoutes.end();
}

std::string_view route_label(std::string_view path) {
  if (is_fixed_route(path)) return path;
  constexpr std::string_view models = "/v1/models/";
  if (!path.starts_with(models)) return "other";
  const std::string_view rest = path.substr(models.size());
  const std::size_t slash = rest.find('/');
  if (rest.empty() || slash == 0) return "other";
  if (slash == std::string_view::npos) return "/v1/models/{id}";
  const std::string_view action = rest.substr(slash + 1);
  if (action == "load") return "/v1/models/{id}/load";
  if (action == "unload") return "/v1/models/{id}/unload";
  return "other";
}

}  // namespace baton
