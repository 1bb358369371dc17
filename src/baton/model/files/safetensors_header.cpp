// The safetensors JSON header: nlohmann parse with a callback that refuses deep nesting and
// duplicate keys (nlohmann itself keeps the last of two equal keys), then one tensor entry
// at a time: dtype, shape, data_offsets.
// Thread-safety: pure functions.
#include "baton/model/files/safetensors_header.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_set>

#include "baton/model/files/dtype.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

using Json = nlohmann::json;

// Containers may start at depth 0 (the header), 1 (a tensor entry or the metadata) and 2
// (shape, data_offsets); anything deeper is not a safetensors header.
constexpr int kMaxContainerDepth = 2;

// Parses the JSON; throws on a syntax error, deep nesting, or a key listed twice.
Json parse_json(std::string_view text, const std::string& file) {
  std::vector<std::unordered_set<std::string>> keys;  // keys seen, per open object depth
  auto check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) {
      if (depth > kMaxContainerDepth) throw ModelFileError(file, "header JSON nested too deeply");
      if (event == Json::parse_event_t::object_start) {
        keys.resize(static_cast<std::size_t>(depth) + 1);
        keys.back().clear();
      }
    } else if (event == Json::parse_event_t::key) {
      const auto object_depth = static_cast<std::size_t>(depth - 1);
      if (object_depth >= keys.size()) keys.resize(object_depth + 1);
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!keys[object_depth].insert(key).second) {
        throw ModelFileError(file, depth == 1 ? "tensor '" + key + "' is listed twice"
                                              : "key '" + key + "' is listed twice");
      }
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), check);
  } catch (const Json::exception& e) {
    throw ModelFileError(file, std::string("header is not valid JSON: ") + e.what());
  }
}

// `value` as a non-negative integer that fits in int64, or nullopt.
std::optional<std::uint64_t> non_negative(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return number;
    }
  }
  return std::nullopt;
}

// How a bad value reads in a message: numbers as written, other values by their type.
std::string describe(const Json& value) {
  return value.is_number() ? value.dump() : std::string("a JSON ") + value.type_name();
}

// Reports problems of one tensor entry: "file: tensor 'name': problem".
class EntryChecker {
 public:
  EntryChecker(const std::string& file, const std::string& name) : file_(file), name_(name) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw ModelFileError(file_, "tensor '" + name_ + "': " + problem);
  }

  const Json& field(const Json& entry, const char* key) const {
    const auto it = entry.find(key);
    if (it == entry.end()) fail(std::string("missing \"") + key + "\"");
    return *it;
  }

  std::uint64_t integer(const Json& value, const std::string& what) const {
    const std::optional<std::uint64_t> number = non_negative(value);
    if (!number) fail(what + " is " + describe(value) + ", not a non-negative integer");
    return *number;
  }

 private:
  const std::string& file_;
  const std::string& name_;
};

DType read_dtype(const EntryChecker& check, const Json& entry) {
  const Json& value = check.field(entry, "dtype");
  if (!value.is_string()) check.fail("\"dtype\" is " + describe(value) + ", not a string");
  const std::string& name = value.get_ref<const std::string&>();
  const std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) check.fail("unknown dtype '" + name + "'");
  return *dtype;
}

std::vector<std::int64_t> read_shape(const EntryChecker& check, const Json& entry) {
  const Json& value = check.field(entry, "shape");
  if (!value.is_array()) check.fail("\"shape\" is " + describe(value) + ", not an array");
  std::vector<std::int64_t> shape;
  shape.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string what = "shape[" + std::to_string(i) + "]";
    shape.push_back(static_cast<std::int64_t>(check.integer(value[i], what)));
  }
  return shape;
}

std::string format_shape(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  }
  return text + "]";
}

// element_count * dtype size, or a failure when either overflows.
std::uint64_t byte_size(const EntryChecker& check, const std::vector<std::int64_t>& shape,
                        DType dtype) {
  std::uint64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(dim), &count)) {
      check.fail("shape " + format_shape(shape) + " has too many elements");
    }
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, dtype_size(dtype), &bytes)) {
    check.fail("shape " + format_shape(shape) + " has too many elements");
  }
  return bytes;
}

struct Offsets {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::string text() const {
    return "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "]";
  }
};

Offsets read_offsets(const EntryChecker& check, const Json& entry, std::size_t data_size) {
  const Json& value = check.field(entry, "data_offsets");
  if (!value.is_array() || value.size() != 2) {
    check.fail("\"data_offsets\" is " + describe(value) + ", not an array [begin, end]");
  }
  const Offsets offsets{.begin = check.integer(value[0], "data_offsets[0]"),
                        .end = check.integer(value[1], "data_offsets[1]")};
  if (offsets.begin > offsets.end) check.fail(offsets.text() + " begin after end");
  if (offsets.end > data_size) {
    check.fail(offsets.text() + " end beyond the data section (" + std::to_string(data_size) +
               " bytes)");
  }
  return offsets;
}

TensorView read_tensor(const std::string& name, const Json& entry, std::span<const std::byte> data,
                       const std::string& file) {
  const EntryChecker check(file, name);
  if (!entry.is_object()) check.fail("entry is " + describe(entry) + ", not an object");
  TensorView view{.name = name, .dtype = read_dtype(check, entry), .file = file};
  view.shape = read_shape(check, entry);
  const std::uint64_t expected = byte_size(check, view.shape, view.dtype);
  const Offsets offsets = read_offsets(check, entry, data.size());
  if (offsets.end - offsets.begin != expected) {
    check.fail(offsets.text() + " hold " + std::to_string(offsets.end - offsets.begin) +
               " bytes, but shape " + format_shape(view.shape) + " of " +
               std::string(dtype_name(view.dtype)) + " needs " + std::to_string(expected));
  }
  view.bytes = data.subspan(offsets.begin, offsets.end - offsets.begin);
  return view;
}

std::map<std::string, std::string, std::less<>> read_metadata(const Json& value,
                                                              const std::string& file) {
  if (!value.is_object()) {
    throw ModelFileError(file, "\"__metadata__\" is " + describe(value) + ", not an object");
  }
  std::map<std::string, std::string, std::less<>> metadata;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      throw ModelFileError(
          file, "\"__metadata__\" value of '" + key + "' is " + describe(item) + ", not a string");
    }
    metadata.emplace(key, item.get<std::string>());
  }
  return metadata;
}

}  // namespace

SafetensorsHeader parse_safetensors_header(std::string_view json_text,
                                           std::span<const std::byte> data,
                                           const std::string& file) {
  const Json json = parse_json(json_text, file);
  if (!json.is_object()) {
    throw ModelFileError(file, "header is " + describe(json) + ", not a JSON object");
  }
  SafetensorsHeader header;
  for (const auto& [key, value] : json.items()) {
    if (key == "__metadata__") {
      header.metadata = read_metadata(value, file);
    } else {
      header.tensors.push_back(read_tensor(key, value, data, file));
    }
  }
  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const TensorView& a, const TensorView& b) { return a.name < b.name; });
  return header;
}

}  // namespace baton
