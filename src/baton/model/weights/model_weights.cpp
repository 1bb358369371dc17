// ModelWeights: pick the single file or the index, open each shard once, and map every
// tensor name to its view.
// Thread-safety: see model_weights.h.
#include "baton/model/weights/model_weights.h"

#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "baton/model/files/gguf_file.h"
#include "baton/model/files/mapped_file.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

bool present(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

Json read_index_json(const fs::path& index) {
  const MappedFile mapped(index);
  const std::string_view text(reinterpret_cast<const char*>(mapped.bytes().data()), mapped.size());
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    throw ModelFileError(index.string(), std::string("not valid JSON: ") + e.what());
  }
}

const Json& weight_map(const Json& index, const std::string& file) {
  if (!index.is_object()) throw ModelFileError(file, "not a JSON object");
  const auto it = index.find("weight_map");
  if (it == index.end()) throw ModelFileError(file, "missing \"weight_map\"");
  if (!it->is_object()) throw ModelFileError(file, "\"weight_map\" is not an object");
  return *it;
}

// A shard must be a plain file name inside the model directory.
void check_shard_name(const std::string& shard, const std::string& tensor,
                      const std::string& file) {
  const bool plain = !shard.empty() && shard != "." && shard != ".." &&
                     shard.find_first_of(std::string_view("/\\\0", 3)) == std::string::npos;
  if (!plain) {
    throw ModelFileError(file, "tensor '" + tensor + "': shard '" + shard +
                                   "' is not a plain file name in the model directory");
  }
}

}  // namespace

ModelWeights ModelWeights::open(const ModelSource& source) {
  ModelWeights weights;
  if (source.gguf() != nullptr) {
    weights.open_gguf(source.shared_gguf());
    return weights;
  }
  const fs::path& dir = source.path();
  const fs::path single = dir / kSingleFile;
  const fs::path index = dir / kIndexFile;
  if (present(single)) {
    weights.open_single(single);
  } else if (present(index)) {
    weights.open_sharded(dir, index);
  } else {
    throw ModelFileError(dir.string(), "no weights: neither " + std::string(kSingleFile) + " nor " +
                                           std::string(kIndexFile) + " exists");
  }
  return weights;
}

void ModelWeights::open_single(const fs::path& file) {
  source_ = file.string();
  const auto it = shards_.emplace(kSingleFile, SafetensorsFile::open(file)).first;
  for (const TensorView& tensor : it->second.tensors()) tensors_.emplace(tensor.name, &tensor);
}

void ModelWeights::open_gguf(std::shared_ptr<const GgufFile> file) {
  source_ = file->path().string();
  gguf_ = std::make_unique<GgufTensors>(GgufTensors::open(std::move(file)));
  for (const TensorView& tensor : gguf_->tensors()) tensors_.emplace(tensor.name, &tensor);
}

void ModelWeights::open_sharded(const fs::path& dir, const fs::path& index) {
  source_ = index.string();
  const Json json = read_index_json(index);
  for (const auto& [tensor, shard] : weight_map(json, source_).items()) {
    if (!shard.is_string()) {
      throw ModelFileError(source_, "tensor '" + tensor + "': shard is not a string");
    }
    const std::string& shard_name = shard.get_ref<const std::string&>();
    check_shard_name(shard_name, tensor, source_);
    auto it = shards_.find(shard_name);
    if (it == shards_.end()) {
      it = shards_.emplace(shard_name, SafetensorsFile::open(dir / shard_name)).first;
    }
    const TensorView* view = it->second.find(tensor);
    if (view == nullptr) {
      throw ModelFileError(source_, "tensor '" + tensor + "' is listed in shard '" + shard_name +
                                        "' but absent from it");
    }
    tensors_.emplace(tensor, view);
  }
}

const TensorView* ModelWeights::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

const TensorView& ModelWeights::at(std::string_view name) const {
  if (const TensorView* tensor = find(name)) return *tensor;
  throw ModelFileError(source_, "no tensor '" + std::string(name) + "'");
}

std::vector<std::string_view> ModelWeights::names() const {
  std::vector<std::string_view> names;
  names.reserve(tensors_.size());
  for (const auto& [name, tensor] : tensors_) names.push_back(name);
  return names;
}

void ModelWeights::release_resident() const noexcept {
  for (const auto& [name, shard] : shards_) shard.release_resident();
  if (gguf_) gguf_->release_resident();
}

std::vector<fs::path> ModelWeights::files() const {
  std::vector<fs::path> files;
  for (const auto& [name, shard] : shards_) files.emplace_back(shard.name());
  if (gguf_) files.push_back(gguf_->path());
  return files;
}

}  // namespace baton
