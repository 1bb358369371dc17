#include "baton/model/files/safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baton/model/files/model_file_error.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

using testing::as_bytes;
using testing::le_bytes;
using testing::safetensors_bytes;
using testing::safetensors_bytes_with_length;

constexpr const char* kFile = "model.safetensors";

// The message of the ModelFileError that parsing `bytes` throws; fails the test if none.
std::string header_error(const std::string& bytes) {
  try {
    SafetensorsFile::parse(as_bytes(bytes), kFile);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelFileError";
  return {};
}

// The error for one tensor entry `entry` over `data`.
std::string entry_error(const std::string& entry, const std::string& data = std::string(64, 'x')) {
  return header_error(safetensors_bytes(R"({"w": )" + entry + "}", data));
}

TEST(Safetensors, ReadsF32) {
  const std::string bytes =
      safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})",
                        le_bytes<float>({1.0f, -2.5f, 0.0f, 3.25e10f}));
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  const TensorView& w = file.at("w");
  EXPECT_EQ(w.dtype, DType::f32);
  EXPECT_EQ(w.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(w.element_count(), 4u);
  EXPECT_EQ(w.bytes.size(), 16u);
  EXPECT_EQ(to_float(w), (std::vector<float>{1.0f, -2.5f, 0.0f, 3.25e10f}));
}

TEST(Safetensors, ReadsBf16) {
  // 0x3F80 = 1, 0xC020 = -2.5, 0x4049 = 3.140625, 0x7F80 = +inf (half_test.cpp derives them).
  const std::string bytes =
      safetensors_bytes(R"({"b": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}})",
                        le_bytes<std::uint16_t>({0x3F80, 0xC020, 0x4049, 0x7F80}));
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  const std::vector<float> values = to_float(file.at("b"));
  EXPECT_EQ(values,
            (std::vector<float>{1.0f, -2.5f, 3.140625f, std::numeric_limits<float>::infinity()}));
}

TEST(Safetensors, ReadsF16IncludingSubnormalsInfinityAndNan) {
  // 0x3C00 = 1.0; 0x7BFF = 2^15 * (1 + 1023/1024) = 65504; 0x0001 = 2^-24 (subnormal:
  // mantissa 1 * 2^-24); 0xFC00 = -inf (sign, exponent 31, mantissa 0); 0x7E00 = NaN.
  const std::string bytes =
      safetensors_bytes(R"({"h": {"dtype": "F16", "shape": [5], "data_offsets": [0, 10]}})",
                        le_bytes<std::uint16_t>({0x3C00, 0x7BFF, 0x0001, 0xFC00, 0x7E00}));
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  const std::vector<float> values = to_float(file.at("h"));
  ASSERT_EQ(values.size(), 5u);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], 65504.0f);
  EXPECT_EQ(values[2], std::ldexp(1.0f, -24));
  EXPECT_EQ(values[3], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(values[4]));
}

TEST(Safetensors, ConvertsARangeAndRefusesOneBeyondTheTensor) {
  const std::string bytes =
      safetensors_bytes(R"({"h": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]}})",
                        le_bytes<std::uint16_t>({0x3C00, 0xC000, 0x3555}));
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  std::vector<float> out(2);
  to_float(file.at("h"), 1, out);
  EXPECT_EQ(out, (std::vector<float>{-2.0f, 0.333251953125f}));
  EXPECT_THROW(to_float(file.at("h"), 2, out), std::out_of_range);
  EXPECT_THROW(to_float(file.at("h"), 4, std::span<float>()), std::out_of_range);
}

TEST(Safetensors, SeveralTensorsMetadataScalarsAndEmptyTensors) {
  const std::string header = R"({
    "__metadata__": {"format": "pt"},
    "b.weight": {"dtype": "F32", "shape": [], "data_offsets": [4, 8]},
    "a.weight": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
    "empty": {"dtype": "BF16", "shape": [0, 7], "data_offsets": [8, 8]},
    "ids": {"dtype": "I64", "shape": [1], "data_offsets": [8, 16], "extra": "ignored"}
  })";
  const std::string bytes =
      safetensors_bytes(header, le_bytes<float>({0.5f, 2.0f}) + le_bytes<std::int64_t>({42}));
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  EXPECT_EQ(file.names(), (std::vector<std::string_view>{"a.weight", "b.weight", "empty", "ids"}));
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(to_float(file.at("b.weight")), std::vector<float>{2.0f});  // a scalar: 1 element
  EXPECT_EQ(file.at("empty").element_count(), 0u);
  EXPECT_TRUE(to_float(file.at("empty")).empty());
  EXPECT_EQ(file.find("nope"), nullptr);
  EXPECT_EQ(file.at("ids").dtype, DType::i64);
}

TEST(Safetensors, UnsupportedDtypeOnlyWhenReadAsFloat) {
  const std::string bytes =
      safetensors_bytes(R"({"ids": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}})",
                        le_bytes<std::int64_t>({7}));
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  try {
    to_float(file.at("ids"));
    FAIL() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_STREQ(e.what(),
                 "model.safetensors: tensor 'ids': unsupported dtype I64 (readable as float: "
                 "BF16, F16, F32)");
  }
}

