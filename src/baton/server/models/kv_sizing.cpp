#include "baton/server/models/kv_sizing.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/server/config/serve_config.h"

namespace baton {
namespace {

std::string gb(std::uint64_t bytes) {
  return fmt::format("{:.1f} GB", static_cast<double>(bytes) / 1e9);
}

}  // namespace

KvSize size_kv_budget(const DeviceMemory& memory, double fraction, const KvDemand& demand,
                      int models_to_size, std::uint64_t weights_to_come) {
  const std::uint64_t allowed =
      static_cast<std::uint64_t>(static_cast<double>(memory.total_bytes) * fraction);
  const std::uint64_t in_use = memory.total_bytes - std::min(memory.free_bytes, memory.total_bytes);
  const std::uint64_t taken = in_use + demand.weight_bytes + weights_to_come;
  const std::uint64_t left = allowed > taken ? allowed - taken : 0;
  const std::uint64_t share = left / static_cast<std::uint64_t>(std::max(models_to_size, 1));
  const std::uint64_t floor = demand.context_tokens * demand.bytes_per_token;
  const std::uint64_t ceiling = floor * static_cast<std::uint64_t>(std::max(demand.max_batch, 1));
  std::string how = fmt::format("auto: {} of {}, {} in use, {} of weights", fraction,
                                gb(memory.total_bytes), gb(in_use), gb(demand.weight_bytes));
  if (models_to_size > 1) {
    how += fmt::format(", shared by {} models ({} of their weights to come)", models_to_size,
                       gb(weights_to_come));
  }
  if (share < floor) {
    throw ConfigError(fmt::format(
        "models.{}: kv_budget_mb \"auto\" leaves {} for its KV cache ({}), less than one "
        "sequence of {} tokens needs ({}); give kv_budget_mb a number, lower context_length, "
        "or raise gpu_memory_fraction",
        demand.model, gb(share), how, demand.context_tokens, gb(floor)));
  }
  if (share > ceiling) {
    how += fmt::format(", capped at max_batch x context ({} x {} tokens)", demand.max_batch,
                       demand.context_tokens);
  }
  return KvSize{.budget_bytes = std::min(share, ceiling), .how = how};
}

KvSizer::KvSizer(const std::map<std::string, std::uint64_t>& sized_models, double fraction)
    : fraction_(fraction), weights_(sized_models) {
  for (const auto& entry : sized_models) waiting_.insert(entry.first);
}

KvSizer::Sized KvSizer::size(const std::function<DeviceMemory()>& read_memory,
                             const KvDemand& demand) {
  std::unique_lock lock(mu_);
  waiting_.insert(demand.model);  // a model the list did not name still counts itself
  std::uint64_t weights_to_come = 0;
  for (const std::string& model : waiting_) {
    if (model == demand.model) continue;
    if (auto it = weights_.find(model); it != weights_.end()) weights_to_come += it->second;
  }
  KvSize sized = size_kv_budget(read_memory(), fraction_, demand, static_cast<int>(waiting_.size()),
                                weights_to_come);
  waiting_.erase(demand.model);
  return Sized{.size = std::move(sized), .hold = std::move(lock)};
}

void KvSizer::release(const std::string& model) {
  std::lock_guard lock(mu_);
  waiting_.insert(model);
}

}  // namespace baton
