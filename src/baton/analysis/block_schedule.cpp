#include "baton/analysis/block_schedule.h"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace baton {
namespace {

constexpr int kMaxArms = 64;

// SplitMix64: a fixed, portable mix (std::shuffle and the standard distributions are not
// specified bit for bit, and the order must not change with the library).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A permutation of 0..n-1 by Fisher-Yates over a stream keyed by (seed, a, b). The modulo's
// bias is below n / 2^64.
std::vector<int> permutation(int n, std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  std::vector<int> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::uint64_t state = mix(mix(mix(seed) ^ a) ^ (b * 0x2545f4914f6cdd1dULL));
  for (int i = n - 1; i > 0; --i) {
    state = mix(state);
    const auto j = static_cast<int>(state % static_cast<std::uint64_t>(i + 1));
    std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
  }
  return p;
}

// Key spaces kept apart: rounds of a cycle's day sequence, and the cycle's day shifts.
constexpr std::uint64_t kShiftKey = ~std::uint64_t{0};

}  // namespace

BlockSchedule::BlockSchedule(const BlockScheduleOptions& options)
    : arms_(options.arms), blocks_per_day_(0), seed_(options.seed) {
  if (options.arms < 2 || options.arms > kMaxArms) {
    throw std::invalid_argument("BlockScheduleOptions.arms must be 2 to 64");
  }
  const double per_day = 24.0 / options.block_hours;
  const double whole = std::round(per_day);
  if (!(options.block_hours > 0.0 && std::isfinite(options.block_hours)) || whole < 1.0 ||
      std::abs(whole * options.block_hours - 24.0) * 3600.0 > 1e-3) {
    throw std::invalid_argument(
        "BlockScheduleOptions.block_hours must divide the day into whole blocks (e.g. 0.5, 1, 2, "
        "3, 4, 6, 8, 12 or 24)");
  }
  blocks_per_day_ = static_cast<std::int64_t>(whole);
}

int BlockSchedule::arm(std::int64_t block) const {
  if (block < 0) throw std::invalid_argument("block index must be >= 0");
  const std::int64_t day = block / blocks_per_day_;
  const std::int64_t slot = block % blocks_per_day_;
  const auto cycle = static_cast<std::uint64_t>(day / arms_);
  const auto day_in_cycle = static_cast<std::size_t>(day % arms_);
  const auto round = static_cast<std::uint64_t>(slot / arms_);
  const auto position = static_cast<std::size_t>(slot % arms_);
  const int base = permutation(arms_, seed_, cycle, round)[position];
  const int shift = permutation(arms_, seed_, cycle, kShiftKey)[day_in_cycle];
  return (base + shift) % arms_;
}

std::vector<int> BlockSchedule::arms(std::int64_t first, std::int64_t count) const {
  if (count < 0) throw std::invalid_argument("block count must be >= 0");
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = first; k < first + count; ++k) out.push_back(arm(k));
  return out;
}

}  // namespace baton
