// The Jinja lexer: a template's source as text and tag tokens, with the whitespace rules
// transformers renders chat templates with (trim_blocks and lstrip_blocks on, "-" inside a
// tag strips the whitespace on that side, "+" keeps it). Comments are dropped.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace baton::jinja {

struct Token {
  enum class Kind {
    text,
    print_open,
    print_close,
    block_open,
    block_close,
    name,
    string,
    integer,
    real,
    op,
    end
  };
  Kind kind;
  std::string text;  // the text, name, operator or a string literal's value
  int line;
};

// TemplateError (line and problem) for an unclosed tag or string or a stray character.
std::vector<Token> lex(std::string_view source);

}  // namespace baton::jinja
