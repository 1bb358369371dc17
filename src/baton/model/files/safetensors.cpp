// SafetensorsFile: the framing (header length, header, data section), the overlap check,
// and lookups by name. The header's JSON is read by safetensors_header.cpp.
// Thread-safety: see safetensors.h.
#include "baton/model/files/safetensors.h"

#include <algorithm>
#include <string>
#include <utility>

#include "baton/model/files/model_file_error.h"
#include "baton/model/files/safetensors_header.h"

namespace baton {
namespace {

constexpr std::size_t kLengthBytes = 8;

struct Sections {
  std::string_view header;
  std::span<const std::byte> data;
};

std::uint64_t read_le_u64(const std::byte* bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < kLengthBytes; ++i) {
    value |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  }
  return value;
}

Sections split_sections(std::span<const std::byte> bytes, const std::string& file) {
  if (bytes.size() < kLengthBytes) {
    throw ModelFileError(file, "file is " + std::to_string(bytes.size()) +
                                   " bytes, too short for the 8-byte header length");
  }
  const std::uint64_t length = read_le_u64(bytes.data());
  if (length > SafetensorsFile::kMaxHeaderBytes) {
    throw ModelFileError(file, "header length " + std::to_string(length) +
                                   " is over the limit of " +
                                   std::to_string(SafetensorsFile::kMaxHeaderBytes) + " bytes");
  }
  if (length > bytes.size() - kLengthBytes) {
    throw ModelFileError(file, "header length " + std::to_string(length) +
                                   " is beyond the end of the file (" +
                                   std::to_string(bytes.size()) + " bytes)");
  }
  const auto header_bytes = bytes.subspan(kLengthBytes, static_cast<std::size_t>(length));
  return {.header = std::string_view(reinterpret_cast<const char*>(header_bytes.data()),
                                     header_bytes.size()),
          .data = bytes.subspan(kLengthBytes + header_bytes.size())};
}

std::string describe_range(const TensorView& tensor, const std::byte* data) {
  const auto begin = static_cast<std::size_t>(tensor.bytes.data() - data);
  return "'" + tensor.name + "' [" + std::to_string(begin) + ", " +
         std::to_string(begin + tensor.bytes.size()) + "]";
}

// No two tensors share a byte. Empty tensors occupy nothing, so they never overlap.
void check_no_overlap(const std::vector<TensorView>& tensors, const std::byte* data,
                      const std::string& file) {
  std::vector<const TensorView*> by_offset;
  for (const TensorView& tensor : tensors) {
    if (!tensor.bytes.empty()) by_offset.push_back(&tensor);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorView* a, const TensorView* b) {
    return a->bytes.data() < b->bytes.data();
  });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const TensorView& previous = *by_offset[i - 1];
    if (by_offset[i]->bytes.data() < previous.bytes.data() + previous.bytes.size()) {
      throw ModelFileError(file, "tensors " + describe_range(previous, data) + " and " +
                                     describe_range(*by_offset[i], data) + " overlap");
    }
  }
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  MappedFile mapped(path);
  SafetensorsFile file = parse(mapped.bytes(), path.string());
  file.file_ = std::move(mapped);  // the mapping's address, and so the views, do not change
  return file;
}

SafetensorsFile SafetensorsFile::parse(std::span<const std::byte> bytes, std::string name) {
  const Sections sections = split_sections(bytes, name);
  SafetensorsHeader header = parse_safetensors_header(sections.header, sections.data, name);
  check_no_overlap(header.tensors, sections.data.data(), name);
  SafetensorsFile file;
  file.name_ = std::move(name);
  file.tensors_ = std::move(header.tensors);
  file.metadata_ = std::move(header.metadata);
  return file;
}

const TensorView* SafetensorsFile::find(std::string_view name) const {
  const auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const TensorView& tensor, std::string_view key) { return tensor.name < key; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

const TensorView& SafetensorsFile::at(std::string_view name) const {
  if (const TensorView* tensor = find(name)) return *tensor;
  throw ModelFileError(name_, "no tensor '" + std::string(name) + "'");
}

std::vector<std::string_view> SafetensorsFile::names() const {
  std::vector<std::string_view> names;
  names.reserve(tensors_.size());
  for (const TensorView& tensor : tensors_) names.push_back(tensor.name);
  return names;
}

}  // namespace baton
