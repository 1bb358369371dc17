#include "baton/model/files/model_source.h"

#include <utility>

namespace baton {

ModelSource ModelSource::open(const std::filesystem::path& path) {
  const std::filesystem::path gguf = find_gguf(path);
  return ModelSource(path, gguf.empty() ? nullptr : GgufFile::open(gguf));
}

}  // namespace baton
