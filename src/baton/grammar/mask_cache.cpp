#include "baton/grammar/mask_cache.h"

#include <bit>
#include <stdexcept>

#include "baton/grammar/mask_walk.h"

namespace baton::grammar {

std::size_t StateMask::bytes() const {
  return sizeof(StateMask) + (bits.size() + tokens.size() + rule_ends.size()) * 4;
}

void StateMask::add_to(std::span<std::uint32_t> mask) const {
  for (std::size_t i = 0; i < bits.size(); ++i) mask[i] |= bits[i];
  for (const TokenIndex t : tokens) set_bit(mask, t);
}

namespace {

std::string shared_key(const std::string& signature, std::uint32_t index) {
  return std::string(reinterpret_cast<const char*>(&index), sizeof index) + signature;
}

}  // namespace

std::shared_ptr<const StateMask> SharedMasks::find(const std::string& signature,
                                                   std::uint32_t index) const {
  const std::lock_guard lock(mu_);
  const auto found = masks_.find(shared_key(signature, index));
  return found == masks_.end() ? nullptr : found->second;
}

void SharedMasks::store(const std::string& signature, std::uint32_t index,
                        std::shared_ptr<const StateMask> mask) {
  std::string key = shared_key(signature, index);
  const std::size_t bytes = mask->bytes() + key.size();
  const std::lock_guard lock(mu_);
  if (bytes_ + bytes > kMaxBytes) {
    masks_.clear();
    bytes_ = 0;
  }
  if (masks_.emplace(std::move(key), std::move(mask)).second) bytes_ += bytes;
}

std::size_t SharedMasks::size() const {
  const std::lock_guard lock(mu_);
  return masks_.size();
}

MaskCache::MaskCache(std::shared_ptr<const CompiledGrammar> grammar,
                     std::shared_ptr<const TokenVocabulary> vocabulary,
                     std::shared_ptr<SharedMasks> shared)
    : grammar_(std::move(grammar)), vocabulary_(std::move(vocabulary)), shared_(std::move(shared)) {
  if (!grammar_ || !vocabulary_)
    throw std::invalid_argument("MaskCache needs a grammar and a vocabulary");
}

std::shared_ptr<const StateMask> MaskCache::state_mask(StateId state) {
  std::promise<std::shared_ptr<const StateMask>> promise;
  std::shared_future<std::shared_ptr<const StateMask>> mine = promise.get_future().share();
  {
    std::unique_lock lock(mu_);
    const auto [slot, inserted] = masks_.try_emplace(state, mine);
    if (!inserted) {
      const auto other = slot->second;  // ready, or computed by another thread right now
      lock.unlock();
      return other.get();
    }
  }
  std::shared_ptr<const StateMask> mask;
  try {
    mask = find_or_compute(state);
  } catch (...) {
    promise.set_exception(std::current_exception());
    const std::lock_guard lock(mu_);
    masks_.erase(state);  // the next one asks again
    throw;
  }
  promise.set_value(mask);
  const std::lock_guard lock(mu_);
  if (bytes_ + mask->bytes() > kMaxBytes) {
    masks_.clear();
    bytes_ = 0;
    masks_.emplace(state, mine);
  }
  bytes_ += mask->bytes();
  return mask;
}

std::shared_ptr<const StateMask> MaskCache::find_or_compute(StateId state) const {
  const std::string& signature = grammar_->signature(state);
  const bool shareable = shared_ && !signature.empty();
  std::shared_ptr<const StateMask> mask =
      shareable ? shared_->find(signature, grammar_->index_in_rule(state)) : nullptr;
  if (!mask) {
    mask = compute(state);
    if (shareable) shared_->store(signature, grammar_->index_in_rule(state), mask);
  }
  return mask;
}

std::size_t MaskCache::cached_states() const {
  const std::lock_guard lock(mu_);
  return masks_.size();
}

std::shared_ptr<const StateMask> MaskCache::compute(StateId state) const {
  std::vector<std::uint32_t> bits(vocabulary_->mask_words(), 0);
  auto out = std::make_shared<StateMask>();
  if (grammar_->in_leaf_rule(state)) {
    walk_leaf_rule(*grammar_, *vocabulary_, state, bits, out->rule_ends);
  } else {
    StackArena arena;
    const StackId top = arena.push(state, kBottom);
    MaskWalk(*grammar_, *vocabulary_, arena).walk(0, std::span(&top, 1), bits, &out->rule_ends);
  }
  std::size_t count = 0;
  for (const std::uint32_t word : bits) count += static_cast<std::size_t>(std::popcount(word));
  if (count * 32 >= vocabulary_->size()) {  // ids would take more room than the bits
    out->bits = std::move(bits);
  } else {
    for (std::size_t w = 0; w < bits.size(); ++w)
      for (std::uint32_t word = bits[w]; word != 0; word &= word - 1)
        out->tokens.push_back(
            static_cast<TokenIndex>(w * 32 + static_cast<std::size_t>(std::countr_zero(word))));
  }
  return out;
}

}  // namespace baton::grammar
