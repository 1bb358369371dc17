// ModelSource: a model as the user names it, opened once for every reader of one load. A
// Hugging Face directory (config.json, *.safetensors, tokenizer.json, ...), a directory
// holding one .gguf file, or a .gguf file: "GGUF or Hugging Face?" is decided here once
// (find_gguf), and a GGUF file is mapped and its header parsed here once, then handed to
// the config, weights, tokenizer, chat template and pooling readers (as llama.cpp's
// llama_model_loader opens a model once).
// Errors: ModelFileError as find_gguf and GgufFile::open.
// Thread-safety: immutable once opened; copies share the GGUF file.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "baton/model/files/gguf_file.h"

namespace baton {

class ModelSource {
 public:
  static ModelSource open(const std::filesystem::path& path);

  // The path as named (a directory or a .gguf file).
  const std::filesystem::path& path() const { return path_; }
  // The GGUF file, open; null for a Hugging Face directory.
  const GgufFile* gguf() const { return gguf_.get(); }
  const std::shared_ptr<const GgufFile>& shared_gguf() const { return gguf_; }
  // A file of the model directory (config.json, modules.json, chat_template.jinja, ...),
  // which need not exist (for a model named by its .gguf file it never does).
  std::filesystem::path file(std::string_view name) const { return path_ / name; }

 private:
  ModelSource(std::filesystem::path path, std::shared_ptr<const GgufFile> gguf)
      : path_(std::move(path)), gguf_(std::move(gguf)) {}
  std::filesystem::path path_;
  std::shared_ptr<const GgufFile> gguf_;
};

}  // namespace baton
