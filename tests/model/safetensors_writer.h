// Test helpers: safetensors bytes built in the test (a header given as JSON text, so that
// tests can write malformed headers, plus data bytes) and files written from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace baton::testing {

// The 8-byte little-endian `length`, then `header`, then `data`.
inline std::string safetensors_bytes_with_length(std::uint64_t length, std::string_view header,
                                                 std::string_view data) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  return bytes.append(header).append(data);
}

// A well-framed file: the length is the header's.
inline std::string safetensors_bytes(std::string_view header, std::string_view data) {
  return safetensors_bytes_with_length(header.size(), header, data);
}

// The little-endian bytes of `values` (the host is little-endian, as tensor_view.cpp asserts).
template <typename T>
std::string le_bytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

inline std::span<const std::byte> as_bytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// One tensor of a safetensors file, as read_tensors() reads and write_tensors() writes it.
struct Tensor {
  std::string dtype;  // "F32", "BF16", "U32", ...
  std::vector<std::int64_t> shape;
  std::string bytes;
};

// Every tensor of a well-formed `file` by name (its __metadata__ left out).
inline std::map<std::string, Tensor> read_tensors(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string bytes = text.str();
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) {
    length |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  }
  std::map<std::string, Tensor> tensors;
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, length));
  for (const auto& [name, t] : header.items()) {
    if (name == "__metadata__") continue;
    const auto begin = t["data_offsets"][0].get<std::size_t>();
    const auto end = t["data_offsets"][1].get<std::size_t>();
    tensors[name] = {t["dtype"].get<std::string>(), t["shape"].get<std::vector<std::int64_t>>(),
                     bytes.substr(8 + length + begin, end - begin)};
  }
  return tensors;
}

// `tensors` as one safetensors file, their data back to back.
inline void write_tensors(const std::filesystem::path& file,
                          const std::map<std::string, Tensor>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", t.dtype},
                    {"shape", t.shape},
                    {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  write_file(file, safetensors_bytes(header.dump(), data));
}

}  // namespace baton::testing
