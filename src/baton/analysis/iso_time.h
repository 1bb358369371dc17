// Times in CSV logs of other servers, as seconds since the Unix epoch. Two forms:
// - Unix seconds, a plain decimal number: 1732950000 or 1732950000.25 (no sign, no
//   exponent, no hex, no nan/inf);
// - ISO-8601 with an explicit offset: 2024-11-30T12:00:00Z, 2024-11-30 12:00:00.123+01:00,
//   2024-11-30T12:00:00-0500. The date and the time are separated by T or a space, the
//   seconds are required and may have a fraction, and the offset is Z or +/-hh:mm or
//   +/-hhmm. A time without an offset is refused: it would depend on the machine's zone.
// The date must exist (leap years included), hours are 0-23, minutes 0-59 and seconds
// 0-60: a leap second 23:59:60 counts as the next day's 00:00:00, as POSIX time does.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace baton {

// The time `text` denotes, in Unix seconds; nullopt when it is neither form above. `text`
// must not carry surrounding whitespace.
std::optional<double> parse_time(std::string_view text);

}  // namespace baton
