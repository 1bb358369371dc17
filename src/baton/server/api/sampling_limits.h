// The ranges of the OpenAI API's sampling fields, shared by the request parser
// (openai_request.cpp) and the configuration's per-model defaults (serve_config.cpp), so
// that a default in the file is never a value a request could not send.
// Thread-safety: constants.
#pragma once

#include <string_view>

namespace baton {

struct SamplingLimit {
  std::string_view name;
  double low;
  double high;
  bool above_low = false;  // the low end itself is excluded (top_p must be > 0)
};

inline constexpr SamplingLimit kTemperatureLimit{.name = "temperature", .low = 0.0, .high = 2.0};
inline constexpr SamplingLimit kTopPLimit{
    .name = "top_p", .low = 0.0, .high = 1.0, .above_low = true};
inline constexpr SamplingLimit kMinPLimit{.name = "min_p", .low = 0.0, .high = 1.0};
inline constexpr SamplingLimit kRepetitionPenaltyLimit{
    .name = "repetition_penalty", .low = 0.01, .high = 100.0};
inline constexpr SamplingLimit kPresencePenaltyLimit{
    .name = "presence_penalty", .low = -2.0, .high = 2.0};
inline constexpr SamplingLimit kFrequencyPenaltyLimit{
    .name = "frequency_penalty", .low = -2.0, .high = 2.0};

}  // namespace baton
