#include "baton/grammar/token_vocabulary.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace baton::grammar {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes,
                                 std::vector<TokenIndex> end_of_sequence)
    : bytes_(std::move(token_bytes)), end_of_sequence_(std::move(end_of_sequence)) {
  for (const TokenIndex id : end_of_sequence_)
    if (id >= bytes_.size())
      throw std::invalid_argument("end-of-sequence id " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(bytes_.size()) +
                                  " tokens");
  std::sort(end_of_sequence_.begin(), end_of_sequence_.end());
  std::vector<TokenIndex> order(bytes_.size());
  std::iota(order.begin(), order.end(), 0);
  std::erase_if(order, [&](TokenIndex t) { return bytes_[t].empty() || is_end_of_sequence(t); });
  std::sort(order.begin(), order.end(),
            [&](TokenIndex a, TokenIndex b) { return bytes_[a] < bytes_[b]; });
  // Sorted tokens give the trie in depth-first order: each token shares the path of its
  // longest common prefix with the one before, and adds nodes for the rest.
  nodes_.push_back(Node{});
  std::vector<std::uint32_t> path{0};  // path[d]: the node at depth d
  std::string_view previous;
  for (const TokenIndex t : order) {
    const std::string_view bytes = bytes_[t];
    longest_ = std::max(longest_, bytes.size());
    const auto shared = static_cast<std::size_t>(
        std::mismatch(bytes.begin(), bytes.end(), previous.begin(), previous.end()).first -
        bytes.begin());
    for (std::size_t d = path.size() - 1; d > shared; --d) {
      nodes_[path[d]].subtree_end = static_cast<std::uint32_t>(nodes_.size());
      path.pop_back();
    }
    for (std::size_t d = shared; d < bytes.size(); ++d) {
      path.push_back(static_cast<std::uint32_t>(nodes_.size()));
      const auto at = static_cast<std::uint32_t>(tokens_.size());
      nodes_.push_back(
          Node{.token_begin = at, .token_end = at, .byte = static_cast<unsigned char>(bytes[d])});
    }
    tokens_.push_back(t);
    nodes_[path.back()].token_end = static_cast<std::uint32_t>(tokens_.size());
    previous = bytes;
  }
  for (const std::uint32_t n : path)
    nodes_[n].subtree_end = static_cast<std::uint32_t>(nodes_.size());
}

bool TokenVocabulary::is_end_of_sequence(TokenIndex token) const {
  return std::binary_search(end_of_sequence_.begin(), end_of_sequence_.end(), token);
}

}  // namespace baton::grammar
