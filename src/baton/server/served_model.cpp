#include "baton/server/served_model.h"

#include <filesystem>

#include "baton/model/pooling.h"

namespace baton {

std::unique_ptr<ServedModel> load_served_model(
    EngineHost& host, const ModelSpec& spec, int cpu_threads,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  auto served = std::make_unique<ServedModel>();
  served->spec = spec;
  ModelLoadOptions options;
  options.threads = cpu_threads;
  options.weights = spec.weights;
  options.progress = progress;
  served->model = std::make_unique<LlamaModel>(LlamaModel::load(spec.dir, options));
  served->tokenizer = std::make_unique<BpeTokenizer>(BpeTokenizer::from_directory(spec.dir));
  if (served->chat()) {
    std::optional<ChatFamily> family;
    if (!spec.chat_template.empty()) family = parse_chat_family(spec.chat_template);
    served->input.emplace(spec.dir, *served->tokenizer, served->model->config().generation,
                          family);
    LlmBatchOptions batch;
    batch.kv_budget_bytes = spec.kv_budget_mb << 20;
    batch.max_batch = spec.max_batch;
    batch.prefill_chunk = spec.prefill_chunk;
    batch.turn_priority = spec.priority;
    batch.queue_limit = spec.queue_limit;
    batch.context_length = spec.context_length;
    served->llm = &host.add_llm_engine(spec.name, *served->model, served->tokenizer.get(), batch);
  } else {
    served->embedding = &host.add_embedding_engine(spec.name, *served->model,
                                                   read_pooling(spec.dir), spec.kv_budget_mb << 20);
  }
  served->release = [&host, engine = served->engine()] { host.remove_engine(*engine); };
  return served;
}

EngineTotals& EngineTotals::operator+=(const EngineTotals& other) {
  requests_done += other.requests_done;
  requests_failed += other.requests_failed;
  prompt_tokens += other.prompt_tokens;
  cached_prompt_tokens += other.cached_prompt_tokens;
  generated_tokens += other.generated_tokens;
  inputs += other.inputs;
  return *this;
}

EngineTotals ServedModel::totals() const {
  EngineTotals t;
  if (llm != nullptr) {
    const LlmEngineStats stats = llm->stats();
    t.requests_done = stats.requests_done;
    t.requests_failed = stats.requests_failed;
    t.prompt_tokens = stats.counters.prefill_tokens;
    t.cached_prompt_tokens = stats.counters.cached_prompt_tokens;
    t.generated_tokens = stats.counters.decode_tokens;
  } else if (embedding != nullptr) {
    const EmbeddingEngineStats stats = embedding->stats();
    t.requests_done = stats.requests_done;
    t.requests_failed = stats.requests_failed;
    t.inputs = stats.inputs;
  }
  return t;
}

std::uint64_t estimated_memory_bytes(const ModelSpec& spec) {
  std::uint64_t bytes = std::uint64_t{spec.kv_budget_mb} << 20;
  // Without exceptions: a directory that went away estimates as its KV budget, and the
  // load then fails with the reason.
  std::error_code ec;
  for (std::filesystem::directory_iterator it(spec.dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() != ".safetensors") continue;
    std::error_code size_error;
    const std::uintmax_t size = it->file_size(size_error);
    if (!size_error) bytes += size;
  }
  return bytes;
}

}  // namespace baton
