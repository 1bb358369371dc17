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

inline constexpr SamplingLimit kTemperatureLimit{"temperature", 0.0, 2.0};
inline constexpr SamplingLimit kTopPLimit{"top_p", 0.0, 1.0, true};
inline constexpr SamplingLimit kMinPLimit{"min_p", 0.0, 1.0};
inline constexpr SamplingLimit kRepetitionPenaltyLimit{"repetition_penalty", 0.01, 100.0};
inline constexpr SamplingLimit kPresencePenaltyLimit{"presence_penalty", -2.0, 2.0};
inline constexpr SamplingLimit kFrequencyPenaltyLimit{"frequency_penalty", -2.0, 2.0};

}  // namespace baton
