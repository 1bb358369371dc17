#include "baton/turn/turn_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "baton/common/env.h"

namespace baton {

TurnOptions TurnOptions::with_env_defaults(std::string_view backend) {
  TurnOptions options;
  if (backend == "cuda") options.handover_spin = kCudaHandoverSpin;
  options.spin =
      std::chrono::microseconds(positive_int_from_env("BATON_TURN_SPIN_US", options.spin.count()));
  options.handover_spin = std::chrono::microseconds(
      non_negative_int_from_env("BATON_TURN_HANDOVER_SPIN_US", options.handover_spin.count()));
  return options;
}

std::optional<TurnPolicy> parse_turn_policy(std::string_view name) {
  if (name == "concurrent") return TurnPolicy::concurrent;
  if (name == "serialize") return TurnPolicy::serialize;
  if (name == "partition") return TurnPolicy::partition;
  return std::nullopt;
}

std::optional<Quantum> parse_quantum(std::string_view name) {
  if (name == "burst") return Quantum::burst;
  if (name == "layer") return Quantum::layer;
  if (name == "op") return Quantum::op;
  return std::nullopt;
}

std::optional<TurnScope> parse_turn_scope(std::string_view name) {
  if (name == "process") return TurnScope::process;
  if (name == "host") return TurnScope::host;
  return std::nullopt;
}

std::string_view to_string(TurnScope scope) {
  return scope == TurnScope::host ? "host" : "process";
}

std::string_view to_string(TurnPolicy policy) {
  switch (policy) {
    case TurnPolicy::concurrent:
      return "concurrent";
    case TurnPolicy::serialize:
      return "serialize";
    case TurnPolicy::partition:
      return "partition";
  }
  return "concurrent";
}

std::string_view to_string(Quantum quantum) {
  switch (quantum) {
    case Quantum::burst:
      return "burst";
    case Quantum::layer:
      return "layer";
    case Quantum::op:
      return "op";
  }
  return "burst";
}

std::optional<PrefillShare> parse_prefill_share(std::string_view text) {
  if (text == "auto") return PrefillShare{.automatic = true, .share = std::nullopt};
  if (text == "weights") return PrefillShare{.automatic = false, .share = std::nullopt};
  double share = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), share);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(share) ||
      share < 0.01 || share > 1.0) {
    return std::nullopt;
  }
  return PrefillShare{.automatic = false, .share = share};
}

void apply(TurnOptions& options, PrefillShare share) {
  options.prefill_share_auto = share.automatic;
  options.prefill_share = share.share;
}

std::string describe(const TurnOptions& options) {
  const std::string scope = options.scope == TurnScope::host ? "@host" : "";
  if (options.policy == TurnPolicy::concurrent) return "concurrent" + scope;
  if (options.policy == TurnPolicy::partition) {
    if (options.prefill_share_auto) return "partition/auto" + scope;
    if (!options.prefill_share) return "partition/weights" + scope;
    char share[16];
    std::snprintf(share, sizeof share, "%g", *options.prefill_share);
    return std::string("partition/") + share + scope;
  }
  std::string name = "serialize/" + std::string(to_string(options.quantum));
  if (options.quantum == Quantum::op && options.max_hold_ms != kDefaultMaxHoldMs) {
    char budget[32];
    std::snprintf(budget, sizeof budget, "%gms", options.max_hold_ms);
    name += budget;
  }
  if (options.decode_first) name += "+decode-first";
  return name + scope;
}

std::string describe(const TurnOptions& options, const std::vector<EngineWeight>& weights) {
  const bool shared_by_weights = options.policy == TurnPolicy::serialize ||
                                 (options.policy == TurnPolicy::partition &&
                                  !options.prefill_share && !options.prefill_share_auto);
  const bool weighted = std::any_of(weights.begin(), weights.end(),
                                    [](const EngineWeight& w) { return w.weight != 1.0; });
  if (!shared_by_weights || !weighted) return describe(options);
  std::string list;
  for (const EngineWeight& w : weights) {
    char number[32];
    std::snprintf(number, sizeof number, "%g", w.weight);
    list += (list.empty() ? "" : ",") + w.engine + ":" + number;
  }
  return describe(options) + "+weights=" + list;
}

}  // namespace baton
