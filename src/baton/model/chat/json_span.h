// Where one JSON value ends in a text that may still be growing (a model's output as it is
// decoded): the structure only (strings with their escapes, nested brackets), so that a
// parser can cut a value out of the text around it, or tell that more is to come.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace baton {

enum class JsonSpanState {
  complete,  // the value ends at `end`
  partial,   // the text ends inside the value: more may complete it
  invalid,   // no JSON value starts here, brackets do not match, or it nests too deep
};

struct JsonSpan {
  JsonSpanState state = JsonSpanState::invalid;
  std::size_t end = 0;  // one past the value's last character (complete)
};

inline constexpr int kMaxJsonDepth = 128;

// The value that starts at text[begin] (no whitespace skipped). A number or literal at the
// very end of the text is partial (more digits may come). Structure only: "complete" is
// then checked by a JSON parser (nlohmann::json::accept). Linear in the value's length.
JsonSpan json_value_span(std::string_view text, std::size_t begin);

// json_value_span for an object or list that arrives in pieces: each piece is scanned
// once, so that following a long value as it grows costs its length, not its length
// squared. Use: construct, then feed the value's text from its opening bracket on.
class JsonContainerScanner {
 public:
  // The value's state after `piece`; complete: `end` counts from the first character fed.
  JsonSpan feed(std::string_view piece);

 private:
  std::string open_;  // the brackets not closed yet
  bool in_string_ = false;
  bool escaped_ = false;
  std::size_t fed_ = 0;
  JsonSpanState state_ = JsonSpanState::partial;
  std::size_t end_ = 0;
};

// The deepest nesting of objects and lists in the text (outside strings).
int json_nesting_depth(std::string_view text);

// The first character at or after `at` that is not JSON whitespace (text.size() if none).
std::size_t skip_json_space(std::string_view text, std::size_t at);

}  // namespace baton
