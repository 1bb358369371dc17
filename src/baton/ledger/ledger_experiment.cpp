// The ledger's records of a live experiment (ledger.h: begin_experiment ... end_block).
#include "baton/ledger/ledger.h"

namespace baton {

std::int64_t Ledger::begin_experiment(const std::string& name, double start,
                                      const std::string& plan_json) {
  std::lock_guard lock(db_mu_);
  Statement insert(db_, "INSERT INTO experiments (name, start, plan) VALUES (?, ?, ?)");
  insert.bind(1, name).bind(2, start).bind(3, plan_json).run();
  return db_.last_insert_rowid();
}

void Ledger::end_experiment(std::int64_t experiment_id, double stop,
                            const std::string& verdict_json) {
  std::lock_guard lock(db_mu_);
  Statement update(db_, "UPDATE experiments SET stop = ?, verdict = ? WHERE id = ?");
  update.bind(1, stop).bind(2, verdict_json).bind(3, experiment_id).run();
}

void Ledger::begin_block(const ExperimentBlockRow& row) {
  std::lock_guard lock(db_mu_);
  Statement insert(db_,
                   "INSERT INTO experiment_blocks (run_id, experiment_id, block, arm, arm_name,"
                   " switch_ms) VALUES (?, ?, ?, ?, ?, ?)");
  insert.bind(1, row.run_id).bind(2, row.experiment_id).bind(3, row.block).bind(4, row.arm);
  insert.bind(5, row.arm_name).bind(6, row.switch_ms).run();
}

void Ledger::end_block(std::int64_t run_id, double stop, double exposure_hours) {
  flush();  // the block's rows are in before its run ends
  std::lock_guard lock(db_mu_);
  Statement block(db_, "UPDATE experiment_blocks SET exposure_hours = ? WHERE run_id = ?");
  block.bind(1, exposure_hours).bind(2, run_id).run();
  Statement run(db_, "UPDATE runs SET stop = ?, exit_code = 0 WHERE id = ?");
  run.bind(1, stop).bind(2, run_id).run();
}

}  // namespace baton
