#include "baton/repro/repro_options.h"

#include "baton/engine/make_workload.h"

#include <charconv>
#include <map>
#include <stdexcept>

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

ReproEngine parse_engine(std::string_view spec, std::string_view backend) {
  const auto at = spec.find('@');
  const std::string_view body = spec.substr(0, at);
  ReproEngine engine;
  if (at != std::string_view::npos)
    engine.sm_count_target = parse_sm_target(spec, spec.substr(at + 1));
  const auto colon = body.find(':');
  const std::string_view kind = body.substr(0, colon);
  const bool has_arg = colon != std::string_view::npos;
  if (kind == "prefill") {
    engine.shape = default_shape(backend, BurstKind::prefill,
                                 has_arg ? parse_tokens(spec, body.substr(colon + 1)) : 0);
    return engine;
  }
  if (has_arg) {
    throw std::invalid_argument("--engine " + std::string(spec) + ": only prefill takes :TOKENS");
  }
  if (kind == "decode") {
    engine.shape = default_shape(backend, BurstKind::decode);
  } else if (kind == "embed") {
    engine.shape = default_shape(backend, BurstKind::embed);
  } else {
    throw std::invalid_argument("--engine " + std::string(spec) +
                                ": expected decode, prefill[:TOKENS] or embed, optionally @SMS");
  }
  return engine;
}

}  // namespace

std::vector<ReproEngine> parse_engine_specs(const std::vector<std::string>& specs,
                                            std::string_view backend) {
  if (specs.empty()) throw std::invalid_argument("give at least one --engine");
  std::vector<ReproEngine> engines;
  std::map<BurstKind, int> count;
  for (const std::string& spec : specs) {
    ReproEngine engine = parse_engine(spec, backend);
    const int index = ++count[engine.shape.kind];
    engine.name = std::string(to_string(engine.shape.kind)) + "-" + std::to_string(index);
    engines.push_back(std::move(engine));
  }
  return engines;
}

}  // namespace baton
