#include "baton/model/files/gguf_file.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <unordered_set>
#include <utility>

#include "baton/model/files/mapped_file.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

using nlohmann::ordered_json;

constexpr int kMaxArrayNesting = 8;
constexpr std::uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

class Reader {
 public:
  Reader(std::span<const std::byte> file, std::string_view name) : file_(file), name_(name) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw ModelFileError(name_, "GGUF: " + problem);
  }

  std::uint64_t position() const { return at_; }
  std::uint64_t left() const { return file_.size() - at_; }

  template <typename T>
  T number(const char* what) {
    if (left() < sizeof(T)) fail(std::string("ends inside ") + what);
    T value;
    std::memcpy(&value, file_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }

  std::string string(const char* what) {
    const auto length = number<std::uint64_t>(what);
    if (length > left()) fail(std::string(what) + " is longer than the file");
    std::string text(reinterpret_cast<const char*>(file_.data() + at_), length);
    at_ += length;
    return text;
  }

  // A value of GGUF type `type`, as JSON.
  ordered_json value(std::uint32_t type, int depth) {
    switch (type) {
      case 0:
        return number<std::uint8_t>("a value");
      case 1:
        return number<std::int8_t>("a value");
      case 2:
        return number<std::uint16_t>("a value");
      case 3:
        return number<std::int16_t>("a value");
      case 4:
        return number<std::uint32_t>("a value");
      case 5:
        return number<std::int32_t>("a value");
      case 6:
        return number<float>("a value");
      case 7: {
        const auto b = number<std::uint8_t>("a value");
        if (b > 1) fail("a bool is " + std::to_string(b));
        return b == 1;
      }
      case 8:
        return string("a string");
      case 9:
        return array(depth);
      case 10:
        return number<std::uint64_t>("a value");
      case 11:
        return number<std::int64_t>("a value");
      case 12:
        return number<double>("a value");
      default:
        fail("unknown value type " + std::to_string(type));
    }
  }

 private:
  ordered_json array(int depth) {
    if (depth >= kMaxArrayNesting) fail("arrays nest too deep");
    const auto type = number<std::uint32_t>("an array's type");
    const auto count = number<std::uint64_t>("an array's length");
    // Each element takes at least a byte (a string at least eight): no count past that.
    const std::uint64_t smallest = type == 8 || type == 9 ? 8 : 1;
    if (count > left() / smallest)
      fail("an array of " + std::to_string(count) + " elements is longer than the file");
    ordered_json out = ordered_json::array();
    for (std::uint64_t i = 0; i < count; ++i) out.push_back(value(type, depth + 1));
    return out;
  }

  std::span<const std::byte> file_;
  std::string name_;
  std::uint64_t at_ = 0;
};

std::uint64_t tensor_bytes(const GgufTensor& t, const Reader& r) {
  const GgmlTypeTraits* type = ggml_type_traits(t.type);
  if (type == nullptr) {
    r.fail("tensor '" + t.name + "' has ggml type " + std::to_string(t.type) +
           ", which baton does not know");
  }
  std::uint64_t values = 1;
  for (const std::uint64_t d : t.dims) {
    if (d == 0 || values > std::numeric_limits<std::uint64_t>::max() / d) {
      r.fail("tensor '" + t.name + "' has a dimension of 0 or an overflowing shape");
    }
    values *= d;
  }
  if (t.dims.empty() || t.dims[0] % type->block_values != 0) {
    r.fail("tensor '" + t.name + "': its rows are not whole " + type->name + " blocks");
  }
  if (values / type->block_values > std::numeric_limits<std::uint64_t>::max() / type->block_bytes) {
    r.fail("tensor '" + t.name + "' is too large");
  }
  return values / type->block_values * type->block_bytes;
}

}  // namespace

// ggml.c's type traits.
constexpr GgmlTypeTraits kTypes[] = {
    {.id = 0, .name = "f32", .block_values = 1, .block_bytes = 4},
    {.id = 1, .name = "f16", .block_values = 1, .block_bytes = 2},
    {.id = 2, .name = "q4_0", .block_values = 32, .block_bytes = 18},
    {.id = 3, .name = "q4_1", .block_values = 32, .block_bytes = 20},
    {.id = 6, .name = "q5_0", .block_values = 32, .block_bytes = 22},
    {.id = 7, .name = "q5_1", .block_values = 32, .block_bytes = 24},
    {.id = 8, .name = "q8_0", .block_values = 32, .block_bytes = 34},
    {.id = 9, .name = "q8_1", .block_values = 32, .block_bytes = 36},
    {.id = 10, .name = "q2_K", .block_values = 256, .block_bytes = 84},
    {.id = 11, .name = "q3_K", .block_values = 256, .block_bytes = 110},
    {.id = 12, .name = "q4_K", .block_values = 256, .block_bytes = 144},
    {.id = 13, .name = "q5_K", .block_values = 256, .block_bytes = 176},
    {.id = 14, .name = "q6_K", .block_values = 256, .block_bytes = 210},
    {.id = 15, .name = "q8_K", .block_values = 256, .block_bytes = 292},
    {.id = 24, .name = "i8", .block_values = 1, .block_bytes = 1},
    {.id = 25, .name = "i16", .block_values = 1, .block_bytes = 2},
    {.id = 26, .name = "i32", .block_values = 1, .block_bytes = 4},
    {.id = 27, .name = "i64", .block_values = 1, .block_bytes = 8},
    {.id = 28, .name = "f64", .block_values = 1, .block_bytes = 8},
    {.id = 30, .name = "bf16", .block_values = 1, .block_bytes = 2},
};

