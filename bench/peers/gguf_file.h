// GgufFile: writes a GGUF v3 file, the format llama.cpp loads, for bench/peers/gguf_writer.cpp.
// Layout (all little-endian): "GGUF", u32 version 3, u64 tensor count, u64 key-value count;
// each key-value as a string key, a u32 value type and the value (an array: u32 element
// type, u64 count, the elements); each tensor's info as a string name, u32 dimension count,
// u64 dimensions innermost first, u32 ggml type, u64 offset into the data section; zero
// padding to the alignment; then the data section, every tensor starting at a multiple of
// the alignment. A string is a u64 byte length and its bytes, no terminator.
// Tensor data is streamed when the file is written: each tensor comes with a function that
// writes exactly its byte size, so a model's weights are converted one tensor at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace baton::peers {

// The element types of ggml that this writer produces (ggml.h's numbering).
enum class GgmlType : std::uint32_t { f32 = 0, f16 = 1, q8_0 = 8, bf16 = 30 };

// Bytes of a row of `elements` values of `type` (q8_0: a multiple of 32 elements).
std::uint64_t row_bytes(GgmlType type, std::uint64_t elements);

class GgufFile {
 public:
  // Writes a tensor's bytes to the stream; it must write exactly the size it was given.
  using DataWriter = std::function<void(std::ostream&)>;

  // The alignment of the data section and of every tensor in it; stored as
  // general.alignment as well.
  static constexpr std::uint32_t kAlignment = 32;

  GgufFile();

  void add_u32(std::string_view key, std::uint32_t value);
  void add_f32(std::string_view key, float value);
  void add_bool(std::string_view key, bool value);
  void add_string(std::string_view key, std::string_view value);
  void add_strings(std::string_view key, const std::vector<std::string>& values);
  void add_i32s(std::string_view key, const std::vector<std::int32_t>& values);
  void add_f32s(std::string_view key, const std::vector<float>& values);

  // `dims` innermost first: a matrix of R rows of C columns is {C, R}.
  void add_tensor(std::string name, std::vector<std::uint64_t> dims, GgmlType type,
                  DataWriter write_data);

  // Writes everything to `path` (replacing it); std::runtime_error when the file cannot be
  // written or a DataWriter wrote the wrong number of bytes.
  void write(const std::filesystem::path& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> dims;
    GgmlType type;
    std::uint64_t bytes;
    DataWriter write_data;
  };

  void begin_key(std::string_view key, std::uint32_t value_type);

  std::string metadata_;  // the key-value pairs, already encoded
  std::uint64_t metadata_count_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace baton::peers
