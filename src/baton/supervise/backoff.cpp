#include "baton/supervise/backoff.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

namespace baton {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLongestDuration = std::chrono::hours(24);

// Parses `text` into `out`; returns what is wrong with it, or nullptr.
const char* duration_problem(std::string_view text, milliseconds& out) {
  std::string_view number = text;
  double unit_ms = 1000.0;
  if (number.ends_with("ms")) {
    number.remove_suffix(2);
    unit_ms = 1.0;
  } else if (number.ends_with("s")) {
    number.remove_suffix(1);
  }
  double value = 0.0;
  const char* end = number.data() + number.size();
  const auto [stop, ec] = std::from_chars(number.data(), end, value);
  if (number.empty() || ec != std::errc() || stop != end || !std::isfinite(value)) {
    return "expected seconds, or a number with the suffix ms or s (200ms, 5s, 1.5)";
  }
  if (value < 0.0) return "must not be negative";
  const double ms = value * unit_ms;
  if (ms > static_cast<double>(kLongestDuration.count())) return "must not exceed a day";
  out = milliseconds(std::llround(ms));
  return nullptr;
}

}  // namespace

milliseconds Backoff::before_restart(int restart) const {
  milliseconds wait = initial;
  for (int i = 1; i < restart && wait < max && wait.count() > 0; ++i) wait *= 2;
  return std::min(wait, max);
}

milliseconds parse_duration(std::string_view text) {
  milliseconds value{};
  if (const char* problem = duration_problem(text, value)) {
    throw std::invalid_argument("[supervise] duration '" + std::string(text) + "': " + problem);
  }
  return value;
}

Backoff parse_backoff(std::string_view text) {
  const auto fail = [text](const std::string& why) {
    return std::invalid_argument("[supervise] --backoff '" + std::string(text) + "': " + why +
                                 "; expected INITIAL[:MAX], such as 200ms:5s");
  };
  const std::size_t colon = text.find(':');
  Backoff backoff;
  if (const char* problem = duration_problem(text.substr(0, colon), backoff.initial)) {
    throw fail(std::string("INITIAL: ") + problem);
  }
  if (colon == std::string_view::npos) {
    backoff.max = std::max(backoff.max, backoff.initial);
    return backoff;
  }
  if (const char* problem = duration_problem(text.substr(colon + 1), backoff.max)) {
    throw fail(std::string("MAX: ") + problem);
  }
  if (backoff.max < backoff.initial) throw fail("MAX is shorter than INITIAL");
  return backoff;
}

namespace supervise_detail {

std::string format_duration(milliseconds d) {
  if (d.count() != 0 && d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

}  // namespace supervise_detail
}  // namespace baton
