// The ModelConfig of a model of either kind: a GGUF file's metadata (gguf_config.h) or a
// Hugging Face directory's config.json and generation_config.json (model_config.h).
// Errors: ModelFileError naming the file and the key.
// Thread-safety: pure functions (they read files).
#pragma once

#include <filesystem>

#include "baton/model/config/model_config.h"
#include "baton/model/files/model_source.h"

namespace baton {

ModelConfig read_model_config(const ModelSource& source);
// The same for a model path opened for this read alone (a check of a configuration).
ModelConfig read_model_config(const std::filesystem::path& path);

}  // namespace baton
