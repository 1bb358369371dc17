// route_label(): the `route` label of an HTTP request in /metrics. It is the matched
// route's template (`/v1/models/{id}/load`), or `other` for a path no route serves, so that
// the number of series stays fixed whatever paths clients send.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace baton {

// The template of the route that serves `path`, or "other".
std::string_view route_label(std::string_view path);

// Whether `path` is one of the fixed routes (for 405 against 404).
bool is_fixed_route(std::string_view path);

}  // namespace baton
