#include "baton/ledger/experiment_reader.h"

#include <stdexcept>

#include "baton/ledger/ledger_schema.h"
#include "baton/ledger/sqlite.h"

namespace baton {
namespace {

std::optional<double> maybe_double(const Statement& s, int column) {
  if (s.column_is_null(column)) return std::nullopt;
  return s.column_double(column);
}

std::vector<RecordedBlock> read_blocks(Database& db, std::int64_t experiment) {
  Statement s(db,
              "SELECT b.run_id, b.block, b.arm, b.arm_name, r.start, r.stop, b.switch_ms,"
              " b.exposure_hours FROM experiment_blocks b JOIN runs r ON r.id = b.run_id"
              " WHERE b.experiment_id = ? ORDER BY b.block");
  s.bind(1, experiment);
  std::vector<RecordedBlock> blocks;
  while (s.step()) {
    blocks.push_back({.run_id = s.column_int(0),
                      .block = s.column_int(1),
                      .arm = s.column_int(2),
                      .arm_name = s.column_text(3),
                      .start = s.column_double(4),
                      .stop = maybe_double(s, 5),
                      .switch_ms = s.column_double(6),
                      .exposure_hours = maybe_double(s, 7),
                      .hang_times = {}});
  }
  // A hang belongs to the block it began in (a detection may come in the next one).
  Statement hangs(db, "SELECT time FROM events WHERE class = 'hang' ORDER BY time");
  while (hangs.step()) {
    const double t = hangs.column_double(0);
    for (RecordedBlock& b : blocks)
      if (t >= b.start && (!b.stop || t < *b.stop)) b.hang_times.push_back(t);
  }
  return blocks;
}

}  // namespace

std::vector<RecordedExperiment> read_experiments(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path))
    throw std::invalid_argument("no ledger at " + path.string());
  Database db(path, Database::Mode::read_only);
  if (check_ledger(db, path) < 6) return {};
  Statement s(db,
              "SELECT id, name, start, stop, plan, coalesce(verdict, '') FROM experiments"
              " ORDER BY id");
  std::vector<RecordedExperiment> out;
  while (s.step()) {
    out.push_back({.id = s.column_int(0),
                   .name = s.column_text(1),
                   .start = s.column_double(2),
                   .stop = maybe_double(s, 3),
                   .plan_json = s.column_text(4),
                   .verdict_json = s.column_text(5),
                   .blocks = {}});
  }
  for (RecordedExperiment& e : out) e.blocks = read_blocks(db, e.id);
  return out;
}

}  // namespace baton
