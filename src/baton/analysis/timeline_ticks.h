// The timeline's time labels and tick steps (timeline_svg): UTC clock text, durations,
// and round steps (1-2-5, then seconds, minutes, hours and days) for a span.
// Thread-safety: pure functions.
#pragma once

#include <string>

namespace baton::timeline {

// "HH:MM:SS" in UTC, with "YYYY-MM-DD " in front when `with_date`, ".mmm" after when
// `with_millis`.
std::string utc_text(double t, bool with_date, bool with_millis);
// "250 ms", "1.5 s", "3 min 05 s", "2 h 10 min", "3 d 4 h".
std::string duration_text(double seconds);
// A round step that cuts `span` into at most `most` (clamped to 2..9) parts.
double tick_step(double span, double most);
// The tick step of a segment `pixels` wide: a tick per `spacing` pixels at most, so a
// segment too narrow for two gets one or none; 0 for an instant.
double segment_step(double span, double pixels, double spacing);

}  // namespace baton::timeline
