#include "baton/cli/make_model_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "baton/cli/progress_bar.h"
#include "baton/common/exit_codes.h"
#include "baton/common/human_bytes.h"
#include "baton/common/stop_signals.h"
#include "baton/model/writer/model_writer.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxBytesWithoutForce = std::uint64_t{4} << 30;

std::string dtype_name(const std::string& flag) {
  if (flag == "bf16" || flag == "bfloat16") return "bfloat16";
  if (flag == "f32" || flag == "float32") return "float32";
  throw std::invalid_argument("--dtype must be bf16 or f32, not '" + flag + "'");
}

// Refuses to mix a new model into files that are already there, unless told to.
void check_out(const fs::path& out, bool force) {
  std::error_code error;
  const fs::file_status status = fs::status(out, error);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) {
    throw std::invalid_argument("--out " + out.string() + " exists and is not a directory");
  }
  if (!force && !fs::is_empty(out)) {
    throw std::invalid_argument("--out " + out.string() +
                                " is not empty; --force replaces the model files in it");
  }
}

// Refuses a write past kMaxBytesWithoutForce unless forced, and any write the disk cannot
// hold: the space is checked before a byte is written.
void check_size(const fs::path& out, std::uint64_t bytes, bool force) {
  if (bytes > kMaxBytesWithoutForce && !force) {
    throw std::invalid_argument("this model is " + human_bytes(bytes) + ", over the " +
                                human_bytes(kMaxBytesWithoutForce) +
                                " that make-model writes without --force");
  }
  fs::path existing = fs::absolute(out);
  while (!fs::exists(existing) && existing.has_parent_path() &&
         existing != existing.parent_path()) {
    existing = existing.parent_path();
  }
  std::error_code error;
  const fs::space_info space = fs::space(existing, error);
  if (!error && space.available < bytes + (bytes >> 6)) {
    throw std::invalid_argument("this model is " + human_bytes(bytes) + "; " + existing.string() +
                                " has " + human_bytes(space.available) + " free");
  }
}

}  // namespace

CLI::App* MakeModelCommand::attach(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "make-model", "Write a small model directory with random weights and a tokenizer");
  cmd->add_option("--arch", arch, "llama, qwen2 or qwen3")->required();
  cmd->add_option("--out", out, "The model directory to write")->required();
  cmd->add_flag("--force", force,
                "Write into a non-empty --out (replacing the model's files), or more than 4 GiB");
  cmd->add_option("--shape", shape, "tiny (default), qwen2.5-0.5b or llama-3-8b (the real shapes)");
  cmd->add_option("--hidden", hidden, "Hidden size (head_dim becomes hidden / heads)");
  cmd->add_option("--layers", layers, "Number of layers");
  cmd->add_option("--heads", heads, "Attention heads (head_dim becomes hidden / heads)");
  cmd->add_option("--kv-heads", kv_heads, "Key/value heads (must divide --heads)");
  cmd->add_option("--intermediate", intermediate, "MLP intermediate size");
  cmd->add_option("--vocab", vocab, "vocab_size (at least the tokenizer's size)");
  cmd->add_option("--dtype", dtype, "bf16 (default) or f32");
  cmd->add_option("--seed", seed, "Seed of the weights (default 0)");
  return cmd;
}

int MakeModelCommand::run() {
  const ModelArch model_arch = writable_arch(arch);
  ModelShape s = model_shape(shape, model_arch);
  if (hidden) s.hidden_size = *hidden;
  if (layers) s.num_layers = *layers;
  if (heads) s.num_heads = *heads;
  if (kv_heads) s.num_kv_heads = *kv_heads;
  if (intermediate) s.intermediate_size = *intermediate;
  if (vocab) s.vocab_size = *vocab;
  if (!dtype.empty()) s.dtype = dtype_name(dtype);
  if (hidden || heads) {
    if (s.num_heads <= 0 || s.hidden_size % s.num_heads != 0) {
      throw std::invalid_argument("--heads must divide --hidden");
    }
    s.head_dim = s.hidden_size / s.num_heads;
  }
  check_shape(model_arch, s);
  check_out(out, force);
  const std::uint64_t bytes = weight_bytes(model_arch, s);
  check_size(out, bytes, force);
  std::cerr << "writing " << out << ": " << parameter_count(model_arch, s) << " parameters, "
            << human_bytes(bytes) << "\n";
  const StopSignals signals;  // Ctrl-C or SIGTERM: the partial directory is removed
  ProgressBar bar("model.safetensors", bytes, ProgressBar::Unit::bytes);
  const WrittenModel written =
      write_model(out, model_arch, s, seed, [&](std::uint64_t done, std::uint64_t) {
        signals.throw_if_stopped();
        bar.update(done);
      });
  std::cout << "wrote " << written.directory.string() << " (" << arch << ", hidden "
            << s.hidden_size << ", " << s.num_layers << " layers, " << s.num_heads << " heads / "
            << s.num_kv_heads << " kv heads, head_dim " << s.head_dim << ", vocab " << s.vocab_size
            << " with " << written.tokenizer_size << " tokenizer tokens, " << s.dtype << ", seed "
            << seed << ")\n";
  for (const std::string& name : written.files) {
    std::cout << "  " << name << "  " << fs::file_size(written.directory / name) << " bytes\n";
  }
  std::cout << "parameters: " << written.parameters << "; bytes: " << written.bytes << " ("
            << human_bytes(written.bytes) << ")\n";
  return kExitOk;
}

}  // namespace baton
