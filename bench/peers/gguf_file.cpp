// The GGUF v3 encoder of gguf_file.h: metadata and tensor infos encoded in memory, tensor data
// streamed to the file at the end.
#include "gguf_file.h"

#include <array>
#include <bit>
#include <fstream>
#include <stdexcept>

namespace baton::peers {
namespace {

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian");

// gguf_type: the value types of a key-value pair.
constexpr std::uint32_t kTypeU32 = 4;
constexpr std::uint32_t kTypeI32 = 5;
constexpr std::uint32_t kTypeF32 = 6;
constexpr std::uint32_t kTypeBool = 7;
constexpr std::uint32_t kTypeString = 8;
constexpr std::uint32_t kTypeArray = 9;

constexpr std::uint32_t kVersion = 3;

// Appends the little-endian bytes of a trivially copyable value.
template <typename T>
void put(std::string& out, T value) {
  const auto bytes = std::bit_cast<std::array<char, sizeof(T)>>(value);
  out.append(bytes.data(), bytes.size());
}

void put_string(std::string& out, std::string_view text) {
  put<std::uint64_t>(out, text.size());
  out.append(text);
}

std::uint64_t aligned(std::uint64_t offset) {
  const std::uint64_t a = GgufFile::kAlignment;
  return (offset + a - 1) / a * a;
}

}  // namespace

std::uint64_t row_bytes(GgmlType type, std::uint64_t elements) {
  switch (type) {
    case GgmlType::f32:
      return elements * 4;
    case GgmlType::f16:
    case GgmlType::bf16:
      return elements * 2;
    case GgmlType::q8_0:  // per block of 32: an f16 scale and 32 int8
      if (elements % 32 != 0) throw std::invalid_argument("q8_0 rows need a multiple of 32");
      return elements / 32 * 34;
  }
  throw std::invalid_argument("unknown ggml type");
}

GgufFile::GgufFile() { add_u32("general.alignment", kAlignment); }

void GgufFile::begin_key(std::string_view key, std::uint32_t value_type) {
  put_string(metadata_, key);
  put(metadata_, value_type);
  ++metadata_count_;
}

void GgufFile::add_u32(std::string_view key, std::uint32_t value) {
  begin_key(key, kTypeU32);
  put(metadata_, value);
}

void GgufFile::add_f32(std::string_view key, float value) {
  begin_key(key, kTypeF32);
  put(metadata_, value);
}

void GgufFile::add_bool(std::string_view key, bool value) {
  begin_key(key, kTypeBool);
  put<std::uint8_t>(metadata_, value ? 1 : 0);
}

void GgufFile::add_string(std::string_view key, std::string_view value) {
  begin_key(key, kTypeString);
  put_string(metadata_, value);
}

void GgufFile::add_strings(std::string_view key, const std::vector<std::string>& values) {
  begin_key(key, kTypeArray);
  put(metadata_, kTypeString);
  put<std::uint64_t>(metadata_, values.size());
  for (const std::string& v : values) put_string(metadata_, v);
}

void GgufFile::add_i32s(std::string_view key, const std::vector<std::int32_t>& values) {
  begin_key(key, kTypeArray);
  put(metadata_, kTypeI32);
  put<std::uint64_t>(metadata_, values.size());
  for (std::int32_t v : values) put(metadata_, v);
}

void GgufFile::add_f32s(std::string_view key, const std::vector<float>& values) {
  begin_key(key, kTypeArray);
  put(metadata_, kTypeF32);
  put<std::uint64_t>(metadata_, values.size());
  for (float v : values) put(metadata_, v);
}

void GgufFile::add_tensor(std::string name, std::vector<std::uint64_t> dims, GgmlType type,
                          DataWriter write_data) {
  std::uint64_t rows = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
  const std::uint64_t bytes = rows * row_bytes(type, dims.at(0));
  tensors_.push_back({std::move(name), std::move(dims), type, bytes, std::move(write_data)});
}

void GgufFile::write(const std::filesystem::path& path) const {
  std::string head;
  head.append("GGUF");
  put(head, kVersion);
  put<std::uint64_t>(head, tensors_.size());
  put<std::uint64_t>(head, metadata_count_);
  head += metadata_;
  std::uint64_t offset = 0;  // into the data section
  for (const Tensor& t : tensors_) {
    put_string(head, t.name);
    put<std::uint32_t>(head, static_cast<std::uint32_t>(t.dims.size()));
    for (std::uint64_t d : t.dims) put(head, d);
    put(head, static_cast<std::uint32_t>(t.type));
    put(head, offset);
    offset = aligned(offset + t.bytes);
  }
  head.resize(aligned(head.size()), '\0');

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path.string() + ": cannot open for writing");
  out.write(head.data(), static_cast<std::streamsize>(head.size()));
  const auto data_start = static_cast<std::uint64_t>(out.tellp());
  for (const Tensor& t : tensors_) {
    const auto before = static_cast<std::uint64_t>(out.tellp());
    t.write_data(out);
    const auto written = static_cast<std::uint64_t>(out.tellp()) - before;
    if (written != t.bytes) {
      throw std::runtime_error(t.name + ": wrote " + std::to_string(written) + " bytes, want " +
                               std::to_string(t.bytes));
    }
    const std::uint64_t end = before - data_start + written;
    const std::string padding(aligned(end) - end, '\0');
    out.write(padding.data(), static_cast<std::streamsize>(padding.size()));
  }
  out.flush();
  if (!out) throw std::runtime_error(path.string() + ": write failed");
}

}  // namespace baton::peers
