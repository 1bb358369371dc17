#include "baton/model/weights/weight_format.h"

namespace baton {

std::string_view to_string(WeightFormat format) {
  switch (format) {
    case WeightFormat::f32:
      return "f32";
    case WeightFormat::q8:
      return "q8";
    case WeightFormat::bf16:
      break;
  }
  return "bf16";
}

std::optional<WeightFormat> parse_weight_format(std::string_view text) {
  for (const WeightFormat f : {WeightFormat::bf16, WeightFormat::f32, WeightFormat::q8}) {
    if (text == to_string(f)) return f;
  }
  return std::nullopt;
}

std::optional<WeightsChoice> parse_weights_choice(std::string_view text) {
  if (text == "fp8") return WeightsChoice{.device = DevicePrecision::fp8};
  if (const auto format = parse_weight_format(text)) return WeightsChoice{.host = format};
  return std::nullopt;
}

}  // namespace baton
