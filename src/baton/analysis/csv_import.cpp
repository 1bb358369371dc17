#include "baton/analysis/csv_import.h"

#include <charconv>
#include <utility>

#include "baton/analysis/csv_fields.h"
#include "baton/analysis/event_classes.h"
#include "baton/common/read_file.h"

namespace baton {
namespace {

std::string join_problems(const std::vector<std::string>& problems, std::size_t omitted) {
  std::string text;
  for (const std::string& problem : problems) {
    if (!text.empty()) text += '\n';
    text += problem;
  }
  if (omitted > 0) text += "\n... and " + std::to_string(omitted) + " more";
  return text;
}

// `text` in quotes for a message, shortened when long.
std::string shown(std::string_view text) {
  constexpr std::size_t kMax = 60;
  if (text.size() <= kMax) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMax)) + "...'";
}

// Collects `file:line: problem` messages, up to CsvImportError::kMaxListed of them.
class Problems {
 public:
  explicit Problems(std::string_view file) : file_(file) {}

  void add(std::size_t line, std::string_view problem) {
    if (listed_.size() == CsvImportError::kMaxListed) {
      ++omitted_;
      return;
    }
    listed_.push_back(file_ + ":" + std::to_string(line) + ": " + std::string(problem));
  }

  void throw_if_any() {
    if (!listed_.empty()) throw CsvImportError(std::move(listed_), omitted_);
  }

 private:
  std::string file_;
  std::vector<std::string> listed_;
  std::size_t omitted_ = 0;
};

// The columns a file must have, in order, and the one it may add at the end.
struct Layout {
  std::vector<std::string_view> required;
  std::string_view optional;

  std::string describe() const {
    std::string text;
    for (std::string_view column : required)
      text += (text.empty() ? "" : ",") + std::string(column);
    return text + "[," + std::string(optional) + "]";
  }
};

// The number of columns the header declares, or 0 when it is not the layout's.
std::size_t header_columns(const CsvLine& line, const Layout& layout) {
  const CsvFields header = split_csv_fields(line.text);
  const std::vector<std::string>& names = header.fields;
  const std::size_t n = layout.required.size();
  if (header.error || (names.size() != n && names.size() != n + 1)) return 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (names[i] != layout.required[i]) return 0;
  }
  if (names.size() == n + 1 && names[n] != layout.optional) return 0;
  return names.size();
}

std::string column_count_problem(std::size_t required, std::size_t declared, std::size_t found) {
  const std::string expected = declared == required
                                   ? std::to_string(required)
                                   : std::to_string(required) + " or " + std::to_string(declared);
  return "expected " + expected + " columns, found " + std::to_string(found);
}

// Checks the header, then calls `on_row(fields, line_number)` for every row that splits
// into the right number of columns. The fields always include the optional column (empty
// when the row or the header leaves it out).
template <typename OnRow>
void for_each_row(std::string_view text, const Layout& layout, Problems& problems, OnRow&& on_row) {
  CsvLines lines(text);
  const std::optional<CsvLine> header = lines.next();
  if (!header) {
    problems.add(1, "empty file, want the header " + layout.describe());
    return;
  }
  const std::size_t declared = header_columns(*header, layout);
  if (declared == 0) {
    problems.add(header->number, "header must be " + layout.describe() + ", found " +
                                     shown(trim_blanks(header->text)));
    return;
  }
  const std::size_t required = layout.required.size();
  while (const std::optional<CsvLine> line = lines.next()) {
    CsvFields row = split_csv_fields(line->text);
    if (row.error) {
      problems.add(line->number, *row.error);
    } else if (row.fields.size() < required || row.fields.size() > declared) {
      problems.add(line->number, column_count_problem(required, declared, row.fields.size()));
    } else {
      row.fields.resize(required + 1);
      on_row(row.fields, line->number);
    }
  }
}

std::optional<double> time_cell(const std::string& cell, std::string_view what, std::size_t line,
                                Problems& problems) {
  if (std::optional<double> time = parse_time(cell)) return time;
  const bool needs_offset = parse_time(cell + "Z").has_value();
  problems.add(line, "bad " + std::string(what) + " " + shown(cell) +
                         (needs_offset ? " (an ISO-8601 time needs an offset: Z or +hh:mm)"
                                       : " (want Unix seconds or ISO-8601 with an offset)"));
  return std::nullopt;
}

