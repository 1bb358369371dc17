#include "baton/server/models/served_model.h"

#include <algorithm>
#include <filesystem>

#include "baton/host/make_runner.h"
#include "baton/model/output/pooling.h"
#include "baton/model/runner/kv_block_pool.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

// What the model's cache must hold, in the device's KV numbers (bf16 weights on a GPU).
KvDemand kv_demand(const ModelSpec& spec, const LlamaModel& model, const Device& device,
                   int block_tokens) {
  const ModelConfig& c = model.config();
  const auto trained = static_cast<std::uint64_t>(c.max_position_embeddings);
  const std::uint64_t context =
      spec.context_length > 0 ? std::min<std::uint64_t>(spec.context_length, trained) : trained;
  KvDemand demand;
  demand.model = spec.name;
  demand.weight_bytes = static_cast<std::uint64_t>(model.weight_count()) * 2;
  demand.bytes_per_token =
      KvBlockPool::block_bytes(c, block_tokens, kv_value_bytes(device)) / block_tokens;
  demand.context_tokens = context;
  demand.max_batch = spec.max_batch.value_or(batch_defaults(device.backend()).max_batch);
  return demand;
}

// Sets `batch`'s KV budget from the device's memory when `served`'s spec asks for that,
// and what its start-up line says of it. Returns the sizer's hold (empty when not sized),
// to be kept until the engine has allocated its cache.
std::unique_lock<std::mutex> size_kv(ServedModel& served, const Device& device, KvSizer* sizer,
                                     LlmBatchOptions& batch) {
  const ModelSpec& spec = served.spec;
  served.kv_source = served.kv_how = spec.kv_mode == KvBudgetMode::given ? "given" : "default";
  if (!kv_sized_at_load(spec, device.memory().has_value())) return {};
  if (sizer == nullptr) throw std::logic_error("[load_served_model] a sized cache, no sizer");
  KvSizer::Sized sized = sizer->size(
      [&device] {
        const auto memory = device.memory();
        if (!memory) throw ConfigError("kv_budget_mb \"auto\": the device reports no memory");
        return *memory;
      },
      kv_demand(spec, *served.model, device, batch.block_tokens));
  batch.kv_budget_bytes = sized.size.budget_bytes;
  served.spec.kv_budget_mb = std::max<std::uint64_t>(sized.size.budget_bytes >> 20, 1);
  served.kv_source = "auto";
  served.kv_how = std::move(sized.size.how);
  return std::move(sized.hold);
}

}  // namespace

bool kv_sized_at_load(const ModelSpec& spec, bool device_reports_memory) {
  if (spec.kind != ModelSpec::Kind::chat) return false;
  return spec.kv_mode == KvBudgetMode::sized ||
         (spec.kv_mode == KvBudgetMode::preset && device_reports_memory);
}

std::unique_ptr<ServedModel> load_served_model(
    EngineHost& host, const ModelSpec& spec, int cpu_threads, KvSizer* sizer,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  auto served = std::make_unique<ServedModel>();
  served->spec = spec;
  ModelLoadOptions options;
  options.threads = cpu_threads;
  options.weights = spec.weights;
  options.device_precision = spec.device_precision;
  options.progress = progress;
  served->on_device = host.device().backend() != "cpu";
  // On a device the weights are uploaded, then their host pages released (CudaModel) and,
  // for a chat model, their host copies too (below).
  if (served->on_device) options.use = WeightUse::upload;
  // Opened once: every reader below shares the directory's answer and a GGUF file's map.
  const ModelSource source = ModelSource::open(spec.dir);
  served->model = std::make_unique<LlamaModel>(LlamaModel::load(source, options));
  served->tokenizer = std::make_unique<BpeTokenizer>(BpeTokenizer::from_source(source));
  if (served->chat()) {
    std::optional<ChatFamily> family;
    if (!spec.chat_template.empty()) family = parse_chat_family(spec.chat_template);
    served->input.emplace(source, *served->tokenizer, served->model->config().generation, family);
    served->grammars =
        std::make_unique<OutputGrammars>(*served->tokenizer, end_token_ids(served->model->config()),
                                         served->input->tool_call_format());
    LlmBatchOptions batch;
    batch.kv_budget_bytes = spec.kv_budget_mb << 20;
    const std::unique_lock<std::mutex> sizing = size_kv(*served, host.device(), sizer, batch);
    const BatchDefaults defaults = batch_defaults(host.device().backend());
    batch.max_batch = spec.max_batch.value_or(defaults.max_batch);
    batch.prefill_chunk = spec.prefill_chunk.value_or(defaults.prefill_chunk);
    batch.step_tokens = spec.step_tokens.value_or(defaults.step_tokens);
    batch.queue_limit = spec.queue_limit;
    batch.deterministic = spec.deterministic;
    batch.context_length = spec.context_length;
    served->llm = &host.add_llm_engine(spec.name, *served->model, served->tokenizer.get(), batch);
    // The engine's runner made its device copy: a q8 or converted model would otherwise
    // stay on the host too, never read again.
    if (served->on_device) served->model->release_host_copies();
  } else {
    served->embedding = &host.add_embedding_engine(spec.name, *served->model, read_pooling(source),
                                                   spec.kv_budget_mb << 20);
  }
  host.turn().set_weight(served->engine()->turn_client(), spec.turn_weight);
  served->release = [&host, engine = served->engine(), sizer, name = spec.name,
                     sized = served->kv_source == "auto"] {
    host.remove_engine(*engine);
    if (sized) sizer->release(name);
  };
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

std::vector<TokenId> ServedModel::chat_prompt(std::span<const ChatMessage> messages, ChatEnd end,
                                              const ChatTools& tools) const {
  if (!input || !input->has_chat_template()) {
    throw bad_parameter("messages",
                        "model '" + spec.name +
                            "' has no chat template (its files hold none): send a raw prompt "
                            "to /v1/completions, or give it a chat_template in the server's "
                            "config");
  }
  try {
    return input->chat_prompt(messages, end, tools);
  } catch (const ChatTemplateError& error) {
    // The model's template is broken: the server's fault, not the messages'.
    throw ApiError(500, "model '" + spec.name + "': " + error.what(), "server_error",
                   "chat_template_error");
  } catch (const std::invalid_argument& error) {
    throw bad_parameter("messages", "model '" + spec.name + "': " + error.what());
  }
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
  return estimated_weight_bytes(spec) + (std::uint64_t{spec.kv_budget_mb} << 20);
}

std::uint64_t estimated_weight_bytes(const ModelSpec& spec) {
  std::uint64_t bytes = 0;
  // Without exceptions: a directory that went away estimates as 0, and the
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
