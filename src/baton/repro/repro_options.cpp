#include "baton/repro/repro_options.h"

#include <charconv>
#include <map>
#include <stdexcept>

#include "baton/host/make_workload.h"

namespace baton {
namespace {

std::size_t parse_tokens(std::string_view spec, std::string_view text) {
  std::size_t tokens = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), tokens);
  if (ec != std::errc() || end != text.data() + text.size() || tokens == 0 || tokens > 65536) {
    throw std::invalid_argument("--engine " + std::string(spec) +
                                ": TOKENS must be an integer in 1..65536");
  }
  return tokens;
}

int parse_sm_target(std::string_view spec, std::string_view text) {
  int sms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), sms);
  if (ec != std::errc() || end != text.data() + text.size() || sms < 1 || sms > 4096) {
    throw std::invalid_argument("--engine " + std::string(spec) +
                                ": @SMS must be an integer in 1..4096");
  }
  return sms;
}

std::size_t parse_ops(std::string_view spec, std::string_view text) {
  std::size_t ops = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ops);
  if (ec != std::errc() || end != text.data() + text.size() || ops < 1 || ops > 64) {
    throw std::invalid_argument("--engine " + std::string(spec) +
                                ": /OPS must be an integer in 1..64 that divides the layer");
  }
  return ops;
}

SyntheticShape parse_kind(std::string_view spec, std::string_view body, std::string_view backend) {
  const auto colon = body.find(':');
  const std::string_view kind = body.substr(0, colon);
  const bool has_arg = colon != std::string_view::npos;
  if (kind == "prefill") {
    return default_shape(backend, BurstKind::prefill,
                         has_arg ? parse_tokens(spec, body.substr(colon + 1)) : 0);
  }
  if (has_arg) {
    throw std::invalid_argument("--engine " + std::string(spec) + ": only prefill takes :TOKENS");
  }
  if (kind == "decode") return default_shape(backend, BurstKind::decode);
  if (kind == "embed") return default_shape(backend, BurstKind::embed);
  throw std::invalid_argument("--engine " + std::string(spec) +
                              ": expected decode, prefill[:TOKENS] or embed, then optionally "
                              "/OPS and @SMS, or llm:DIR[:PROMPT_TOKENS] or embedding:DIR");
}

// llm:DIR[:PROMPT_TOKENS] (a trailing :DIGITS is the prompt length; DIR may hold ':'),
// or embedding:DIR.
ReproEngine parse_model(std::string_view spec) {
  const bool llm = spec.starts_with("llm:");
  const std::string kind = llm ? "llm" : "embedding";
  ReproEngine engine;
  engine.model = llm ? ReproEngine::Model::llm : ReproEngine::Model::embedding;
  engine.shape.kind = llm ? BurstKind::decode : BurstKind::embed;
  std::string_view dir = spec.substr(kind.size() + 1);
  engine.prompt_tokens = 128;
  if (const auto colon = dir.rfind(':'); llm && colon != std::string_view::npos) {
    const std::string_view tail = dir.substr(colon + 1);
    if (!tail.empty() && tail.find_first_not_of("0123456789") == std::string_view::npos) {
      engine.prompt_tokens = parse_tokens(spec, tail);
      dir = dir.substr(0, colon);
    }
  }
  if (dir.empty()) {
    throw std::invalid_argument("--engine " + std::string(spec) + ": " + kind +
                                ": needs a model directory");
  }
  engine.model_dir = std::string(dir);
  return engine;
}

// attend[:KEYS], KEYS in 1..4194304 (the H200's default is 229376).
ReproEngine parse_attend(std::string_view spec, std::string_view backend) {
  std::size_t keys = 0;
  if (spec.size() > 6) {
    const std::string_view text = spec.substr(7);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), keys);
    if (spec[6] != ':' || ec != std::errc() || end != text.data() + text.size() || keys == 0 ||
        keys > (std::size_t{1} << 22)) {
      throw std::invalid_argument("--engine " + std::string(spec) +
                                  ": attend[:KEYS] takes KEYS as an integer in 1..4194304");
    }
  }
  ReproEngine engine;
  engine.shape.kind = BurstKind::decode;
  engine.attention = default_attention_shape(backend, keys);
  return engine;
}

ReproEngine parse_engine(std::string_view spec, std::string_view backend) {
  if (const auto plus = spec.rfind("+weight="); plus != std::string_view::npos) {
    const std::string_view text = spec.substr(plus + 8);
    double weight = 0.0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), weight);
    if (ec != std::errc() || end != text.data() + text.size() || weight_problem(weight)) {
      throw std::invalid_argument("--engine " + std::string(spec) + ": +weight=W takes W as a " +
                                  "number in 0.01..100");
    }
    ReproEngine engine = parse_engine(spec.substr(0, plus), backend);
    engine.turn_weight = weight;
    return engine;
  }
  if (spec.find("+priority=") != std::string_view::npos) {
    throw std::invalid_argument("--engine " + std::string(spec) +
                                ": +priority=N was replaced by +weight=W, the engine's share of "
                                "the GPU beside the others (3 beside 1 gets 3/4)");
  }
  if (spec.ends_with("+idle")) {
    ReproEngine engine = parse_engine(spec.substr(0, spec.size() - 5), backend);
    engine.idle = true;
    return engine;
  }
  if (spec.starts_with("llm:") || spec.starts_with("embedding:")) return parse_model(spec);
  if (spec == "attend" || spec.starts_with("attend:")) return parse_attend(spec, backend);
  const auto at = spec.find('@');
  std::string_view body = spec.substr(0, at);
  ReproEngine engine;
  if (at != std::string_view::npos) {
    engine.sm_count_target = parse_sm_target(spec, spec.substr(at + 1));
  }
  std::size_t ops = 0;
  if (const auto slash = body.find('/'); slash != std::string_view::npos) {
    ops = parse_ops(spec, body.substr(slash + 1));
    body = body.substr(0, slash);
  }
  engine.shape = parse_kind(spec, body, backend);
  if (ops != 0) {
    if (engine.shape.n % ops != 0) parse_ops(spec, "");  // throws the same message
    engine.shape.ops_per_layer = ops;
  }
  return engine;
}

}  // namespace

std::vector<ReproEngine> parse_engine_specs(const std::vector<std::string>& specs,
                                            std::string_view backend) {
  if (specs.empty()) throw std::invalid_argument("give at least one --engine");
  std::vector<ReproEngine> engines;
  std::map<std::string, int> count;
  for (const std::string& spec : specs) {
    ReproEngine engine = parse_engine(spec, backend);
    engine.spec = spec;
    const std::string kind = engine.llm()         ? "llm"
                             : engine.embedding() ? "embedding"
                             : engine.attention   ? "attend"
                                                  : std::string(to_string(engine.shape.kind));
    engine.name = kind + "-" + std::to_string(++count[kind]);
    engines.push_back(std::move(engine));
  }
  return engines;
}

}  // namespace baton
