// GgufHeader: what a GGUF file (llama.cpp's and Ollama's model format, versions 2 and 3)
// says before its tensor data: the metadata (general.architecture, llama.*, tokenizer.ggml.*,
// tokenizer.chat_template, ...) as JSON values in the file's order, and each tensor's name,
// shape, ggml type and the bytes it occupies. Every count, length, shape and offset is
// checked against the file before it is used, so a truncated or hostile file is a
// ModelFileError naming the problem, never a huge allocation or a read past the end.
// Layout (little-endian): "GGUF", u32 version, u64 tensor count, u64 key-value count; the
// key-values (a string key, a u32 value type, the value; an array is a u32 element type, a
// u64 count and the elements; a string a u64 length and its bytes); the tensor infos (a
// string name, u32 dimension count, u64 dimensions innermost first, u32 ggml type, u64
// offset into the data section); padding to general.alignment (32 by default); the data.
// Thread-safety: an immutable value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/files/mapped_file.h"

namespace baton {

struct GgufTensor {
  std::string name;
  std::vector<std::uint64_t> dims;  // innermost first: a matrix of R rows of C is {C, R}
  std::uint32_t type = 0;           // ggml_type (0 f32, 1 f16, 8 q8_0, 12 q4_k, 30 bf16, ...)
  std::uint64_t offset = 0;         // of its first byte in the file
  std::uint64_t bytes = 0;
};

struct GgufHeader {
  std::uint32_t version = 0;
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  std::vector<GgufTensor> tensors;
  std::uint64_t alignment = 32;
  std::uint64_t data_offset = 0;  // where the data section starts
};

// The header of the GGUF file whose bytes are `file`; `name` names it in errors.
GgufHeader read_gguf_header(std::span<const std::byte> file, std::string_view name);

// What ggml says of one of its types: its name and the values and bytes of a block.
struct GgmlTypeTraits {
  std::uint32_t id;
  const char* name;
  std::uint64_t block_values;
  std::uint64_t block_bytes;
};

// The traits of ggml type `type`; nullptr for a type baton does not know.
const GgmlTypeTraits* ggml_type_traits(std::uint32_t type);

// ggml's name of a type ("q4_K"), or "type N".
std::string ggml_type_name(std::uint32_t type);

// A GGUF file mapped and its header parsed, once: what every reader of one model load
// shares (ModelSource). Errors as read_gguf_header, and MappedFile's.
// Thread-safety: immutable once opened.
class GgufFile {
 public:
  static std::shared_ptr<const GgufFile> open(const std::filesystem::path& file);

  const std::filesystem::path& path() const { return map_.path(); }
  std::span<const std::byte> bytes() const { return map_.bytes(); }
  const GgufHeader& header() const { return header_; }
  // Drops the map's pages from this process's memory (MappedFile::release_resident).
  void release_resident() const noexcept { map_.release_resident(); }

 private:
  GgufFile(MappedFile map, GgufHeader header) : map_(std::move(map)), header_(std::move(header)) {}
  MappedFile map_;
  GgufHeader header_;
};

// The GGUF file a model path names: the path itself when it is a file (ModelFileError
// "not a GGUF file" when it does not start with "GGUF" or is shorter than that), else the
// one *.gguf in a directory without config.json; empty when neither. ModelFileError naming
// them when the directory holds several.
std::filesystem::path find_gguf(const std::filesystem::path& model_path);

}  // namespace baton
