#include "baton/model/config/config_reader.h"

#include "baton/model/config/gguf_config.h"

namespace baton {

ModelConfig read_model_config(const ModelSource& source) {
  if (source.gguf() != nullptr) return gguf_model_config(*source.gguf());
  return read_hf_model_config(source.path());
}

ModelConfig read_model_config(const std::filesystem::path& path) {
  return read_model_config(ModelSource::open(path));
}

}  // namespace baton
