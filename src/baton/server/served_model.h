// ServedModel: one model the server hosts, as loaded: its configuration, weights,
// tokenizer, input processing (chat models) and the engine that runs it.
// Thread-safety: immutable once the server serves; the engines are thread-safe.
#pragma once

#include <memory>
#include <optional>

#include "baton/engine/embedding_engine.h"
#include "baton/engine/input_processor.h"
#include "baton/engine/llm_engine.h"
#include "baton/model/bpe_tokenizer.h"
#include "baton/model/llama_model.h"
#include "baton/server/serve_config.h"

namespace baton {

struct ServedModel {
  ModelSpec spec;
  std::unique_ptr<LlamaModel> model;
  std::unique_ptr<BpeTokenizer> tokenizer;
  std::optional<InputProcessor> input;  // chat models
  LlmEngine* llm = nullptr;             // chat models
  EmbeddingEngine* embedding = nullptr;  // embedding models

  bool chat() const { return spec.kind == ModelSpec::Kind::chat; }
  std::string_view kind_name() const { return chat() ? "chat" : "embedding"; }
};

}  // namespace baton
