#include "baton/analysis/csv_fields.h"

#include <algorithm>

namespace baton {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::string_view kBlanks = " \t";

// Reads the fields of one line from left to right.
class FieldReader {
 public:
  explicit FieldReader(std::string_view line) : line_(line) {}

  // Reads the field at the current position into `out` and moves past its comma.
  // Returns false at the end of the line (after the last field) or on an error.
  bool next(CsvFields& out) {
    if (done_) return false;
    skip_blanks();
    const std::size_t column = out.fields.size() + 1;
    std::string field;
    if (pos_ < line_.size() && line_[pos_] == '"') {
      if (!read_quoted(field, column, out.error)) return false;
    } else {
      field = read_unquoted();
    }
    out.fields.push_back(std::move(field));
    return true;
  }

 private:
  void skip_blanks() {
    while (pos_ < line_.size() && kBlanks.find(line_[pos_]) != std::string_view::npos) ++pos_;
  }

  // Consumes the comma after a field, or notes that the line has ended.
  bool end_field() {
    if (pos_ == line_.size()) {
      done_ = true;
      return true;
    }
    if (line_[pos_] != ',') return false;
    ++pos_;
    return true;
  }

  std::string read_unquoted() {
    const std::size_t comma = std::min(line_.find(',', pos_), line_.size());
    std::string field(trim_blanks(line_.substr(pos_, comma - pos_)));
    pos_ = comma;
    end_field();
    return field;
  }

  bool read_quoted(std::string& field, std::size_t column, std::optional<std::string>& error) {
    ++pos_;  // the opening quote
    for (;;) {
      const std::size_t quote = line_.find('"', pos_);
      if (quote == std::string_view::npos) {
        return fail(error, "unterminated quote in field " + std::to_string(column));
      }
      field.append(line_.substr(pos_, quote - pos_));
      pos_ = quote + 1;
      if (pos_ == line_.size() || line_[pos_] != '"') break;
      field.push_back('"');  // a doubled quote
      ++pos_;
    }
    skip_blanks();
    if (end_field()) return true;
    return fail(error,
                "unexpected text after the closing quote of field " + std::to_string(column));
  }

  bool fail(std::optional<std::string>& error, std::string message) {
    error = std::move(message);
    done_ = true;
    return false;
  }

  std::string_view line_;
  std::size_t pos_ = 0;
  bool done_ = false;
};

}  // namespace

std::string_view trim_blanks(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(kBlanks);
  return text.substr(first, last - first + 1);
}

CsvLines::CsvLines(std::string_view text) : rest_(text) {
  if (rest_.starts_with(kBom)) rest_.remove_prefix(kBom.size());
}

std::optional<CsvLine> CsvLines::next() {
  while (!rest_.empty()) {
    const std::size_t newline = std::min(rest_.find('\n'), rest_.size());
    std::string_view text = rest_.substr(0, newline);
    rest_.remove_prefix(std::min(newline + 1, rest_.size()));
    ++number_;
    if (text.ends_with('\r')) text.remove_suffix(1);
    if (!trim_blanks(text).empty()) return CsvLine{.number = number_, .text = text};
  }
  return std::nullopt;
}

CsvFields split_csv_fields(std::string_view line) {
  CsvFields out;
  FieldReader reader(line);
  while (reader.next(out)) {
  }
  return out;
}

}  // namespace baton
