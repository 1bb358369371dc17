#include "baton/analysis/event_classes.h"

#include <array>
#include <cctype>

namespace baton {
namespace {

// The names of FaultKind (watchdog/fault_event.h); a test keeps the two lists equal.
constexpr std::array<std::string_view, 5> kClasses{"hang", "timeout", "submissions_ignored",
                                                   "other", "slowdown"};

bool same_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string_view> event_class(std::string_view text) {
  for (std::string_view name : kClasses) {
    if (same_ignoring_case(text, name)) return name;
  }
  return std::nullopt;
}

std::string known_event_classes() {
  std::string known;
  for (std::size_t i = 0; i < kClasses.size(); ++i) {
    if (i > 0) known += i + 1 == kClasses.size() ? " or " : ", ";
    known += kClasses[i];
  }
  return known;
}

}  // namespace baton
