// The `baton embed` verb: embeddings of some texts from a Hugging Face model directory on
// the CPU, through the same embedding engine (shared executor, default stream, GPU turn)
// a server runs. Pooling comes from the model's sentence-transformers export, or
// --pooling, or the default (the last token, normalised).
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace baton {

struct EmbedCommand {
  std::string model_dir;
  std::string backend = "cpu";
  std::vector<std::string> texts;
  std::string pooling;  // empty: the model's
  bool json = false;
  int threads = 0;
  std::string weights;  // --weights: bf16, f32 or q8 (weight_matrix.h); "": as stored

  CLI::App* attach(CLI::App& app);
  int run();
};

}  // namespace baton
