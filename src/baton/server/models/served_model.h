// ServedModel: one model the server has loaded: its configuration, weights, tokenizer,
// input processing (chat models) and the engine that runs it. Destroying it takes the
// engine out of the host (`release`), before the weights it reads go.
// Thread-safety: immutable once loaded; the engines are thread-safe. ModelRegistry
// decides when one is destroyed (never while a request holds it). load_served_model() may
// run on any thread (the host's seats are thread-safe).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "baton/engine/embedding/embedding_engine.h"
#include "baton/engine/llm/input_processor.h"
#include "baton/engine/llm/llm_engine.h"
#include "baton/engine/output/output_grammars.h"
#include "baton/host/engine_host.h"
#include "baton/model/llama_model.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/server/config/serve_config.h"
#include "baton/server/models/kv_sizing.h"

namespace baton {

// The cumulative counters of a model's engine, which /v1/engines reports per seat: the
// registry adds those of every engine the model had before (one per load) to the current
// one's, so that an unload and a load do not start them again at 0.
struct EngineTotals {
  std::uint64_t requests_done = 0;
  std::uint64_t requests_failed = 0;
  std::uint64_t prompt_tokens = 0;         // chat: prompt tokens computed
  std::uint64_t cached_prompt_tokens = 0;  // chat: reused from the prefix cache
  std::uint64_t generated_tokens = 0;      // chat
  std::uint64_t inputs = 0;                // embedding: texts embedded

  EngineTotals& operator+=(const EngineTotals& other);
};

struct ServedModel {
  ModelSpec spec;
  std::unique_ptr<LlamaModel> model;
  std::unique_ptr<BpeTokenizer> tokenizer;
  std::optional<InputProcessor> input;   // chat models
  std::unique_ptr<OutputGrammars> grammars;  // chat models: structured outputs, tool calls
  LlmEngine* llm = nullptr;              // chat models
  EmbeddingEngine* embedding = nullptr;  // embedding models
  std::function<void()> release;         // takes the engine out of its host
  std::string kv_source;                 // chat models: given, default or auto (kv_sizing.h)
  std::string kv_how;                    // that, and for auto the figures ("auto: 0.9 of ...")
  bool on_device = false;                // runs on a GPU (weights uploaded), not the CPU

  ServedModel() = default;
  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;
  ~ServedModel() {
    if (release) release();
  }

  bool chat() const { return spec.kind == ModelSpec::Kind::chat; }
  std::string_view kind_name() const { return baton::kind_name(spec.kind); }
  HostedEngine* engine() const {
    return llm != nullptr ? static_cast<HostedEngine*>(llm) : embedding;
  }
  // The conversation as `input` renders it. ApiError 400 ("messages") for one the template
  // refuses, or when the model has no chat template: the client's request cannot be
  // served by this model, and the files' path stays on the server.
  std::vector<TokenId> chat_prompt(std::span<const ChatMessage> messages, ChatEnd end,
                                   const ChatTools& tools = {}) const;
  // Its engine's counters now (thread-safe: the engines' stats are).
  EngineTotals totals() const;
  // Weights and the KV budget: what the model holds while loaded.
  std::uint64_t memory_bytes() const {
    return (model ? model->weight_bytes() : 0) + (std::uint64_t{spec.kv_budget_mb} << 20);
  }
  // Where it holds them: host memory (the weights left on the host; on the CPU, the KV cache
  // too) and device memory (on a GPU, the uploaded weights and the KV cache).
  std::uint64_t host_memory_bytes() const {
    return (model ? model->host_bytes() : 0) + (on_device ? 0 : kv_bytes());
  }
  std::uint64_t device_memory_bytes() const {
    return on_device ? (model ? model->upload_bytes() : 0) + kv_bytes() : 0;
  }
  std::uint64_t kv_bytes() const { return std::uint64_t{spec.kv_budget_mb} << 20; }
};

// Loads `spec`'s files (ModelFileError and the like for bad ones) and hosts its engine on
// the host's seat of `spec.name` (reserved before). `cpu_threads`: the CPU kernels'.
// A chat model whose KV cache is sized from the device's memory (kv_sizing.h) is sized by
// `sizer` (required then; ConfigError when the device reports no memory).
std::unique_ptr<ServedModel> load_served_model(
    EngineHost& host, const ModelSpec& spec, int cpu_threads, KvSizer* sizer = nullptr,
    const std::function<void(std::uint64_t done, std::uint64_t total)>& progress = {});

// Whether `spec`'s KV cache is sized from the device's memory at load: "auto", or not
// given on a device that reports its memory (a GPU).
bool kv_sized_at_load(const ModelSpec& spec, bool device_reports_memory);

// What `spec` will hold once loaded, known before loading: its weights as stored (bf16
// stays bf16, f32 stays f32; an over-estimate for q8, about half of bf16) and its KV
// budget.
std::uint64_t estimated_memory_bytes(const ModelSpec& spec);
// The bytes of its .safetensors files: its weights as stored.
std::uint64_t estimated_weight_bytes(const ModelSpec& spec);

}  // namespace baton
