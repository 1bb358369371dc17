#include "baton/cli/embed_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "baton/common/exit_codes.h"
#include "baton/host/engine_host.h"
#include "baton/host/make_device.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"

namespace baton {

CLI::App* EmbedCommand::attach(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "embed", "Embed texts with a model directory through baton's embedding engine");
  cmd->add_option("--model", model_dir, "Hugging Face model directory")->required();
  cmd->add_option("--backend", backend, "cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--text", texts, "A text to embed (repeat for more; one call embeds all)")
      ->required();
  cmd->add_option("--pooling", pooling,
                  "mean, last or cls (default: the model's sentence-transformers export, else "
                  "last); normalised as the export says (default: yes)")
      ->check(CLI::IsMember({"mean", "last", "cls"}));
  cmd->add_flag("--json", json, "Print one JSON object shaped like OpenAI's embeddings response");
  cmd->add_option("--threads", threads, "CPU threads (default: $BATON_CPU_THREADS or all)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--weights", weights, "Weights at load: bf16, f32 or q8 (8 bits); default: as stored (q8 for a GGUF file of "
                  "Q8_0 weights, else bf16)")
      ->check(CLI::IsMember({"bf16", "f32", "q8"}));
  return cmd;
}

int EmbedCommand::run() {
  const ModelSource source = ModelSource::open(model_dir);
  const LlamaModel model =
      LlamaModel::load(source, {.weights = parse_weight_format(weights), .threads = threads});
  const BpeTokenizer tokenizer = BpeTokenizer::from_source(source);
  Pooling how = read_pooling(source);
  if (!pooling.empty()) how.mode = parse_pooling_mode(pooling);
  EmbeddingRequest request{.id = 1, .inputs = {}};
  for (const std::string& text : texts) {
    request.inputs.push_back(tokenizer.encode_with_special(text));
    if (request.inputs.back().empty()) {
      throw std::invalid_argument("--text '" + text + "' has no tokens");
    }
  }
  EngineHost host(make_device(backend), TurnOptions{});
  EmbeddingEngine& engine = host.add_embedding_engine("embed", model, how);
  const EmbeddingResult result = engine.embed(std::move(request)).get();
  if (json) {
    nlohmann::json data = nlohmann::json::array();
    for (std::size_t i = 0; i < result.embeddings.size(); ++i) {
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", result.embeddings[i]}});
    }
    const nlohmann::json out = {
        {"object", "list"},
        {"model", model_dir},
        {"pooling", std::string(to_string(how.mode))},
        {"normalized", how.normalize},
        {"data", std::move(data)},
        {"usage",
         {{"prompt_tokens", result.prompt_tokens}, {"total_tokens", result.prompt_tokens}}}};
    std::cout << out.dump() << "\n";
  } else {
    std::cerr << model_dir << ": " << engine.dimensions() << " dimensions, pooling "
              << to_string(how.mode) << (how.normalize ? ", normalised" : "")
              << (how.from_sentence_transformers ? " (modules.json)" : "") << "\n";
    for (const std::vector<float>& embedding : result.embeddings) {
      std::cout << fmt::format("{}", fmt::join(embedding, " ")) << "\n";
    }
  }
  return kExitOk;
}

}  // namespace baton
