// WeightFormat: how a model's weight matrices are held for the CPU kernels, chosen at load
// (ModelLoadOptions, `--weights`, the serve config's `weights`):
//   bf16 (default): bf16 tensors read in place from the memory map, f16/f32 widened to f32;
//   f32: every matrix widened to f32 (twice the memory of bf16);
//   q8: every matrix quantized to 8 bits with an f32 scale per group of 32 weights
//       (q8_matrix.h): a decode step reads about half the bytes of bf16.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace baton {

enum class WeightFormat { bf16, f32, q8 };

// The spellings "bf16", "f32", "q8", in that order.
inline constexpr std::string_view kWeightFormatNames[] = {"bf16", "f32", "q8"};

// How a device (the CUDA runner) holds the matrices: bf16, or fp8 (`--weights fp8`: E4M3
// with an f32 scale per row, quantized at upload; model/cuda/fp8_weights.h). With bf16, a
// matrix the host holds in q8 stays q8 on the device (model/cuda/q8_weights.h). The
// embedding stays bf16 (one row read per token), and the output matrix with it when tied.
enum class DevicePrecision { bf16, fp8 };

std::string_view to_string(WeightFormat format);
// The format spelled `text` (exactly, lower case); nullopt otherwise.
std::optional<WeightFormat> parse_weight_format(std::string_view text);

// What `--weights` (and the serve config's `weights`) chooses: the host's format (nullopt:
// as stored) and the device's precision. "fp8" is as stored on the host, fp8 on a device.
struct WeightsChoice {
  std::optional<WeightFormat> host;
  DevicePrecision device = DevicePrecision::bf16;
};
// The spellings `--weights` takes: kWeightFormatNames and "fp8".
inline constexpr std::string_view kWeightsChoiceNames[] = {"bf16", "f32", "q8", "fp8"};
// The choice spelled `text`; nullopt otherwise.
std::optional<WeightsChoice> parse_weights_choice(std::string_view text);

}  // namespace baton
