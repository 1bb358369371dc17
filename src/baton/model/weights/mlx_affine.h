// MLX's affine-quantized weights, as mlx-lm writes 2- to 8-bit models: tensor NAME.weight
// holds each row's codes as one little-endian bit stream in uint32 words, and
// NAME.scales and NAME.biases (in the model's float type) one scale and one bias per
// group of group_size values along the row: w = scale * code + bias. The bits (2, 3, 4,
// 5, 6, 8) and the group size (32, 64, 128) follow from the three shapes (config.json's
// "quantization" says the same and is not read); a weight without .scales is not quantized.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/model/weights/model_weights.h"

namespace baton {

// Whether weight `name` ("...weight") is stored so: its .scales and .biases are there.
bool is_mlx_affine(const ModelWeights& weights, const std::string& name);

// Its [rows x cols] values, row-major; ModelFileError naming the tensor for shapes or types
// that do not fit, and for scales or biases holding an infinity or a NaN. The three
// tensors' pages of the memory map are released once read (release_mapped_pages).
std::vector<float> dequantize_mlx_affine(const ModelWeights& weights, const std::string& name,
                                         std::int64_t rows, std::int64_t cols);

}  // namespace baton
