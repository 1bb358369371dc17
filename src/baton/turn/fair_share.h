// fair_share: the arithmetic of the serialize turn's weighted fair share of device time,
// the same in one process (SerialTurn) and across the processes of a host (HostTurn).
//
// Each engine has a weight and a virtual time: the device time it has been granted,
// divided by its weight. The turn goes to the waiter of least virtual time, and a holder
// hands over at a yield point once a waiter's virtual time is no more than its own (its
// hold so far counted in), so while several engines want the device each gets device time
// in proportion to its weight, and nobody waits longer than one piece once it is owed the
// turn. An engine that comes back after wanting nothing for longer than kRejoinGraceNs
// starts at the turn's floor (the least virtual time of the engines that want the device
// now): idle time earns no credit, so an engine that wants less than its share gets all
// it wants and no more. One back within the grace never left: the host's work between
// two steps of one engine costs it no share. The scheme is start-time fair queueing
// (Goyal, Vin and Cheng, 1996) with measured device time as the cost of a hold.
// Thread-safety: plain values and pure functions; the turns guard them with their locks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace baton {

// The range the config and the flags accept: 10000:1 between two engines at most.
inline constexpr double kMinTurnWeight = 0.01;
inline constexpr double kMaxTurnWeight = 100.0;
inline constexpr double kDefaultTurnWeight = 1.0;

// Why `weight` is not a weight, or none.
std::optional<std::string> weight_problem(double weight);

struct ShareAccount {
  double weight = kDefaultTurnWeight;
  double virtual_ns = 0.0;  // device ns granted / weight, raised to the floor on returns
};

// A hold of `device_ns` of device time ends.
inline void charge(ShareAccount& account, std::int64_t device_ns) {
  account.virtual_ns += static_cast<double>(std::max<std::int64_t>(device_ns, 0)) / account.weight;
}

// The holder's virtual time with the `running_ns` its present hold has used so far.
inline double virtual_now(const ShareAccount& holder, std::int64_t running_ns) {
  return holder.virtual_ns +
         static_cast<double>(std::max<std::int64_t>(running_ns, 0)) / holder.weight;
}

// How long an engine may want nothing and still keep its place: longer than the host's
// work between two steps of one engine (sampling, delivery, admission), short enough that
// what it can claim back on return is a few ms of device time.
inline constexpr std::int64_t kRejoinGraceNs = 10'000'000;

// An engine asks again `away_ns` after it last wanted the device: past the grace, no
// credit for the idle time.
inline void rejoin(ShareAccount& account, double floor_ns, std::int64_t away_ns) {
  if (away_ns > kRejoinGraceNs) account.virtual_ns = std::max(account.virtual_ns, floor_ns);
}

// The longest piece a holder of weight `holder_weight` and virtual time `holder_virtual_ns`
// (its hold so far counted in) may run while `away` is between two steps (it left
// `away_ns` ago, within the grace; 0 when it is in line again, perhaps since the holder's
// last yield point) and is owed the turn (its virtual time below the holder's). If it
// comes straight back, a piece of its last stretch's device time (`last_stretch_ns`, from
// asking to leaving) times the holder's weight over its own keeps the weights; a
// hold-long piece a step would give a short step less (one piece a step is the most it can
// get). Nullopt when `away` is not owed or away past the grace.
inline std::optional<double> owed_piece_ms(double holder_weight, double holder_virtual_ns,
                                           const ShareAccount& away, std::int64_t away_ns,
                                           std::int64_t last_stretch_ns) {
  if (away_ns > kRejoinGraceNs || last_stretch_ns <= 0) return std::nullopt;
  if (away.virtual_ns >= holder_virtual_ns) return std::nullopt;
  return static_cast<double>(last_stretch_ns) * 1e-6 * holder_weight / away.weight;
}

}  // namespace baton
