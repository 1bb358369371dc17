#include "baton/repro/repro_options.h"

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

SyntheticShape parse_shape(std::string_view spec) {
  const auto colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const bool has_arg = colon != std::string_view::npos;
  if (kind == "prefill") {
    return SyntheticShape::prefill_default(has_arg ? parse_tokens(spec, spec.substr(colon + 1))
                                                   : 0);
  }
  if (has_arg) {
    throw std::invalid_argument("--engine " + std::string(spec) + ": only prefill takes :TOKENS");
  }
  if (kind == "decode") return SyntheticShape::decode_default();
  if (kind == "embed") return SyntheticShape::embed_default();
  throw std::invalid_argument("--engine " + std::string(spec) +
                              ": expected decode, prefill[:TOKENS] or embed");
}

}  // namespace

std::vector<ReproEngine> parse_engine_specs(const std::vector<std::string>& specs) {
  if (specs.empty()) throw std::invalid_argument("give at least one --engine");
  std::vector<ReproEngine> engines;
  std::map<BurstKind, int> count;
  for (const std::string& spec : specs) {
    SyntheticShape shape = parse_shape(spec);
    const int index = ++count[shape.kind];
    engines.push_back({std::string(to_string(shape.kind)) + "-" + std::to_string(index), shape});
  }
  return engines;
}

}  // namespace baton
