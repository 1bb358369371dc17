#include "baton/model/cpu/rope.h"

#include <cmath>
#include <numbers>

namespace baton {

std::vector<float> rope_inverse_frequencies(const ModelConfig& config) {
  const int half = static_cast<int>(config.head_dim / 2);
  const RopeScaling& s = config.rope_scaling;
  std::vector<float> inv(half);
  for (int i = 0; i < half; ++i) {
    // As transformers: computed in float32 from the float64 exponent.
    double f = 1.0 / std::pow(config.rope_theta, (2.0 * i) / static_cast<double>(config.head_dim));
    f = static_cast<float>(f);
    if (s.type == "linear") {
      f /= s.factor;
    } else if (s.type == "divisors") {
      f /= s.divisors.at(static_cast<std::size_t>(i));
    } else if (s.type == "llama3") {
      const double old = static_cast<double>(s.original_max_position_embeddings);
      const double low_wavelen = old / s.low_freq_factor;
      const double high_wavelen = old / s.high_freq_factor;
      const double wavelen = 2.0 * std::numbers::pi / f;
      if (wavelen > low_wavelen) {
        f /= s.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth =
            (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
    inv[i] = static_cast<float>(f);
  }
  return inv;
}

void apply_rope(std::span<float> x, int heads, int head_dim, int pos,
                std::span<const float> inverse_frequencies) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const float angle = static_cast<float>(pos) * inverse_frequencies[i];
    const float c = std::cos(angle);
    const float s = std::sin(angle);
    for (int h = 0; h < heads; ++h) {
      float* v = x.data() + static_cast<std::size_t>(h) * head_dim;
      const float a = v[i];
      const float b = v[i + half];
      v[i] = a * c - b * s;
      v[i + half] = b * c + a * s;
    }
  }
}

}  // namespace baton
