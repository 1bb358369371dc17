#include "baton/cli/generate_command.h"

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "baton/cli/finite_range.h"
#include "baton/cli/progress_bar.h"
#include "baton/common/clock.h"
#include "baton/common/exit_codes.h"
#include "baton/common/human_bytes.h"
#include "baton/engine/llm/input_processor.h"
#include "baton/host/engine_host.h"
#include "baton/host/make_device.h"
#include "baton/model/chat/chat_template.h"

namespace baton {
namespace {

double per_second(std::size_t count, double ms) { return ms > 0 ? count * 1000.0 / ms : 0.0; }

// Tokens per second of the decode steps; none when the only token came from the prefill.
nlohmann::json decode_rate(const GenerationResult& r) {
  if (r.tokens.size() < 2) return nullptr;
  return per_second(r.tokens.size() - 1, r.decode_ms);
}

// Waits for the result, showing on a terminal how far the prefill, then the decode, got
// (the engine's counters; this request is the only one).
GenerationResult wait_with_progress(std::future<GenerationResult> result, const LlmEngine& engine,
                                    std::uint64_t prompt_tokens, std::uint64_t max_tokens) {
  std::optional<ProgressBar> bar;
  bool decoding = false;
  while (result.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    const LlmBatchCounters c = engine.stats().counters;
    const std::uint64_t prefilled = c.prefill_tokens + c.cached_prompt_tokens;
    if (!bar) bar.emplace("prefill", prompt_tokens, ProgressBar::Unit::tokens);
    if (!decoding && prefilled >= prompt_tokens) {
      decoding = true;
      bar.emplace("decode", max_tokens, ProgressBar::Unit::tokens);
    }
    bar->update(decoding ? c.decode_tokens + 1 : prefilled);
  }
  return result.get();
}

void print_json(const GenerationResult& r, const std::string& template_name, double load_ms) {
  nlohmann::json out = {
      {"text", r.text},
      {"tokens", r.tokens},
      {"logprobs", r.logprobs},
      {"finish_reason", to_string(r.finish)},
      {"chat_template", template_name},
      {"usage",
       {{"prompt_tokens", r.prompt_tokens},
        {"completion_tokens", r.tokens.size()},
        {"cached_prompt_tokens", r.cached_prompt_tokens}}},
      {"timings",
       {{"load_ms", load_ms},
        {"queued_ms", r.queued_ms},
        {"admission_wait_ms", r.admission_wait_ms},
        {"prefill_ms", r.prefill_ms},
        {"decode_ms", r.decode_ms},
        {"prefill_tokens_per_s",
         per_second(static_cast<std::size_t>(r.prompt_tokens - r.cached_prompt_tokens),
                    r.prefill_ms)},
        {"decode_tokens_per_s", decode_rate(r)}}}};
  // A completion may end inside a UTF-8 character: replace, never fail to print.
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void print_text(const GenerationResult& r) {
  std::cout << r.text << "\n";
  std::cerr << "prompt " << r.prompt_tokens << " tokens (" << r.cached_prompt_tokens
            << " cached), prefill " << r.prefill_ms << " ms; " << r.tokens.size() << " tokens, ";
  if (r.tokens.size() < 2) {
    std::cerr << "no decode step (the first token comes from the prefill)";
  } else {
    std::cerr << "decode " << r.decode_ms << " ms (" << decode_rate(r).get<double>()
              << " tokens/s)";
  }
  std::cerr << "; finish " << to_string(r.finish) << "\n";
}

}  // namespace

CLI::App* GenerateCommand::attach(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("generate", "One completion from a model directory");
  cmd->add_option("--model", model_dir, "Hugging Face model directory")->required();
  cmd->add_option("--backend", backend, "cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--prompt", prompt, "The user's message (or the whole text with --raw)")
      ->required();
  cmd->add_option("--system", system, "A system message before the prompt");
  cmd->add_flag("--raw", raw, "Send the prompt as it is, without the chat template");
  cmd->add_option("--chat-template", chat_template,
                  "Use this template family instead of the model's: chatml, llama3, mistral");
  cmd->add_option("--max-tokens", max_tokens,
                  "Generated tokens at most (default 128, fewer when the context is shorter; "
                  "given, the prompt and all of them must fit)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--temperature", temperature, "0: greedy")->check(finite_range(0.0, 100.0));
  cmd->add_option("--top-p", top_p)->check(finite_range(0.0, 1.0));
  cmd->add_option("--top-k", top_k)->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--min-p", min_p)->check(finite_range(0.0, 1.0));
  cmd->add_option("--repetition-penalty", repetition_penalty)->check(finite_range(0.01, 100.0));
  cmd->add_option("--seed", seed, "Seed of the sampler");
  cmd->add_option("--stop", stop, "A stop string (repeat for more)");
  cmd->add_flag("--ignore-eos", ignore_eos, "Go on past the model's end tokens");
  cmd->add_flag("--json", json, "Print one JSON object: text, tokens, logprobs, timings");
  CLI::Option* weights_option =
      cmd->add_option("--weights", weights,
                      "Weights at load: bf16 (bf16 read in place, others f32), f32, or q8 (8 "
                      "bits a weight: decode reads about half the bytes of bf16). Default: as "
                      "stored (q8 for a GGUF file of Q8_0 weights, else bf16); fp8 (--backend "
                      "cuda): 8-bit floats on the GPU, a scale per row")
          ->check(CLI::IsMember({"bf16", "f32", "q8", "fp8"}));
  cmd->add_flag("--f32", widen_bf16, "The same as --weights f32")->excludes(weights_option);
  cmd->add_option("--threads", threads, "CPU threads (default: $BATON_CPU_THREADS or all)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--kv-budget-mb", kv_budget_mb, "Memory for the KV cache blocks")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--prefill-chunk", prefill_chunk,
                  "Prompt tokens per engine step (a long prompt takes several)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--watchdog-deadline", watchdog_deadline_s,
                  "Seconds a step's layer may run without progress before it counts as hung "
                  "(on the CPU a layer of a large model's prefill chunk takes seconds)")
      ->capture_default_str()
      ->check(finite_range(0.01, 86400.0));
  return cmd;
}

int GenerateCommand::run() {
  const TimePoint load_start = Clock::now();
  WeightsChoice choice = weights.empty() ? WeightsChoice{} : parse_weights_choice(weights).value();
  if (widen_bf16) choice.host = WeightFormat::f32;
  if (choice.device == DevicePrecision::fp8 && backend != "cuda") {
    throw std::invalid_argument(
        "--weights fp8 holds the weights on a GPU: it needs --backend cuda "
        "(q8 is the CPU's 8-bit format)");
  }
  const ModelSource source = ModelSource::open(model_dir);
  const LlamaModel model = LlamaModel::load(
      source, {.weights = choice.host, .threads = threads, .device_precision = choice.device});
  const double load_ms = millis_between(load_start, Clock::now());
  if (!json) {
    std::cerr << "loaded " << model_dir << " (" << to_string(model.config().arch) << ", "
              << to_string(model.embedding().format()) << " weights, "
              << human_bytes(model.weight_bytes()) << ") in " << load_ms / 1000.0 << " s\n";
  }
  const BpeTokenizer tokenizer = BpeTokenizer::from_source(source);
  std::optional<ChatFamily> family;
  if (!chat_template.empty()) family = parse_chat_family(chat_template);
  const InputProcessor input(source, tokenizer, model.config().generation, family);
  GenerationRequest request{.id = 1};
  std::string template_name = "raw";
  if (raw) {
    request.prompt = input.text_prompt(prompt);
  } else {
    std::vector<ChatMessage> messages;
    if (!system.empty()) messages.push_back({.role = "system", .content = system});
    messages.push_back({.role = "user", .content = prompt});
    request.prompt = input.chat_prompt(messages);
    template_name = input.template_name();
  }
  request.params.sampling = input.sampling({.temperature = temperature,
                                            .top_p = top_p,
                                            .min_p = min_p,
                                            .repetition_penalty = repetition_penalty,
                                            .top_k = top_k,
                                            .seed = seed});
  // As in the API: an explicit max_tokens must fit the context whole (else the error says
  // how many were asked), the default is cut to what is left.
  request.params.max_tokens = max_tokens.value_or(kDefaultMaxTokens);
  request.params.max_tokens_explicit = max_tokens.has_value();
  request.params.stop = stop;
  request.params.ignore_eos = ignore_eos;

  // The same host as every engine of a server: the turn, the watchdog and the slowdown
  // detector see this model's steps too.
  WatchdogOptions watchdog = WatchdogOptions::for_backend(backend);
  watchdog.deadline = std::chrono::milliseconds(std::llround(watchdog_deadline_s * 1000.0));
  EngineHost host(make_device(backend), TurnOptions{}, watchdog);
  LlmBatchOptions options;
  options.kv_budget_bytes = kv_budget_mb << 20;
  options.prefill_chunk = prefill_chunk;
  LlmEngine& engine = host.add_llm_engine("llm", model, &tokenizer, options);
  const auto prompt_tokens = static_cast<std::uint64_t>(request.prompt.size());
  const GenerationResult result =
      wait_with_progress(engine.submit(std::move(request)), engine, prompt_tokens,
                         max_tokens.value_or(kDefaultMaxTokens));
  if (json) {
    print_json(result, template_name, load_ms);
  } else {
    print_text(result);
  }
  return kExitOk;
}

}  // namespace baton