const GgmlTypeTraits* ggml_type_traits(std::uint32_t id) {
  for (const GgmlTypeTraits& t : kTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

std::string ggml_type_name(std::uint32_t type) {
  const GgmlTypeTraits* t = ggml_type_traits(type);
  return t ? t->name : "type " + std::to_string(type);
}

GgufHeader read_gguf_header(std::span<const std::byte> file, std::string_view name) {
  Reader r(file, name);
  if (file.size() < 4 || std::memcmp(file.data(), "GGUF", 4) != 0) {
    throw ModelFileError(name, "is not a GGUF file (it does not start with \"GGUF\")");
  }
  (void)r.number<std::uint32_t>("the magic");
  GgufHeader header;
  header.version = r.number<std::uint32_t>("the version");
  if (header.version != 2 && header.version != 3) {
    r.fail("version " + std::to_string(header.version) + " (baton reads 2 and 3)");
  }
  const auto tensor_count = r.number<std::uint64_t>("the tensor count");
  const auto kv_count = r.number<std::uint64_t>("the metadata count");
  // A key-value takes at least 12 bytes, a tensor info at least 24.
  if (kv_count > r.left() / 12 || tensor_count > r.left() / 24) {
    r.fail("counts larger than the file (" + std::to_string(kv_count) + " keys, " +
           std::to_string(tensor_count) + " tensors)");
  }
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    std::string key = r.string("a metadata key");
    if (header.metadata.contains(key)) r.fail("metadata key '" + key + "' appears twice");
    const auto type = r.number<std::uint32_t>("a value type");
    header.metadata[key] = r.value(type, 0);
  }
  if (header.metadata.contains("general.alignment")) {
    const ordered_json& a = header.metadata["general.alignment"];
    if (!a.is_number_unsigned() || a.get<std::uint64_t>() == 0 ||
        (a.get<std::uint64_t>() & (a.get<std::uint64_t>() - 1)) != 0) {
      r.fail("general.alignment must be a power of two");
    }
    header.alignment = a.get<std::uint64_t>();
  }
  std::unordered_set<std::string> names;
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensor t;
    t.name = r.string("a tensor name");
    if (!names.insert(t.name).second) r.fail("tensor '" + t.name + "' appears twice");
    const auto dims = r.number<std::uint32_t>("a tensor's dimension count");
    if (dims == 0 || dims > kMaxDims) {
      r.fail("tensor '" + t.name + "' has " + std::to_string(dims) + " dimensions (1 to 4)");
    }
    for (std::uint32_t d = 0; d < dims; ++d)
      t.dims.push_back(r.number<std::uint64_t>("a dimension"));
    t.type = r.number<std::uint32_t>("a tensor's type");
    t.offset = r.number<std::uint64_t>("a tensor's offset");
    t.bytes = tensor_bytes(t, r);
    header.tensors.push_back(std::move(t));
  }
  const std::uint64_t end = r.position();
  header.data_offset = (end + header.alignment - 1) / header.alignment * header.alignment;
  for (GgufTensor& t : header.tensors) {
    if (t.offset % header.alignment != 0) {
      r.fail("tensor '" + t.name + "' is not aligned to " + std::to_string(header.alignment));
    }
    if (t.offset > file.size() || header.data_offset > file.size() - t.offset ||
        t.bytes > file.size() - t.offset - header.data_offset) {
      r.fail("tensor '" + t.name + "' (" + std::to_string(t.bytes) +
             " bytes) lies past the end of the file");
    }
    t.offset += header.data_offset;
  }
  return header;
}

namespace {

// A model path that is a file can only be a GGUF file: say so when it is not one, rather
// than let it be taken for a model directory ("config.json: Not a directory").
void check_gguf_magic(const std::filesystem::path& file) {
  char magic[4] = {};
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ModelFileError(file.string(), "cannot be opened");
  in.read(magic, sizeof magic);
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got < sizeof magic) {
    throw ModelFileError(file.string(), "not a GGUF file: " + std::to_string(got) +
                                            " bytes, too short for a GGUF header");
  }
  if (std::memcmp(magic, "GGUF", 4) != 0) {
    std::string hex;
    for (const char c : magic) {
      static constexpr char kDigits[] = "0123456789abcdef";
      const auto byte = static_cast<unsigned char>(c);
      hex += std::string(hex.empty() ? "" : " ") + kDigits[byte >> 4] + kDigits[byte & 15];
    }
    throw ModelFileError(file.string(), "not a GGUF file: bad magic (it starts with " + hex +
                                            ", a GGUF file with \"GGUF\")");
  }
}

}  // namespace

std::shared_ptr<const GgufFile> GgufFile::open(const std::filesystem::path& file) {
  MappedFile map(file);
  GgufHeader header = read_gguf_header(map.bytes(), file.string());
  return std::shared_ptr<const GgufFile>(new GgufFile(std::move(map), std::move(header)));
}

std::filesystem::path find_gguf(const std::filesystem::path& model_path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_regular_file(model_path, error)) {
    check_gguf_magic(model_path);
    return model_path;
  }
  if (!fs::is_directory(model_path, error) || fs::exists(model_path / "config.json", error)) {
    return {};
  }
  std::set<fs::path> found;  // sorted, for the message
  for (const auto& entry : fs::directory_iterator(model_path, error)) {
    if (entry.path().extension() == ".gguf") found.insert(entry.path());
  }
  if (found.size() > 1) {
    std::string names;
    for (const fs::path& file : found) names += (names.empty() ? "" : ", ") + file.filename().string();
    throw ModelFileError(model_path.string(), "holds " + std::to_string(found.size()) +
                                                  " GGUF files (" + names + "): name one");
  }
  return found.empty() ? fs::path() : *found.begin();
}

}  // namespace baton
