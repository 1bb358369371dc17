// TurnOptions: which GPU turn policy runs and how its quantum behaves.
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

enum class TurnPolicy {
  concurrent,  // no arbitration: every engine submits whenever it likes (today's design)
  serialize,   // one holder at a time, FIFO, drained before every hand-over
  partition,   // side by side, with prefill sized for part of the chip while others run
};

enum class Quantum {
  burst,  // the turn is held for a whole burst
  layer,  // a prefill chunk hands the turn over at each layer boundary when someone waits
  op,     // ... and also between pieces of a layer of at most max_hold_ms (the finest)
};

// Who takes turns: the engines of this process, or those of every baton process of the
// machine that uses the same turn name (serialize only; see host_turn.h).
enum class TurnScope { process, host };

// The default of TurnOptions::max_hold_ms: of 0.5, 1 and 2 ms, 0.5 gave the waiting decoder
// the lowest p50 and p99 and the highest aggregate on the H200 (docs/benchmarks.md); and
// the range the flags and the config accept.
inline constexpr double kDefaultMaxHoldMs = 0.5;
inline constexpr double kMinMaxHoldMs = 0.05;
inline constexpr double kMaxMaxHoldMs = 10000.0;

// Longer than a piece and a queued one at the default hold, so that a warned waiter spins
// through the drain it was warned of.
inline constexpr std::chrono::microseconds kCudaHandoverSpin{1000};

struct TurnOptions {
  TurnPolicy policy = TurnPolicy::concurrent;
  Quantum quantum = Quantum::op;
  // Of waiters owed the same device time, decode bursts go before prefill chunks (the
  // weights decide everything else).
  bool decode_first = true;
  // serialize/op: while other engines use the turn, a prefill layer is cut into pieces of
  // at most this much device time, so a waiter is held behind at most about this long.
  double max_hold_ms = kDefaultMaxHoldMs;
  // partition: prefill's share of the chip while others run; none: the engines' weights
  // split it (GpuTurn::set_weight).
  std::optional<double> prefill_share;
  // partition: the share follows the decoders' measured bursts (share_controller.h).
  bool prefill_share_auto = false;
  // How long a waiter spins before it parks in the kernel (BATON_TURN_SPIN_US).
  std::chrono::microseconds spin{50};
  // Around a hand-over, how long the holder spins for its stream to drain and the waiter
  // told it goes next spins for the grant, instead of sleeping: two wake-ups fewer in the
  // device's idle gap between holders (BATON_TURN_HANDOVER_SPIN_US; 0: both sleep). The
  // host-wide turn (TurnScope::host) spins its holder only: its waiters park as before.
  std::chrono::microseconds handover_spin{0};
  TurnScope scope = TurnScope::process;
  // host scope: the turn's name; the processes that share one use /dev/shm/baton-turn-NAME.
  std::string host_name = "baton";
  // host scope: how often a parked waiter checks that the holder's process is alive.
  std::chrono::milliseconds liveness_poll{20};

  // The defaults of `backend`, then the environment's overrides. On cuda a hand-over spins
  // for kCudaHandoverSpin (bench/turn_bench's device gap: 38 -> 6 us); on the cpu it
  // sleeps, since the CPU backend's device is the cores a spinner would take.
  static TurnOptions with_env_defaults(std::string_view backend);
};

std::optional<TurnPolicy> parse_turn_policy(std::string_view name);
std::optional<Quantum> parse_quantum(std::string_view name);
std::optional<TurnScope> parse_turn_scope(std::string_view name);
std::string_view to_string(TurnScope scope);
std::string_view to_string(TurnPolicy policy);
std::string_view to_string(Quantum quantum);
// "auto", "weights", or a share in [0.01, 1] (written as a number); none for anything else.
struct PrefillShare {
  bool automatic = false;
  std::optional<double> share;  // none: by the weights
};
std::optional<PrefillShare> parse_prefill_share(std::string_view text);
void apply(TurnOptions& options, PrefillShare share);
// The policy with what matters of its options: "concurrent", "partition/auto",
// "partition/weights", "partition/0.3",
// "serialize/layer",
// "serialize/op+decode-first", "serialize/op1ms" (a budget other than the default),
// "serialize/layer@host". Names scenarios in reports and runs
// in the ledger.
std::string describe(const TurnOptions& options);
// describe() with the engines' turn weights when any is not 1 and engines share the GPU by
// them ("serialize/op+decode-first+weights=chat:3,long:1"): runs of other weights are
// told apart in the ledger.
struct EngineWeight {
  std::string engine;
  double weight = 1.0;
};
std::string describe(const TurnOptions& options, const std::vector<EngineWeight>& weights);

}  // namespace baton
