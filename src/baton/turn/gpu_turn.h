// GpuTurn: the process-wide arbiter that decides which engine may put work on the device.
//
// Lifecycle of the turn (serialize):
//   free ──acquire──> held(client, depth 1) ──re-entrant acquire──> held(depth n+1)
//   held ──release at depth 1──> drain holder's stream + default stream
//        ──> hand over to the first waiter (held by it) or free ──> raise the drain error
//   held ──yield_point with a waiter──> drain ──> hand over ──> wait in line ──> held
// Under serialize/op a prefill's yield points come between pieces of a layer whose size
// the engine picks from piece_budget_ms(), and any burst's between layers, so a waiter
// that is owed the turn by the fair share waits for at most about one piece.
// Under `concurrent` every call returns at once and nothing is drained.
//
// Clients are registered before the engines start; each names the stream its bursts
// encode on. A client id is used from one thread at a time (its engine's thread).
// Thread-safety: acquire/release/yield_point are called concurrently by engine threads;
// release() and yield_point() only by the thread that holds the turn.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "baton/gpu/stream.h"
#include "baton/turn/burst_kind.h"
#include "baton/turn/turn_metrics.h"

namespace baton {

class GpuTurn {
 public:
  virtual ~GpuTurn() = default;

  virtual std::string_view policy_name() const = 0;
  // Before any acquire(): a client whose bursts encode on `stream`.
  virtual TurnClientId register_client(std::string name, Stream& stream) = 0;
  // Blocks until `client` holds the turn. Re-entrant on the holding thread.
  virtual void acquire(TurnClientId client, BurstKind kind) = 0;
  // Holder thread. At depth 1: drains, hands the turn over, then throws the first
  // GpuError the drain saw. The turn has moved on even when it throws.
  virtual void release(TurnClientId client) = 0;
  // Holder thread, on an error path: as release(), but drain errors stay pending on
  // their streams for the next synchronize (never lost).
  virtual void release_quietly(TurnClientId client) noexcept = 0;
  // Holder thread, at a boundary inside a burst: hands over if the quantum says so.
  // Returns with the turn held again, and how long it waited for it back (0: kept it; the
  // drain of its own work before a hand-over is not waiting); throws a drain error after
  // re-acquiring.
  virtual std::chrono::nanoseconds yield_point(TurnClientId client, Boundary boundary) = 0;
  // The fraction of the device `client`'s next work should size itself for (1: all of it).
  // Any thread; only `partition` ever answers less than 1.
  virtual double device_share(TurnClientId /*client*/) const { return 1.0; }
  // Holder thread, running a `kind` burst: the device time, in ms, each piece of its next
  // layer may take, when the layer should come in pieces with a yield point after each
  // (serialize/op: a prefill while other engines use the turn, any burst while an engine
  // of higher priority does); none: whole layers, launched ahead.
  virtual std::optional<double> piece_budget_ms(TurnClientId /*client*/,
                                                BurstKind /*kind*/) const {
    return std::nullopt;
  }
  // Any thread, any time (from the next hand-over on): the client's weight, its share beside
  // the others that want it (serialize: fair_share.h; partition: its share of the chip).
  // Throws std::invalid_argument outside [kMinTurnWeight, kMaxTurnWeight].
  virtual void set_weight(TurnClientId client, double weight) = 0;
  virtual TurnStats stats() const = 0;
};

// Holds the turn for one burst (RAII). release() raises drain errors; the destructor,
// reached on an error path, releases quietly.
class TurnHold {
 public:
  TurnHold(GpuTurn& turn, TurnClientId client, BurstKind kind) : turn_(turn), client_(client) {
    turn_.acquire(client_, kind);
  }
  ~TurnHold() {
    if (held_) turn_.release_quietly(client_);
  }
  TurnHold(const TurnHold&) = delete;
  TurnHold& operator=(const TurnHold&) = delete;

  std::chrono::nanoseconds yield_point(Boundary boundary) {
    return turn_.yield_point(client_, boundary);
  }
  void release() {
    held_ = false;
    turn_.release(client_);
  }
  // On an error path, before the hold goes out of scope: as the destructor does.
  void release_if_held() noexcept {
    if (held_) {
      held_ = false;
      turn_.release_quietly(client_);
    }
  }

 private:
  GpuTurn& turn_;
  TurnClientId client_;
  bool held_ = true;
};

}  // namespace baton
