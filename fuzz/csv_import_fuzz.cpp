// libFuzzer target: arbitrary bytes into parse_busy_csv, parse_hangs_csv and parse_time.
// A CsvImportError is the expected answer to bad input. Any other exception (it reaches
// libFuzzer and aborts), a crash, a sanitizer report, or a result that breaks the
// importers' contract (checked below) is a bug.
// Thread-safety: libFuzzer calls the entry point from one thread.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "baton/analysis/csv_import.h"
#include "baton/analysis/event_classes.h"

namespace {

constexpr std::string_view kFile = "fuzz.csv";

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "csv_import_fuzz: broken contract: %s\n", what);
  std::abort();
}

void check_error(const baton::CsvImportError& error) {
  const auto& problems = error.problems();
  require(!problems.empty(), "an error lists at least one problem");
  require(problems.size() <= baton::CsvImportError::kMaxListed, "at most kMaxListed problems");
  for (const std::string& problem : problems) {
    require(problem.starts_with(std::string(kFile) + ":"), "a problem starts with the file");
  }
}

void check_time(std::string_view text) {
  if (const std::optional<double> time = baton::parse_time(text)) {
    require(std::isfinite(*time), "parse_time gives a finite time");
  }
}

void check_busy(std::string_view text) {
  try {
    for (const baton::BusyInterval& interval : baton::parse_busy_csv(text, kFile)) {
      require(!interval.engine.empty(), "a busy interval has an engine");
      require(std::isfinite(interval.start) && std::isfinite(interval.end), "finite times");
      require(interval.end >= interval.start, "end >= start");
      require(interval.context_tokens.value_or(0) >= 0, "context_tokens >= 0");
      require(interval.kind.empty(), "CSV intervals have no kind");
    }
  } catch (const baton::CsvImportError& error) {
    check_error(error);
  }
}

void check_hangs(std::string_view text) {
  try {
    for (const baton::HangRecord& hang : baton::parse_hangs_csv(text, kFile)) {
      require(std::isfinite(hang.time), "a finite hang time");
      require(baton::event_class(hang.error_class) == hang.error_class,
              "a hang's class is one of the ledger's, as the ledger names it");
    }
  } catch (const baton::CsvImportError& error) {
    check_error(error);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_time(text);
  check_busy(text);
  check_hangs(text);
  return 0;
}