TEST(Safetensors, MissingTensorNamesTheFileAndTheTensor) {
  const std::string bytes = safetensors_bytes("{}", "");
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  EXPECT_TRUE(file.names().empty());
  try {
    file.at("lm_head.weight");
    FAIL() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_STREQ(e.what(), "model.safetensors: no tensor 'lm_head.weight'");
  }
}

TEST(Safetensors, AcceptsEveryListedDtypeAndTrailingHeaderSpaces) {
  const std::string bytes = safetensors_bytes(R"({
    "a": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]},
    "b": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]},
    "c": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [2, 4]},
    "d": {"dtype": "F64", "shape": [1], "data_offsets": [8, 16]}
  }    )",
                                              std::string(16, '\0'));
  const SafetensorsFile file = SafetensorsFile::parse(as_bytes(bytes), kFile);
  EXPECT_EQ(file.at("c").dtype, DType::f8_e4m3);
  EXPECT_EQ(file.at("d").dtype, DType::f64);
  EXPECT_THROW(to_float(file.at("d")), ModelFileError);
}

TEST(Safetensors, OpensAFileAndItsViewsSurviveAMove) {
  const testing::TempDir dir;
  const auto path = dir.path() / "model.safetensors";
  testing::write_file(
      path, safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
                              le_bytes<float>({4.0f, 5.0f})));
  SafetensorsFile opened = SafetensorsFile::open(path);
  const TensorView* w = opened.find("w");
  const SafetensorsFile moved = std::move(opened);
  EXPECT_EQ(moved.find("w"), w);
  EXPECT_EQ(to_float(*w), (std::vector<float>{4.0f, 5.0f}));
  EXPECT_EQ(moved.name(), path.string());
  testing::write_file(path, "1234");
  try {
    SafetensorsFile::open(path);
    FAIL() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ": file is 4 bytes, too short for the 8-byte header length");
  }
}

TEST(SafetensorsErrors, TheExampleMessage) {
  const std::string bytes = safetensors_bytes(
      R"({"model.embed_tokens.weight": {"dtype": "F32", "shape": [25], "data_offsets": [0, 100]}})",
      std::string(64, 'x'));
  EXPECT_EQ(header_error(bytes),
            "model.safetensors: tensor 'model.embed_tokens.weight': data_offsets [0, 100] end "
            "beyond the data section (64 bytes)");
}

TEST(SafetensorsErrors, Framing) {
  EXPECT_EQ(header_error(""),
            "model.safetensors: file is 0 bytes, too short for the 8-byte header length");
  EXPECT_NE(header_error("1234567").find("too short"), std::string::npos);
  EXPECT_NE(header_error(safetensors_bytes_with_length(100'000'001, "{}", ""))
                .find("header length 100000001 is over the limit of 100000000 bytes"),
            std::string::npos);
  EXPECT_NE(header_error(safetensors_bytes_with_length(~std::uint64_t{0}, "{}", ""))
                .find("over the limit"),
            std::string::npos);
  EXPECT_EQ(header_error(safetensors_bytes_with_length(3, "{}", "")),
            "model.safetensors: header length 3 is beyond the end of the file (10 bytes)");
}

TEST(SafetensorsErrors, TruncatedFile) {
  const std::string whole =
      safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})",
                        le_bytes<float>({1, 2, 3, 4}));
  const std::string cut = whole.substr(0, whole.size() - 3);
  EXPECT_NE(header_error(cut).find("data_offsets [0, 16] end beyond the data section (13 bytes)"),
            std::string::npos);
  EXPECT_NE(header_error(whole.substr(0, 20)).find("beyond the end of the file"),
            std::string::npos);
  EXPECT_NE(header_error(whole.substr(0, 5)).find("too short"), std::string::npos);
}

TEST(SafetensorsErrors, JsonStructure) {
  EXPECT_NE(header_error(safetensors_bytes("{\"w\": ", "")).find("header is not valid JSON"),
            std::string::npos);
  EXPECT_NE(header_error(safetensors_bytes("", "")).find("not valid JSON"), std::string::npos);
  EXPECT_NE(header_error(safetensors_bytes("[1, 2]", ""))
                .find("header is a JSON array, not a JSON object"),
            std::string::npos);
  EXPECT_NE(header_error(safetensors_bytes("{\"\xff\": 1}", "")).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(
      header_error(safetensors_bytes(R"({"w": {"a": {"b": {}}}})", "")).find("nested too deeply"),
      std::string::npos);
  EXPECT_NE(
      header_error(safetensors_bytes(R"({"w": {"shape": [[1]]}})", "")).find("nested too deeply"),
      std::string::npos);
  EXPECT_NE(entry_error("3").find("tensor 'w': entry is 3, not an object"), std::string::npos);
}

TEST(SafetensorsErrors, DuplicateNamesAndKeys) {
  const std::string entry = R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  EXPECT_NE(header_error(safetensors_bytes(R"({"w": )" + entry + R"(, "w": )" + entry + "}",
                                           std::string(4, 'x')))
                .find("model.safetensors: tensor 'w' is listed twice"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "dtype": "F16", "shape": [1], "data_offsets": [0, 4]})")
                .find("key 'dtype' is listed twice"),
            std::string::npos);
  // Two objects at the same depth may use the same keys.
  const std::string bytes = safetensors_bytes(
      R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},
          "b": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})",
      "xy");
  EXPECT_EQ(SafetensorsFile::parse(as_bytes(bytes), kFile).names().size(), 2u);
}

