// TurnOptions: which GPU turn policy runs and how its quantum behaves.
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace baton {

enum class TurnPolicy {
  concurrent,  // no arbitration: every engine submits whenever it likes (today's design)
  serialize,   // one holder at a time, FIFO, drained before every hand-over
  partition,   // side by side, with prefill sized for part of the chip while others run
};

enum class Quantum {
  burst,  // the turn is held for a whole burst
  layer,  // a prefill chunk hands the turn over at each layer boundary when someone waits
  op,     // ... and also between the ops inside a layer (the finest quantum)
};

// Who takes turns: the engines of this process, or those of every baton process of the
// machine that uses the same turn name (serialize only; see host_turn.h).
enum class TurnScope { process, host };

struct TurnOptions {
  TurnPolicy policy = TurnPolicy::concurrent;
  Quantum quantum = Quantum::burst;
  bool decode_first = false;   // waiting decode bursts go before waiting prefill chunks
  double prefill_share = 0.5;  // partition: prefill's share of the chip while others run
  // How long a waiter spins before it parks in the kernel (BATON_TURN_SPIN_US).
  std::chrono::microseconds spin{50};
  TurnScope scope = TurnScope::process;
  // host scope: the turn's name; the processes that share one use /dev/shm/baton-turn-NAME.
  std::string host_name = "baton";
  // host scope: how often a parked waiter checks that the holder's process is alive.
  std::chrono::milliseconds liveness_poll{20};

  static TurnOptions with_env_defaults();
};

std::optional<TurnPolicy> parse_turn_policy(std::string_view name);
std::optional<Quantum> parse_quantum(std::string_view name);
std::optional<TurnScope> parse_turn_scope(std::string_view name);
std::string_view to_string(TurnScope scope);
std::string_view to_string(TurnPolicy policy);
std::string_view to_string(Quantum quantum);
// The policy with what matters of its options: "concurrent", "serialize/layer",
// "serialize/op+decode-first", "serialize/layer@host". Names scenarios in reports and runs
// in the ledger.
std::string describe(const TurnOptions& options);

}  // namespace baton
