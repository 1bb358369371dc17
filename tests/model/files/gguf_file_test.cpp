// The GGUF header reader against node-llama-cpp's GGUF parser: tests/data/gguf holds a
// tiny Qwen2 model in q8_0 (written by bench/baton_gguf, which llama.cpp loads) and what
// node-llama-cpp read from it (bench/peers/gguf_reference.mjs). Then hand-made files for
// every way a header can be broken.
#include "baton/model/files/gguf_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "baton/model/config/config_reader.h"
#include "baton/model/files/mapped_file.h"
#include "baton/model/files/model_file_error.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

const std::filesystem::path kGgufDir = std::filesystem::path(BATON_TEST_DATA) / "gguf";

TEST(GgufHeader, MatchesNodeLlamaCppOnAPublishedLayout) {
  const MappedFile file(kGgufDir / "tiny-qwen2-q8_0.gguf");
  const GgufHeader header = read_gguf_header(file.bytes(), "tiny.gguf");
  std::ifstream in(kGgufDir / "tiny-qwen2-q8_0.json");
  const auto reference = nlohmann::ordered_json::parse(in);
  EXPECT_EQ(header.version, reference["version"].get<std::uint32_t>());
  ASSERT_EQ(header.metadata.size(), reference["metadata"].size());
  for (const auto& [key, value] : reference["metadata"].items()) {
    ASSERT_TRUE(header.metadata.contains(key)) << key;
    const auto& ours = header.metadata[key];
    if (value.is_number()) {
      EXPECT_EQ(ours.get<double>(), value.get<double>()) << key;
    } else {
      EXPECT_EQ(ours, value) << key;
    }
  }
  ASSERT_EQ(header.tensors.size(), reference["tensors"].size());
  for (std::size_t i = 0; i < header.tensors.size(); ++i) {
    const GgufTensor& t = header.tensors[i];
    const auto& r = reference["tensors"][i];
    EXPECT_EQ(t.name, r["name"].get<std::string>());
    EXPECT_EQ(t.dims, r["dims"].get<std::vector<std::uint64_t>>()) << t.name;
    EXPECT_EQ(t.type, r["type"].get<std::uint32_t>()) << t.name;
    EXPECT_EQ(t.offset, r["file_offset"].get<std::uint64_t>()) << t.name;
    EXPECT_LE(t.offset + t.bytes, file.size()) << t.name;
  }
  EXPECT_EQ(ggml_type_name(header.tensors[0].type), "q8_0");
  EXPECT_EQ(header.tensors[0].bytes, 64u / 32 * 34 * 640);  // 640 rows of two q8_0 blocks
}

// The config llama.cpp's metadata makes (gguf_config.h) for the Qwen2 file above.
TEST(GgufHeader, AGgufFileGivesTheModelsConfig) {
  const ModelConfig c = read_model_config(kGgufDir / "tiny-qwen2-q8_0.gguf");
  EXPECT_EQ(c.arch, ModelArch::qwen2);
  EXPECT_EQ(c.vocab_size, 640);
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.intermediate_size, 128);
  EXPECT_EQ(c.num_layers, 1);
  EXPECT_EQ(c.num_heads, 4);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.max_position_embeddings, 2048);
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_FLOAT_EQ(static_cast<float>(c.rms_norm_eps), 1e-6f);
  EXPECT_TRUE(c.attention_bias);
  EXPECT_TRUE(c.tie_word_embeddings);  // no output.weight
  EXPECT_EQ(c.bos_token_id, 574);
  EXPECT_EQ(c.eos_token_ids, std::vector<std::int64_t>{576});
}

// A folder of two GGUF files names them and asks for one.
TEST(GgufHeader, AFolderOfSeveralGgufFilesAsksForOne) {
  const testing::TempDir dir;
  for (const char* name : {"tiny-llama-bf16.gguf", "tiny-qwen2-q8_0.gguf"}) {
    std::filesystem::copy_file(kGgufDir / name, dir.path() / name);
  }
  try {
    read_model_config(dir.path());
    ADD_FAILURE() << "no ModelFileError";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 2 GGUF files (tiny-llama-bf16.gguf, "
                                         "tiny-qwen2-q8_0.gguf): name one"),
              std::string::npos)
        << e.what();
  }
}

// A GGUF file byte by byte.
class Bytes {
 public:
  template <typename T>
  Bytes& put(T value) {
    const auto* p = reinterpret_cast<const char*>(&value);
    data_.append(p, sizeof value);
    return *this;
  }
  Bytes& text(std::string_view s) {
    put<std::uint64_t>(s.size());
    data_.append(s);
    return *this;
  }
  Bytes& header(std::uint64_t tensors, std::uint64_t keys, std::uint32_t version = 3) {
    data_.append("GGUF");
    return put(version).put(tensors).put(keys);
  }
  Bytes& pad_to(std::size_t n) {
    data_.resize(n, '\0');
    return *this;
  }
  std::span<const std::byte> span() const {
    return {reinterpret_cast<const std::byte*>(data_.data()), data_.size()};
  }
  std::size_t size() const { return data_.size(); }

