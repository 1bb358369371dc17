// The command-line flags of `baton serve`, merged over the config file (--config): a flag
// given explicitly wins over the file, models from --model/--embedding are appended to the
// file's, and the result is validated before any model is loaded (server/serve_config.h).
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "baton/server/config/serve_config.h"

namespace baton {

// Where CLI11 writes the flags. A value here counts only when its flag was given (CLI11's
// count()), so the defaults below never override the file.
struct ServeFlags {
  std::string config;                   // --config FILE
  std::vector<std::string> models;      // --model NAME=DIR
  std::vector<std::string> embeddings;  // --embedding NAME=DIR
  std::vector<std::string> turn_weights;  // --turn-weight NAME=WEIGHT
  ServeConfig values;                   // host, port, ..., faults, fault_engine
  std::string policy = "concurrent";
  std::string quantum = "op";
  std::string turn_scope = "process";
  std::string prefill_share = "weights";  // weights|auto|FLOAT
  std::string kv_budget;              // --kv-budget-mb: MB|auto; empty: the backend's default
  // --max-batch, --prefill-chunk, --step-tokens; -1: the backend's default (batch_defaults)
  int max_batch = -1;
  int prefill_chunk = -1;
  int step_tokens = -1;
  std::string ledger;
  bool no_gpu_sampling = false;  // --no-gpu-sampling
  ModelSpec model;      // --max-batch, --kv-budget-mb, ...: every --model's settings
  std::string weights;  // --weights: every --model's and --embedding's; "": as stored
};

// Adds every flag to `cmd` (the `serve` subcommand): --config FILE, --model NAME=DIR and
// --embedding NAME=DIR (repeatable), the server's and the turn's settings, --ledger PATH or
// --no-ledger, --no-gpu-sampling, --api-key (default $BATON_API_KEY), --threads (cpu_threads), the
// settings of every --model (--max-batch, --kv-budget-mb, --context-length, --prefill-chunk,
// --step-tokens, --queue-limit), --weights for every --model and --embedding, and the fault flags
// as repro has them plus --inject-fault-engine NAME.
void add_serve_options(CLI::App& cmd, ServeFlags& flags);

// The file (if --config) with the flags given on top (a flag given explicitly wins), models
// from --model/--embedding appended (a name already taken is an error), the ledger
// defaulted to default_ledger_path() unless --no-ledger, the API key from $BATON_API_KEY
// when neither the file nor --api-key sets one, the turn's spin from the environment; then
// validate(). Throws ConfigError.
ServeConfig resolve(const ServeFlags& flags, const CLI::App& cmd);

}  // namespace baton
