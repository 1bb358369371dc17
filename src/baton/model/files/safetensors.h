// SafetensorsFile: the tensor table of one .safetensors file, zero-copy over its memory map.
//
// Format: an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON, then the data
// section. The JSON is an object: tensor name -> {"dtype": "BF16", "shape": [2, 3],
// "data_offsets": [begin, end]} with offsets relative to the data section, plus an
// optional "__metadata__" object of string -> string. Unknown keys inside a tensor entry
// are ignored.
//
// Everything is checked before any view is made, so that no file, however malformed,
// gives a view outside its bytes: the header length (at most kMaxHeaderBytes, within the
// file), the JSON (an object, at most 3 levels deep, no key listed twice in any object),
// each field's type, the dtype name, shapes (non-negative, the element count and byte
// size do not overflow), data_offsets ([begin, end], begin <= end <= data size, end - begin
// == element_count * dtype size), and no two non-empty tensors overlap. Bytes of the data
// section that no tensor covers are allowed. Every error is a ModelFileError that starts
// with the file's name.
//
// Thread-safety: immutable once made; any number of threads may read it. Views and
// pointers it hands out stay valid, also across a move, until it is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/files/mapped_file.h"
#include "baton/model/files/tensor_view.h"

namespace baton {

class SafetensorsFile {
 public:
  // A header longer than this is refused (real headers are well under 1 MB).
  static constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

  using Metadata = std::map<std::string, std::string, std::less<>>;

  // Maps the file at `path` and parses it; messages start with path.string().
  static SafetensorsFile open(const std::filesystem::path& path);

  // Parses a whole file's `bytes` without owning them: the views point into `bytes`, which
  // must outlive the result. `name` starts every message. This is what the fuzzer calls.
  static SafetensorsFile parse(std::span<const std::byte> bytes, std::string name);

  // The tensor called `name`, or nullptr.
  const TensorView* find(std::string_view name) const;
  // The tensor called `name`; throws ModelFileError "file: no tensor 'name'".
  const TensorView& at(std::string_view name) const;
  // Every tensor's name, sorted.
  std::vector<std::string_view> names() const;
  // Every tensor, sorted by name.
  std::span<const TensorView> tensors() const { return tensors_; }
  const Metadata& metadata() const { return metadata_; }
  const std::string& name() const { return name_; }
  // Drops the map's pages from this process's memory (MappedFile::release_resident).
  void release_resident() const noexcept { file_.release_resident(); }

 private:
  SafetensorsFile() = default;

  std::string name_;
  MappedFile file_;                  // owns the bytes when opened from a path
  std::vector<TensorView> tensors_;  // sorted by name
  Metadata metadata_;
};

}  // namespace baton