 private:
  std::string data_;
};

std::string error_of(const Bytes& bytes) {
  try {
    read_gguf_header(bytes.span(), "m.gguf");
  } catch (const ModelFileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelFileError";
  return {};
}

TEST(GgufHeader, ReadsEveryValueTypeAndPlacesTheData) {
  Bytes b;
  b.header(1, 4).text("a.u8").put<std::uint32_t>(0).put<std::uint8_t>(7);
  b.text("a.list").put<std::uint32_t>(9).put<std::uint32_t>(9).put<std::uint64_t>(2);
  b.put<std::uint32_t>(5).put<std::uint64_t>(1).put<std::int32_t>(-3);  // [[-3], ["x"]]
  b.put<std::uint32_t>(8).put<std::uint64_t>(1).text("x");
  b.text("a.f64").put<std::uint32_t>(12).put<double>(0.25);
  b.text("a.bool").put<std::uint32_t>(7).put<std::uint8_t>(1);
  b.text("w").put<std::uint32_t>(2).put<std::uint64_t>(4).put<std::uint64_t>(2);
  b.put<std::uint32_t>(0).put<std::uint64_t>(0);  // f32 4x2, at the data section's start
  const std::size_t data = (b.size() + 31) / 32 * 32;
  b.pad_to(data + 32);
  const GgufHeader h = read_gguf_header(b.span(), "m.gguf");
  EXPECT_EQ(h.metadata["a.u8"], 7);
  EXPECT_EQ(h.metadata["a.list"], nlohmann::ordered_json::parse(R"([[-3], ["x"]])"));
  EXPECT_EQ(h.metadata["a.f64"], 0.25);
  EXPECT_EQ(h.metadata["a.bool"], true);
  ASSERT_EQ(h.tensors.size(), 1u);
  EXPECT_EQ(h.tensors[0].offset, data);
  EXPECT_EQ(h.tensors[0].bytes, 32u);
}

TEST(GgufHeader, BrokenHeadersAreNamedNeverReadPastTheEnd) {
  EXPECT_NE(error_of(Bytes().put<std::uint32_t>(0)).find("not a GGUF file"), std::string::npos);
  EXPECT_NE(error_of(Bytes().header(0, 0, 1)).find("version 1"), std::string::npos);
  EXPECT_NE(error_of(Bytes().header(0, 1u << 30)).find("larger than the file"), std::string::npos);
  EXPECT_NE(
      error_of(Bytes().header(0, 1).text("k").put<std::uint32_t>(8).put<std::uint64_t>(1u << 30))
          .find("longer than the file"),
      std::string::npos);
  EXPECT_NE(error_of(Bytes()
                         .header(0, 1)
                         .text("k")
                         .put<std::uint32_t>(9)
                         .put<std::uint32_t>(4)
                         .put<std::uint64_t>(std::uint64_t{1} << 60))
                .find("longer than the file"),
            std::string::npos);
  EXPECT_NE(error_of(Bytes().header(0, 1).text("k").put<std::uint32_t>(99)).find("value type 99"),
            std::string::npos);
  EXPECT_NE(error_of(Bytes()
                         .header(0, 2)
                         .text("k")
                         .put<std::uint32_t>(0)
                         .put<std::uint8_t>(1)
                         .text("k")
                         .put<std::uint32_t>(0)
                         .put<std::uint8_t>(1))
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(error_of(Bytes().header(0, 1).text("k").put<std::uint32_t>(4)).find("ends inside"),
            std::string::npos);
  const auto tensor = [](std::uint32_t dims, std::uint64_t d0, std::uint32_t type,
                         std::uint64_t offset) {
    Bytes b;
    b.header(1, 0).text("t").put(dims);
    for (std::uint32_t i = 0; i < dims; ++i) b.put(d0);
    return b.put(type).put(offset).pad_to(256);
  };
  EXPECT_NE(error_of(tensor(5, 1, 0, 0)).find("5 dimensions"), std::string::npos);
  EXPECT_NE(error_of(tensor(1, 0, 0, 0)).find("dimension of 0"), std::string::npos);
  EXPECT_NE(error_of(tensor(2, std::uint64_t{1} << 40, 0, 0)).find("overflowing shape"),
            std::string::npos);
  EXPECT_NE(error_of(tensor(2, std::uint64_t{1} << 20, 0, 0)).find("past the end"),
            std::string::npos);
  EXPECT_NE(error_of(tensor(1, 16, 8, 0)).find("whole q8_0 blocks"), std::string::npos);
  EXPECT_NE(error_of(tensor(1, 4, 77, 0)).find("ggml type 77"), std::string::npos);
  EXPECT_NE(error_of(tensor(1, 4, 0, 8)).find("not aligned"), std::string::npos);
}

}  // namespace
}  // namespace baton
