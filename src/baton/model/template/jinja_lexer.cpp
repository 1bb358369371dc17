#include "baton/model/template/jinja_lexer.h"

#include <cctype>

#include "baton/model/template/jinja_value.h"

namespace baton::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const std::size_t open = next_tag(pos_);
      text_until(open);
      if (open == src_.size()) break;
      tag(open);
    }
    tokens_.push_back({Token::Kind::end, "", line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw TemplateError("line " + std::to_string(line_) + ": " + problem);
  }

  std::size_t next_tag(std::size_t from) const {
    for (std::size_t i = src_.find('{', from); i != std::string_view::npos;
         i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return src_.size();
  }

  void count_lines(std::string_view text) {
    for (const char c : text) line_ += c == '\n';
  }

  // The text before the tag at `open`, with the whitespace rules of both sides applied.
  void text_until(std::size_t open) {
    std::string text(src_.substr(pos_, open - pos_));
    count_lines(text);
    const bool line_start = pos_ == 0 || src_[pos_ - 1] == '\n';
    if (strip_next_) {
      std::size_t first = 0;
      while (first < text.size() && is_space(text[first])) ++first;
      text.erase(0, first);
    }
    strip_next_ = false;
    pos_ = open;
    if (open < src_.size()) {
      const char kind = src_[open + 1];
      const char control = open + 2 < src_.size() ? src_[open + 2] : '\0';
      if (control == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (kind != '{' && control != '+') {
        // lstrip_blocks: spaces and tabs from the start of the line up to a block tag.
        const std::size_t newline = text.rfind('\n');
        const std::size_t from = newline == std::string::npos ? 0 : newline + 1;
        const bool blank = text.find_first_not_of(" \t", from) == std::string::npos;
        if (blank && (newline != std::string::npos || line_start)) text.erase(from);
      }
    }
    if (!text.empty()) tokens_.push_back({Token::Kind::text, std::move(text), line_});
  }

  void tag(std::size_t open) {
    const char kind = src_[open + 1];
    pos_ = open + 2;
    if (pos_ < src_.size() && (src_[pos_] == '-' || src_[pos_] == '+')) ++pos_;
    if (kind == '#') {
      const std::size_t close = src_.find("#}", pos_);
      if (close == std::string_view::npos) fail("a comment is not closed");
      count_lines(src_.substr(pos_, close - pos_));
      after_close(close > pos_ && src_[close - 1] == '-', close + 2, true);
      return;
    }
    const bool block = kind == '%';
    if (block && raw_block()) return;
    tokens_.push_back({block ? Token::Kind::block_open : Token::Kind::print_open, "", line_});
    const std::string_view close = block ? "%}" : "}}";
    const int opened = line_;
    for (;;) {
      while (pos_ < src_.size() && is_space(src_[pos_])) line_ += src_[pos_++] == '\n';
      if (pos_ >= src_.size()) {
        line_ = opened;
        fail(std::string("this tag is not closed with '") + std::string(close) + "'");
      }
      const bool minus = src_[pos_] == '-' && src_.substr(pos_ + 1, 2) == close;
      const bool plus = src_[pos_] == '+' && src_.substr(pos_ + 1, 2) == close;
      if (minus || plus || src_.substr(pos_, 2) == close) {
        const std::size_t end = pos_ + (minus || plus ? 3 : 2);
        tokens_.push_back({block ? Token::Kind::block_close : Token::Kind::print_close, "", line_});
        after_close(minus, end, block);
        return;
      }
      expression_token();
    }
  }

  // {% raw %}...{% endraw %}: the text between, as it is.
  bool raw_block() {
    std::size_t at = pos_;
    while (at < src_.size() && is_space(src_[at])) ++at;
    if (src_.substr(at, 3) != "raw") return false;
    const std::size_t close = src_.find("%}", at);
    const std::size_t end_tag = src_.find("endraw", close);
    if (close == std::string_view::npos || end_tag == std::string_view::npos) {
      fail("a raw block is not closed");
    }
    const std::size_t tag_open = src_.rfind("{%", end_tag);
    const std::size_t tag_close = src_.find("%}", end_tag);
    if (tag_close == std::string_view::npos) fail("a raw block is not closed");
    std::string text(src_.substr(close + 2, tag_open - close - 2));
    count_lines(src_.substr(pos_, tag_close - pos_));
    tokens_.push_back({Token::Kind::text, std::move(text), line_});
    after_close(src_[tag_close - 1] == '-', tag_close + 2, true);
    return true;
  }

  void after_close(bool minus, std::size_t end, bool block) {
    pos_ = end;
    strip_next_ = minus;
    // trim_blocks: the newline right after a block tag goes.
    if (!minus && block && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      ++line_;
    }
  }

  void expression_token() {
    const char c = src_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) {
        ++pos_;
      }
      tokens_.push_back({Token::Kind::name, std::string(src_.substr(start, pos_ - start)), line_});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      number();
    } else if (c == '\'' || c == '"') {
      string_literal(c);
    } else {
      static constexpr std::string_view kTwo[] = {"**", "//", "==", "!=", "<=", ">="};
      for (const std::string_view op : kTwo) {
        if (src_.substr(pos_, 2) == op) {
          tokens_.push_back({Token::Kind::op, std::string(op), line_});
          pos_ += 2;
          return;
        }
      }
      if (std::string_view("+-*/%~<>=.,:|()[]{}").find(c) == std::string_view::npos) {
        fail(std::string("unexpected character '") + c + "'");
      }
      tokens_.push_back({Token::Kind::op, std::string(1, c), line_});
      ++pos_;
    }
  }

  void number() {
    const std::size_t start = pos_;
    while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
    bool real = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' &&
        std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      real = true;
      ++pos_;
      while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
    }
    // An exponent: 2.5e-7, 1e3.
    std::size_t exponent = pos_;
    if (exponent < src_.size() && (src_[exponent] == 'e' || src_[exponent] == 'E')) {
      ++exponent;
      if (exponent < src_.size() && (src_[exponent] == '+' || src_[exponent] == '-')) ++exponent;
      if (exponent < src_.size() && std::isdigit(static_cast<unsigned char>(src_[exponent]))) {
        while (exponent < src_.size() && std::isdigit(static_cast<unsigned char>(src_[exponent]))) {
          ++exponent;
        }
        pos_ = exponent;
        real = true;
      }
    }
    tokens_.push_back({real ? Token::Kind::real : Token::Kind::integer,
                       std::string(src_.substr(start, pos_ - start)), line_});
  }

  void string_literal(char quote) {
    std::string value;
    for (++pos_; pos_ < src_.size() && src_[pos_] != quote; ++pos_) {
      char c = src_[pos_];
      if (c == '\n') ++line_;
      if (c == '\\' && pos_ + 1 < src_.size()) {
        c = src_[++pos_];
        switch (c) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case '\n':
            ++line_;
            continue;
          case '\\':
          case '\'':
          case '"':
            break;
          default:
            value += '\\';
        }
      }
      value += c;
    }
    if (pos_ >= src_.size()) fail("a string is not closed");
    ++pos_;
    tokens_.push_back({Token::Kind::string, std::move(value), line_});
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  int line_ = 1;
  bool strip_next_ = false;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(source).run(); }

}  // namespace baton::jinja