// Empty: unknown (nullopt). Returns false after reporting a bad cell.
bool context_cell(const std::string& cell, std::optional<std::int64_t>& out, std::size_t line,
                  Problems& problems) {
  if (cell.empty()) return true;
  std::int64_t value = -1;
  const char* last = cell.data() + cell.size();
  const auto [end, ec] = std::from_chars(cell.data(), last, value);
  // from_chars takes a minus sign; a count has none, not even on zero.
  if (cell.front() != '-' && ec == std::errc() && end == last) {
    out = value;
    return true;
  }
  problems.add(line, "context_tokens " + shown(cell) + " is not a non-negative integer");
  return false;
}

const Layout kBusyLayout{.required = {"engine", "start", "end"}, .optional = "context_tokens"};
const Layout kHangsLayout{.required = {"time", "engine"}, .optional = "class"};

std::optional<BusyInterval> busy_row(const std::vector<std::string>& cells, std::size_t line,
                                     Problems& problems) {
  const bool has_engine = !cells[0].empty();
  if (!has_engine) problems.add(line, "empty engine");
  const std::optional<double> start = time_cell(cells[1], "start time", line, problems);
  const std::optional<double> end = time_cell(cells[2], "end time", line, problems);
  std::optional<std::int64_t> context_tokens;
  const bool context_ok = context_cell(cells[3], context_tokens, line, problems);
  const bool ordered = !start || !end || *end >= *start;
  if (!ordered) problems.add(line, "end (" + cells[2] + ") is before start (" + cells[1] + ")");
  if (!has_engine || !start || !end || !context_ok || !ordered) return std::nullopt;
  return BusyInterval{
      .engine = cells[0], .start = *start, .end = *end, .context_tokens = context_tokens};
}

std::optional<HangRecord> hang_row(const std::vector<std::string>& cells, std::size_t line,
                                   Problems& problems) {
  const std::optional<double> time = time_cell(cells[0], "time", line, problems);
  if (!time) return std::nullopt;
  HangRecord hang{.time = *time, .engine = cells[1]};
  if (cells[2].empty()) return hang;
  const std::optional<std::string_view> error_class = event_class(cells[2]);
  if (!error_class) {
    problems.add(line,
                 "unknown class " + shown(cells[2]) + " (want " + known_event_classes() + ")");
    return std::nullopt;
  }
  hang.error_class = *error_class;
  return hang;
}

template <typename Record, typename ParseRow>
std::vector<Record> parse_csv(std::string_view text, std::string_view file_name,
                              const Layout& layout, ParseRow parse_row) {
  Problems problems(file_name);
  std::vector<Record> records;
  for_each_row(text, layout, problems,
               [&](const std::vector<std::string>& cells, std::size_t line) {
                 if (std::optional<Record> record = parse_row(cells, line, problems)) {
                   records.push_back(std::move(*record));
                 }
               });
  problems.throw_if_any();
  return records;
}

// A file that cannot be read is the user's input too: a CsvImportError (exit code 2).
std::string read_text(const std::filesystem::path& path) {
  try {
    return read_file(path);
  } catch (const FileReadError& error) {
    throw CsvImportError({error.what()}, 0);
  }
}

}  // namespace

CsvImportError::CsvImportError(std::vector<std::string> problems, std::size_t omitted)
    : std::invalid_argument(join_problems(problems, omitted)),
      problems_(std::move(problems)),
      omitted_(omitted) {}

std::vector<BusyInterval> parse_busy_csv(std::string_view text, std::string_view file_name) {
  return parse_csv<BusyInterval>(text, file_name, kBusyLayout, busy_row);
}

std::vector<HangRecord> parse_hangs_csv(std::string_view text, std::string_view file_name) {
  return parse_csv<HangRecord>(text, file_name, kHangsLayout, hang_row);
}

std::vector<BusyInterval> read_busy_csv(const std::filesystem::path& path) {
  return parse_busy_csv(read_text(path), path.string());
}

std::vector<HangRecord> read_hangs_csv(const std::filesystem::path& path) {
  return parse_hangs_csv(read_text(path), path.string());
}

}  // namespace baton
