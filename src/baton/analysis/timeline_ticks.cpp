#include "baton/analysis/timeline_ticks.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>

#include "baton/common/clock.h"

namespace baton::timeline {
namespace {

// The smallest 1, 2 or 5 times a power of ten that is at least `raw`.
double decimal_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

// The smallest round step (seconds, minutes, hours, days) that is at least `raw`.
double round_step(double raw) {
  constexpr double kSteps[] = {1,     2,     5,     10,     15,     20,     30,     60,    120,
                               300,   600,   900,   1200,   1800,   3600,   7200,   10800, 14400,
                               21600, 43200, 86400, 172800, 432000, 604800, 1209600};
  if (raw <= 1) return decimal_step(raw);
  for (const double step : kSteps) {
    if (step >= raw) return step;
  }
  return kSecondsPerDay * decimal_step(raw / kSecondsPerDay);
}

}  // namespace

std::string utc_text(double t, bool with_date, bool with_millis) {
  using namespace std::chrono;
  const auto ms = static_cast<std::int64_t>(std::llround(t * 1000));
  const sys_time<milliseconds> when{milliseconds(ms)};
  const auto day = floor<days>(when);
  const hh_mm_ss<milliseconds> clock(when - day);
  std::string text;
  if (with_date) {
    const year_month_day date(day);
    fmt::format_to(std::back_inserter(text), "{:04}-{:02}-{:02} ", static_cast<int>(date.year()),
                   static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  }
  fmt::format_to(std::back_inserter(text), "{:02}:{:02}:{:02}", clock.hours().count(),
                 clock.minutes().count(), clock.seconds().count());
  if (with_millis) fmt::format_to(std::back_inserter(text), ".{:03}", clock.subseconds().count());
  return text;
}

std::string duration_text(double seconds) {
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1000);
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto s = std::llround(seconds);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{} h {:02} min", s / 3600, s / 60 % 60);
  return fmt::format("{} d {} h", s / 86400, s / 3600 % 24);
}

double tick_step(double span, double most) {
  return round_step(span / std::clamp(std::floor(most), 2.0, 9.0));
}

double segment_step(double span, double pixels, double spacing) {
  if (!(span > 0)) return 0;  // an instant: no round time to tick
  if (pixels >= 2 * spacing) return tick_step(span, pixels / spacing);
  return round_step(span * spacing / std::max(pixels, 1.0));
}

}  // namespace baton::timeline
