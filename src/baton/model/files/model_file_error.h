// ModelFileError: a model file (safetensors, index, later config and tokenizer) that cannot
// be read or is malformed. The message always starts with the file (or directory) and
// names the problem: "model.safetensors: tensor 'w': data_offsets [0, 100] ...".
// Thread-safety: an immutable value.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace baton {

class ModelFileError : public std::runtime_error {
 public:
  // what() is "file: problem".
  ModelFileError(std::string_view file, std::string_view problem)
      : std::runtime_error(std::string(file) + ": " + std::string(problem)) {}
};

}  // namespace baton
