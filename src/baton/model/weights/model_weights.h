// ModelWeights: the weights of a Hugging Face model directory, either one
// `model.safetensors` or shards listed by `model.safetensors.index.json`:
//   {"metadata": {...}, "weight_map": {tensor name -> shard file name}},
// or of a GGUF file (a path to one, or a directory holding one and no config.json:
// gguf_tensors.h, under Hugging Face's tensor names).
// When both exist, model.safetensors wins (as in transformers). Each shard is opened
// (memory-mapped and checked, safetensors.h) once. With an index, exactly the tensors of its
// weight_map are visible, each from its own shard; tensors a shard holds beyond the index
// are ignored.
// Errors are ModelFileError naming the file: neither file present (the directory and both
// names), an index that is not {"weight_map": {string: string}}, a shard name that is not a
// plain file name (empty, ".", "..", a path separator), a missing or malformed shard, a
// tensor listed in the index but absent from its shard.
// Thread-safety: immutable once made; any number of threads may read it. Views stay valid
// until it is destroyed (also across a move).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/files/gguf_tensors.h"
#include "baton/model/files/model_source.h"
#include "baton/model/files/safetensors.h"

namespace baton {

class ModelWeights {
 public:
  static constexpr std::string_view kSingleFile = "model.safetensors";
  static constexpr std::string_view kIndexFile = "model.safetensors.index.json";

  // Opens the weights of a model: its GGUF file's tensors, or a Hugging Face directory's
  // safetensors (one file or an index of shards).
  static ModelWeights open(const ModelSource& source);
  static ModelWeights open(const std::filesystem::path& path) {
    return open(ModelSource::open(path));
  }

  // The tensor called `name`, or nullptr.
  const TensorView* find(std::string_view name) const;
  // The tensor called `name`; throws ModelFileError naming the weights file (the index when
  // sharded) and the tensor.
  const TensorView& at(std::string_view name) const;
  // Every tensor's name, sorted.
  std::vector<std::string_view> names() const;
  // The shard files opened, in name order (one entry for a single file).
  std::vector<std::filesystem::path> files() const;
  // Drops every file's mapped pages from this process's memory, once the tensors read in
  // place have gone where they are used (a device): views stay valid, read from the file.
  void release_resident() const noexcept;

 private:
  ModelWeights() = default;
  void open_single(const std::filesystem::path& file);
  void open_gguf(std::shared_ptr<const GgufFile> file);
  void open_sharded(const std::filesystem::path& dir, const std::filesystem::path& index);

  std::string source_;                                             // the file named in `at` errors
  std::map<std::string, SafetensorsFile, std::less<>> shards_;     // by shard file name
  std::unique_ptr<GgufTensors> gguf_;                              // or a GGUF file
  std::map<std::string, const TensorView*, std::less<>> tensors_;  // into shards_ or gguf_
};

}  // namespace baton
