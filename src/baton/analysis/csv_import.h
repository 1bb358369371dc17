// Busy intervals and hang records from the CSV logs of another server, for `baton analyze`.
//   busy.csv:  header engine,start,end[,context_tokens]; engine must not be empty, end >= start,
//              context_tokens empty (unknown) or a non-negative integer.
//   hangs.csv: header time,engine[,class]; engine may be empty (an unattributed hang), class
//              is "hang" when the column or the cell is empty, else one of the ledger's
//              event classes in any case (event_classes.h), kept as the ledger names it.
// When the header has the optional column, a row may leave it out. Times are Unix seconds
// or ISO-8601 with an offset (iso_time.h). Lines and fields follow csv_fields.h: BOM, CRLF,
// blank lines, RFC-4180 quotes on one line.
// All or nothing: every bad row is reported, as `file:line: problem`, in one
// CsvImportError, and nothing is returned. A file with only a header gives no rows; an
// empty file is an error.
// Thread-safety: pure functions; the read_* functions only read their file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "baton/analysis/exposure_input.h"
#include "baton/analysis/iso_time.h"

namespace baton {

// A CSV file that cannot be imported. It derives from std::invalid_argument: the file is
// the user's input, so the CLI exits with 2 (usage).
class CsvImportError : public std::invalid_argument {
 public:
  // At most this many problems are listed; the rest are only counted.
  static constexpr std::size_t kMaxListed = 20;

  // `problems` are the listed messages, `omitted` the number left out. what() joins the
  // problems with newlines and ends with "... and N more" when some were left out.
  CsvImportError(std::vector<std::string> problems, std::size_t omitted);

  const std::vector<std::string>& problems() const { return problems_; }
  std::size_t omitted() const { return omitted_; }

 private:
  std::vector<std::string> problems_;
  std::size_t omitted_ = 0;
};

// Parse the text of a file; `file_name` starts every message. Throw CsvImportError.
std::vector<BusyInterval> parse_busy_csv(std::string_view text, std::string_view file_name);
std::vector<HangRecord> parse_hangs_csv(std::string_view text, std::string_view file_name);

// Read the file and parse it with its path as the file name. A file that cannot be read is
// a CsvImportError that names the path.
std::vector<BusyInterval> read_busy_csv(const std::filesystem::path& path);
std::vector<HangRecord> read_hangs_csv(const std::filesystem::path& path);

}  // namespace baton
