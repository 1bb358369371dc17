// The restart backoff of `baton supervise`: Backoff (exponential, capped), and parsing
// durations ("200ms", "5s", "1.5") and INITIAL[:MAX] from the command line.
// Thread-safety: plain values and pure functions, safe from any thread.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace baton {

struct Backoff {
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{60000};

  // The wait before restart number `restart` (1 for the first):
  // initial * 2^(restart - 1), at most max.
  std::chrono::milliseconds before_restart(int restart) const;
};

// "200ms", "5s" or "1.5" (seconds when there is no suffix). Throws std::invalid_argument
// starting with "[supervise]" for anything else, a negative value or more than a day.
std::chrono::milliseconds parse_duration(std::string_view text);
// "INITIAL[:MAX]", each a parse_duration. Without MAX the cap stays at the default 60 s,
// or at INITIAL when that is longer. Throws std::invalid_argument when MAX < INITIAL.
Backoff parse_backoff(std::string_view text);

namespace supervise_detail {

// For the log: whole seconds as "5s", anything else (and zero) as "1500ms".
std::string format_duration(std::chrono::milliseconds d);

}  // namespace supervise_detail
}  // namespace baton
