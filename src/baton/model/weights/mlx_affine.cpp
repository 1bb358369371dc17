#include "baton/model/weights/mlx_affine.h"

#include <cstring>

#include "baton/model/files/mapped_file.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/weights/finite_check.h"

namespace baton {
namespace {

// "a.b.weight" -> "a.b." (the stem its companions share); "" for another name.
std::string stem_of(const std::string& name) {
  constexpr std::string_view suffix = "weight";
  if (!name.ends_with(suffix)) return "";
  return name.substr(0, name.size() - suffix.size());
}

[[noreturn]] void fail(const TensorView& t, const std::string& problem) {
  throw ModelFileError(t.file, "tensor '" + t.name + "' (MLX affine): " + problem);
}

// The scales or biases of a weight: a NaN or an infinity among them would make a group of
// the weight one, so it is refused naming the tensor.
std::vector<float> finite_floats(const TensorView& t) {
  std::vector<float> values = to_float(t);
  if (const auto bad = first_nonfinite(values)) {
    fail(t, "holds an infinity or a NaN (element " + std::to_string(*bad) + ")");
  }
  return values;
}

}  // namespace

bool is_mlx_affine(const ModelWeights& weights, const std::string& name) {
  const std::string stem = stem_of(name);
  return !stem.empty() && weights.find(stem + "scales") != nullptr &&
         weights.find(stem + "biases") != nullptr;
}

std::vector<float> dequantize_mlx_affine(const ModelWeights& weights, const std::string& name,
                                         std::int64_t rows, std::int64_t cols) {
  const std::string stem = stem_of(name);
  const TensorView& codes = weights.at(name);
  const TensorView& scales = weights.at(stem + "scales");
  const TensorView& biases = weights.at(stem + "biases");
  if (codes.dtype != DType::u32) fail(codes, "codes must be U32");
  if (codes.shape.size() != 2 || codes.shape[0] != rows || scales.shape.size() != 2 ||
      scales.shape != biases.shape || scales.shape[0] != rows || scales.shape[1] == 0 ||
      cols % scales.shape[1] != 0 || (codes.shape[1] * 32) % cols != 0) {
    fail(codes, "shapes do not fit a [" + std::to_string(rows) + " x " + std::to_string(cols) +
                    "] weight with its scales and biases");
  }
  const std::int64_t group = cols / scales.shape[1];
  const std::int64_t bits = codes.shape[1] * 32 / cols;
  if (!(bits >= 2 && bits <= 6) && bits != 8) fail(codes, std::to_string(bits) + " bits");
  if (group != 32 && group != 64 && group != 128) {
    fail(codes, "groups of " + std::to_string(group) + " (32, 64 or 128)");
  }
  const std::vector<float> scale = finite_floats(scales);
  const std::vector<float> bias = finite_floats(biases);
  const auto words = static_cast<std::size_t>(codes.shape[1]);
  std::vector<std::uint32_t> row_words(words + 1, 0);  // one spare word: a code may straddle
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::memcpy(row_words.data(), codes.bytes.data() + r * words * 4, words * 4);
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::uint64_t bit = static_cast<std::uint64_t>(c * bits);
      const std::uint64_t pair =
          row_words[bit / 32] | (std::uint64_t{row_words[bit / 32 + 1]} << 32);
      const auto code = static_cast<float>((pair >> (bit % 32)) & mask);
      const std::size_t g = static_cast<std::size_t>(r * scales.shape[1] + c / group);
      out[static_cast<std::size_t>(r * cols + c)] = scale[g] * code + bias[g];
    }
  }
  for (const TensorView* t : {&codes, &scales, &biases}) release_mapped_pages(t->bytes);
  return out;
}

}  // namespace baton
