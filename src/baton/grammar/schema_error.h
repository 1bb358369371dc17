// SchemaError: a JSON Schema the compiler cannot honour (an unsupported or invalid keyword,
// or one past the bounds of grammar_limits.h). Bad client input: the server answers 400,
// naming the keyword and where it is (a JSON pointer into the schema, e.g.
// "/properties/age/multipleOf").
// Thread-safety: an immutable value.
#pragma once

#include <stdexcept>
#include <string>

namespace baton::grammar {

class SchemaError : public std::invalid_argument {
 public:
  SchemaError(std::string keyword, std::string path, const std::string& message)
      : std::invalid_argument("JSON Schema keyword '" + keyword + "' at '" + path +
                              "': " + message),
        keyword_(std::move(keyword)),
        path_(std::move(path)) {}
  const std::string& keyword() const { return keyword_; }
  const std::string& path() const { return path_; }

 private:
  std::string keyword_;
  std::string path_;
};

}  // namespace baton::grammar
