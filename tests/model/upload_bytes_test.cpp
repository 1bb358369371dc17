// LlamaModel::upload_bytes(), the device memory the memory budget counts for a model on a
// GPU, against the sizes of its matrices from the config: bf16, 2 bytes a weight; fp8, 1
// byte a weight and a 4-byte scale a row for every matrix but the embedding (2 bytes a
// weight), the output matrix too when it is not tied to the embedding; the vectors
// (norms, RoPE's frequencies) the same in both. q8 on the host: every matrix but the
// embedding as Q8_0's layout, rows of whole groups of 32 bytes and a 4-byte scale a group.
#include <gtest/gtest.h>

#include <cstdint>

#include "baton/model/llama_model.h"
#include "baton/model/writer/model_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

struct Sizes {
  std::uint64_t embedding = 0;               // elements
  std::uint64_t others = 0, other_rows = 0;  // every other matrix: elements, rows
};

Sizes sizes_of(const ModelShape& s) {
  const std::uint64_t h = s.hidden_size, q = s.num_heads * s.head_dim,
                      kv = s.num_kv_heads * s.head_dim, inner = s.intermediate_size;
  Sizes z{.embedding = static_cast<std::uint64_t>(s.vocab_size) * h};
  z.others = s.num_layers * (q * h + 2 * kv * h + h * q + 2 * inner * h + h * inner);
  z.other_rows = s.num_layers * (q + 2 * kv + h + 2 * inner + h);
  if (!s.tie_word_embeddings) {
    z.others += z.embedding;
    z.other_rows += s.vocab_size;
  }
  return z;
}

TEST(UploadBytes, Fp8CountsAByteAWeightAndAScaleARowButForTheEmbedding) {
  for (const bool tied : {false, true}) {
    testing::TempDir dir;
    ModelShape shape = model_shape("tiny", ModelArch::llama);
    shape.tie_word_embeddings = tied;
    write_model(dir.path(), ModelArch::llama, shape, 3);
    const LlamaModel bf16 = LlamaModel::load(dir.path());
    const LlamaModel fp8 = LlamaModel::load(dir.path(), {.device_precision = DevicePrecision::fp8});
    const Sizes z = sizes_of(shape);
    // f32 vectors: two norms a layer, the final norm, RoPE's head_dim / 2 frequencies.
    const std::uint64_t vectors =
        4 * (shape.num_layers * 2 * shape.hidden_size + shape.hidden_size + shape.head_dim / 2);
    EXPECT_EQ(bf16.upload_bytes(), vectors + 2 * (z.embedding + z.others));
    EXPECT_EQ(fp8.upload_bytes(), vectors + 2 * z.embedding + z.others + 4 * z.other_rows)
        << (tied ? "tied" : "untied");
  }
}

// Bytes of a [rows x cols] matrix in Q8_0's layout.
std::uint64_t q8_bytes(std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t groups = (cols + 31) / 32;
  return rows * (groups * 32 + groups * 4);
}

TEST(UploadBytes, Q8CountsWholeGroupsAndAScaleAGroupButForTheEmbedding) {
  testing::TempDir dir;
  ModelShape shape = model_shape("tiny", ModelArch::llama);
  shape.tie_word_embeddings = false;
  write_model(dir.path(), ModelArch::llama, shape, 3);
  const LlamaModel q8 = LlamaModel::load(dir.path(), {.weights = WeightFormat::q8});
  const std::uint64_t h = shape.hidden_size, q = shape.num_heads * shape.head_dim,
                      kv = shape.num_kv_heads * shape.head_dim, inner = shape.intermediate_size;
  const std::uint64_t layer = q8_bytes(q, h) + 2 * q8_bytes(kv, h) + q8_bytes(h, q) +
                              2 * q8_bytes(inner, h) + q8_bytes(h, inner);
  const std::uint64_t vectors =
      4 * (shape.num_layers * 2 * shape.hidden_size + shape.hidden_size + shape.head_dim / 2);
  const std::uint64_t embedding = static_cast<std::uint64_t>(shape.vocab_size) * h;
  EXPECT_EQ(q8.upload_bytes(),
            vectors + 2 * embedding + shape.num_layers * layer + q8_bytes(shape.vocab_size, h));
}

}  // namespace
}  // namespace baton
