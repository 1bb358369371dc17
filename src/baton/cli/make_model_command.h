// The `baton make-model` verb: a small Hugging Face-style model directory (llama, qwen2 or
// qwen3) with random weights and a working tokenizer, for tests and demos
// (model/model_writer.h).
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace baton {

struct MakeModelCommand {
  std::string arch;
  std::string out;
  bool force = false;
  std::string shape = "tiny";
  std::optional<std::int64_t> hidden;
  std::optional<std::int64_t> layers;
  std::optional<std::int64_t> heads;
  std::optional<std::int64_t> kv_heads;
  std::optional<std::int64_t> intermediate;
  std::optional<std::int64_t> vocab;
  std::string dtype;  // empty: the shape's
  std::uint64_t seed = 0;

  CLI::App* attach(CLI::App& app);
  // Throws std::invalid_argument for a usage error; returns the exit code.
  int run();
};

}  // namespace baton
