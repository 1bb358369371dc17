// Rotary position embedding as Hugging Face's Llama family computes it: inverse
// frequencies theta^(-2i/d), optionally scaled (linear: divided by the factor; llama3:
// long wavelengths divided by the factor, short ones kept, a smooth ramp between), applied
// to each head in the "rotate half" layout (element i pairs with element i + d/2).
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <vector>

#include "baton/model/config/model_config.h"

namespace baton {

// d/2 inverse frequencies for a head of `config.head_dim`.
std::vector<float> rope_inverse_frequencies(const ModelConfig& config);

// Rotates `heads` consecutive vectors of `head_dim` floats in place for position `pos`.
void apply_rope(std::span<float> x, int heads, int head_dim, int pos,
                std::span<const float> inverse_frequencies);

}  // namespace baton