TEST(SafetensorsErrors, MissingOrMistypedFields) {
  EXPECT_NE(entry_error(R"({"shape": [1], "data_offsets": [0, 4]})").find("missing \"dtype\""),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "data_offsets": [0, 4]})").find("missing \"shape\""),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1]})").find("missing \"data_offsets\""),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": 4, "shape": [1], "data_offsets": [0, 4]})")
                .find("\"dtype\" is 4, not a string"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F4", "shape": [1], "data_offsets": [0, 4]})")
                .find("unknown dtype 'F4'"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": 1, "data_offsets": [0, 4]})")
                .find("\"shape\" is 1, not an array"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1], "data_offsets": {"a": 0}})")
                .find("\"data_offsets\" is a JSON object, not an array [begin, end]"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]})")
                .find("not an array [begin, end]"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1], "data_offsets": [0, "4"]})")
                .find("data_offsets[1] is a JSON string, not a non-negative integer"),
            std::string::npos);
}

TEST(SafetensorsErrors, Shapes) {
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 4]})")
                .find("tensor 'w': shape[1] is -1, not a non-negative integer"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 4]})")
                .find("shape[0] is 2.5, not a non-negative integer"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [true], "data_offsets": [0, 4]})")
                .find("shape[0] is a JSON boolean"),
            std::string::npos);
  // Beyond int64 (2^63) and beyond u64.
  EXPECT_NE(
      entry_error(R"({"dtype": "F32", "shape": [9223372036854775808], "data_offsets": [0, 4]})")
          .find("not a non-negative integer"),
      std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1e30], "data_offsets": [0, 4]})")
                .find("not a non-negative integer"),
            std::string::npos);
  // 2^32 * 2^32 overflows the element count; 2^62 F32 elements overflow the byte size.
  EXPECT_NE(
      entry_error(R"({"dtype": "U8", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]})")
          .find("shape [4294967296, 4294967296] has too many elements"),
      std::string::npos);
  EXPECT_NE(
      entry_error(R"({"dtype": "F32", "shape": [4611686018427387904], "data_offsets": [0, 4]})")
          .find("has too many elements"),
      std::string::npos);
  // A zero dimension makes the product 0 however large the others are.
  EXPECT_NE(entry_error(
                R"({"dtype": "F32", "shape": [0, 4294967296, 4294967296], "data_offsets": [0, 4]})")
                .find("hold 4 bytes, but shape [0, 4294967296, 4294967296] of F32 needs 0"),
            std::string::npos);
}

TEST(SafetensorsErrors, Offsets) {
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1], "data_offsets": [8, 4]})")
                .find("tensor 'w': data_offsets [8, 4] begin after end"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]})")
                .find("data_offsets[0] is -4"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [1], "data_offsets": [64, 68]})")
                .find("data_offsets [64, 68] end beyond the data section (64 bytes)"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]})")
                .find("data_offsets [0, 8] hold 8 bytes, but shape [3] of F32 needs 12"),
            std::string::npos);
  EXPECT_NE(entry_error(R"({"dtype": "BF16", "shape": [3], "data_offsets": [0, 12]})")
                .find("of BF16 needs 6"),
            std::string::npos);
}

TEST(SafetensorsErrors, OverlappingTensors) {
  EXPECT_EQ(header_error(safetensors_bytes(
                R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                    "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                std::string(12, 'x'))),
            "model.safetensors: tensors 'a' [0, 8] and 'b' [4, 12] overlap");
  // The same range twice, listed in either name order.
  EXPECT_NE(header_error(safetensors_bytes(
                             R"({"z": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                             "y": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})",
                             std::string(4, 'x')))
                .find("overlap"),
            std::string::npos);
  // An empty tensor inside another one's range takes no bytes: not an overlap.
  const std::string bytes = safetensors_bytes(
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
          "e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]}})",
      std::string(8, 'x'));
  EXPECT_EQ(SafetensorsFile::parse(as_bytes(bytes), kFile).names().size(), 2u);
}

TEST(SafetensorsErrors, Metadata) {
  EXPECT_NE(header_error(safetensors_bytes(R"({"__metadata__": [1]})", ""))
                .find("\"__metadata__\" is a JSON array, not an object"),
            std::string::npos);
  EXPECT_NE(header_error(safetensors_bytes(R"({"__metadata__": {"n": 1}})", ""))
                .find("\"__metadata__\" value of 'n' is 1, not a string"),
            std::string::npos);
}

}  // namespace
}  // namespace baton
