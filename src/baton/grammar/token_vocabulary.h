// A tokenizer's vocabulary as the grammar masks need it: every token's bytes in a trie laid
// out in depth-first order, so a mask walks shared prefixes once and skips a whole subtree
// when the grammar refuses its prefix. Built once per tokenizer, shared by every grammar.
// Tokens with no bytes (special tokens) are never allowed; the end-of-sequence ids are
// allowed only where the grammar can end.
// Thread-safety: immutable after construction; share it freely.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace baton::grammar {

using TokenIndex = std::uint32_t;

class TokenVocabulary {
 public:
  struct Node {
    std::uint32_t subtree_end = 0;  // one past this node's last descendant
    std::uint32_t token_begin = 0;  // tokens() range of the tokens whose bytes end here
    std::uint32_t token_end = 0;
    unsigned char byte = 0;  // the byte read to reach this node (none for the root)
  };

  // token_bytes[i] is token i's bytes ("" for a special token); end_of_sequence are the ids
  // that end the output. Throws std::invalid_argument for an id outside the vocabulary.
  TokenVocabulary(std::vector<std::string> token_bytes, std::vector<TokenIndex> end_of_sequence);

  std::size_t size() const { return bytes_.size(); }
  // The words a mask of this vocabulary needs (one bit per token).
  std::size_t mask_words() const { return (bytes_.size() + 31) / 32; }
  std::string_view token_bytes(TokenIndex token) const { return bytes_.at(token); }
  std::span<const TokenIndex> end_of_sequence() const { return end_of_sequence_; }
  bool is_end_of_sequence(TokenIndex token) const;

  // nodes()[0] is the root (the empty prefix); a node's children follow it, each child's
  // subtree ending where the next child starts.
  std::span<const Node> nodes() const { return nodes_; }
  std::span<const TokenIndex> tokens(const Node& node) const {
    return {tokens_.data() + node.token_begin, tokens_.data() + node.token_end};
  }
  std::size_t longest_token() const { return longest_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<TokenIndex> end_of_sequence_;
  std::vector<Node> nodes_;
  std::vector<TokenIndex> tokens_;
  std::size_t longest_ = 0;
};

}  // namespace baton::grammar
