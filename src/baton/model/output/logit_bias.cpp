#include "baton/model/output/logit_bias.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace baton {

void check_logit_bias(const LogitBias& bias) {
  if (bias.size() > kMaxLogitBiasEntries) {
    throw std::invalid_argument("logit_bias holds " + std::to_string(bias.size()) +
                                " entries; at most " + std::to_string(kMaxLogitBiasEntries));
  }
  for (std::size_t i = 0; i < bias.size(); ++i) {
    const LogitBiasEntry& e = bias[i];
    const std::string which = "logit_bias of token " + std::to_string(e.token);
    if (e.token < 0) throw std::invalid_argument(which + ": token ids are >= 0");
    if (i > 0 && bias[i - 1].token >= e.token) {
      throw std::invalid_argument(which + ": entries must be in ascending token order, once each");
    }
    if (!std::isfinite(e.bias) || std::abs(e.bias) > kMaxLogitBias) {
      throw std::invalid_argument(which + " is " + std::to_string(e.bias) +
                                  "; it must be in [-100, 100]");
    }
  }
}

std::vector<float> biased_logits(std::span<const float> logits, const LogitBias& bias) {
  for (const LogitBiasEntry& e : bias) {
    if (e.token < 0 || static_cast<std::size_t>(e.token) >= logits.size()) {
      throw std::out_of_range("logit_bias token " + std::to_string(e.token) + " past a row of " +
                              std::to_string(logits.size()) + " logits");
    }
  }
  std::vector<float> out(logits.begin(), logits.end());
  for (const LogitBiasEntry& e : bias) out[static_cast<std::size_t>(e.token)] += e.bias;
  return out;
}

}  // namespace baton
