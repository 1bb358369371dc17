// Lines and fields of the small CSV files that `baton analyze` imports: a UTF-8 BOM is
// dropped, LF and CRLF line endings are both accepted, blank lines are skipped, and fields
// use RFC-4180 quoting on one line (a quoted field may hold commas and doubled quotes, but
// not a line break). Spaces and tabs around a field are not part of it.
// Thread-safety: CsvLines is a value for one thread; split_csv_fields is a pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

struct CsvLine {
  std::size_t number = 0;  // 1-based, counting blank lines too
  std::string_view text;   // without the line ending; never blank
};

// The non-blank lines of a CSV text, in order. The text must outlive this object.
class CsvLines {
 public:
  explicit CsvLines(std::string_view text);
  // The next non-blank line, or nullopt at the end of the text.
  std::optional<CsvLine> next();

 private:
  std::string_view rest_;
  std::size_t number_ = 0;
};

struct CsvFields {
  std::vector<std::string> fields;
  std::optional<std::string> error;  // why the line could not be split; fields then partial
};

// Splits one line (no line ending) into its fields, unquoted and trimmed.
CsvFields split_csv_fields(std::string_view line);

// `text` without the spaces and tabs around it.
std::string_view trim_blanks(std::string_view text);

}  // namespace baton
