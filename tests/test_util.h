// Helpers shared by the tests: a gate that device work can wait on, a fault hook that
// hangs one chosen buffer, and polling with a deadline (tests never sleep for a fixed time to "let
// things happen").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <thread>

#include "baton/gpu/command_buffer.h"

namespace baton::testing {

// Device work that blocks until open() is called: keeps a buffer in flight on purpose.
class Gate {
 public:
  Gate() : opened_(promise_.get_future().share()) {}
  void open() { promise_.set_value(); }
  Op op(std::size_t bytes = 0) const {
    return Op{.run = [f = opened_] { f.wait(); }, .bytes = bytes};
  }

 private:
  std::promise<void> promise_;
  std::shared_future<void> opened_;
};

// Gives exactly the Nth committed buffer of the process (or, after only_on(), of one
// stream) `fault` (a hang by default); `hangs` counts the faults realized.
class HangNth final : public FaultHooks {
 public:
  explicit HangNth(std::uint64_t n, BufferFault fault = BufferFault::hang) : n_(n), fault_(fault) {}
  // Counts only the buffers of `stream` (chosen once its engine exists).
  void only_on(StreamId stream) { only_on_.store(stream); }
  BufferFault on_commit(StreamId stream) override {
    const std::int64_t only = only_on_.load();
    if (only >= 0 && stream != static_cast<StreamId>(only)) return BufferFault::none;
    return ++commits_ == n_ ? fault_ : BufferFault::none;
  }
  bool stall_now(StreamId) override { return false; }
  double slowdown(StreamId, TimePoint) override { return 1.0; }
  void realized(StreamId, BufferFault) override { ++hangs; }
  std::atomic<int> hangs{0};

 private:
  const std::uint64_t n_;
  const BufferFault fault_;
  std::atomic<std::int64_t> only_on_{-1};  // -1: every stream
  std::atomic<std::uint64_t> commits_{0};
};

// Polls `condition` until it holds or `timeout` passes; returns its last value.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace baton::testing
