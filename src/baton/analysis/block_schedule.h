// Which arm of an experiment runs in block k: a randomised order balanced over the day, so
// that neither time of day nor the traffic that follows it can explain a difference
// between arms.
// - Permuted blocks: blocks 0..n-1, n..2n-1, ... (n = arms) each hold every arm once, in a
//   random order; so any two arms stay at most one block apart in count.
// - Balanced over the day: the day's blocks (24 h / block length) are a sequence of such
//   rounds, and day d of a cycle of n days runs that sequence with the arms shifted by
//   s_d (arm -> (arm + s_d) mod n), the shifts s_0..s_{n-1} a random permutation of 0..n-1.
//   So over each cycle of n days every block of the day (the same clock time) runs each
//   arm exactly once: a Latin square over days and arms. Each cycle draws anew.
// Deterministic for a seed: block k's arm is a pure function of (seed, k), so a restarted
// server resumes the same order. When the day's block count is no multiple of n, the day's
// last round is cut short (the day balance still holds; the round balance then holds within
// days).
// Thread-safety: an immutable value type; arm() is const and pure.
#pragma once

#include <cstdint>
#include <vector>

namespace baton {

struct BlockScheduleOptions {
  int arms = 2;              // 2 or more
  double block_hours = 1.0;  // must divide 24 h into a whole number of blocks
  std::uint64_t seed = 0;
};

class BlockSchedule {
 public:
  // Throws std::invalid_argument naming the field: arms < 2 or > 64, block_hours not
  // dividing the day (to within a millisecond) or not finite.
  explicit BlockSchedule(const BlockScheduleOptions& options);

  // The arm (0..arms-1) of block k >= 0 (throws for k < 0).
  int arm(std::int64_t block) const;
  // The arms of blocks first..first+count-1.
  std::vector<int> arms(std::int64_t first, std::int64_t count) const;

  int arm_count() const { return arms_; }
  std::int64_t blocks_per_day() const { return blocks_per_day_; }

 private:
  int arms_;
  std::int64_t blocks_per_day_;
  std::uint64_t seed_;
};

}  // namespace baton
