#include "baton/analysis/iso_time.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace baton {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The length of the run of digits at the start of `text`.
std::size_t digit_run(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_digit(text[n])) ++n;
  return n;
}

// `text` (already checked to be digits[.digits]) as a finite double.
std::optional<double> to_double(std::string_view text) {
  double value = 0.0;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, value, std::chars_format::fixed);
  if (ec != std::errc() || end != last || !std::isfinite(value)) return std::nullopt;
  return value;
}

// digits, or digits.digits; the whole of `text`.
std::optional<double> parse_unix_seconds(std::string_view text) {
  std::size_t end = digit_run(text);
  if (end == 0) return std::nullopt;
  if (end < text.size() && text[end] == '.') {
    const std::size_t fraction = digit_run(text.substr(end + 1));
    if (fraction == 0) return std::nullopt;
    end += 1 + fraction;
  }
  if (end != text.size()) return std::nullopt;
  return to_double(text);
}

// Reads the fields of an ISO-8601 time left to right. A failed read makes every later one
// fail too, so the caller checks ok() once at the end.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == text_.size(); }

  // The next `width` characters, which must all be digits, as a number.
  int number(std::size_t width) {
    if (!ok_ || text_.size() - pos_ < width) return fail();
    int value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const char c = text_[pos_ + i];
      if (!is_digit(c)) return fail();
      value = value * 10 + (c - '0');
    }
    pos_ += width;
    return value;
  }

  // Consumes the next character if it is one of `chars`.
  bool accept(std::string_view chars) {
    if (!ok_ || at_end() || chars.find(text_[pos_]) == std::string_view::npos) return false;
    ++pos_;
    return true;
  }

  void expect(std::string_view chars) {
    if (!accept(chars)) fail();
  }

  // ss or ss.fff (any number of fraction digits).
  double seconds() {
    const std::size_t begin = pos_;
    number(2);
    if (accept(".")) {
      const std::size_t fraction = digit_run(text_.substr(pos_));
      if (fraction == 0) return fail();
      pos_ += fraction;
    }
    if (!ok_) return 0.0;
    const std::optional<double> value = to_double(text_.substr(begin, pos_ - begin));
    return value ? *value : fail();
  }

  // Z, +hh:mm, -hh:mm, +hhmm or -hhmm, as minutes east of UTC.
  int offset_minutes() {
    if (accept("Zz")) return 0;
    const bool east = accept("+");
    if (!east && !accept("-")) return fail();
    const int hours = number(2);
    accept(":");
    const int minutes = number(2);
    if (hours > 23 || minutes > 59) return fail();
    return (east ? 1 : -1) * (hours * 60 + minutes);
  }

 private:
  int fail() {
    ok_ = false;
    return 0;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

struct CivilTime {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  double second = 0.0;
  int offset_minutes = 0;  // east of UTC
};

std::optional<double> to_unix_seconds(const CivilTime& t) {
  using namespace std::chrono;
  const year_month_day date{year{t.year}, month{static_cast<unsigned>(t.month)},
                            day{static_cast<unsigned>(t.day)}};
  if (!date.ok() || t.hour > 23 || t.minute > 59 || t.second >= 61.0) return std::nullopt;
  const std::int64_t days = sys_days(date).time_since_epoch().count();
  const std::int64_t whole =
      days * 86400 + t.hour * 3600 + t.minute * 60 - std::int64_t{t.offset_minutes} * 60;
  return static_cast<double>(whole) + t.second;
}

std::optional<double> parse_iso(std::string_view text) {
  Scanner s(text);
  CivilTime t;
  t.year = s.number(4);
  s.expect("-");
  t.month = s.number(2);
  s.expect("-");
  t.day = s.number(2);
  s.expect("Tt ");
  t.hour = s.number(2);
  s.expect(":");
  t.minute = s.number(2);
  s.expect(":");
  t.second = s.seconds();
  t.offset_minutes = s.offset_minutes();
  if (!s.ok() || !s.at_end()) return std::nullopt;
  return to_unix_seconds(t);
}

}  // namespace

std::optional<double> parse_time(std::string_view text) {
  if (std::optional<double> seconds = parse_unix_seconds(text)) return seconds;
  return parse_iso(text);
}

}  // namespace baton
