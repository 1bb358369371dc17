// StopSignals: turns SIGINT, SIGTERM and SIGHUP into a std::stop_token, so that a long
// command (writing a model, a generation, later the server) stops cleanly and removes
// what it left half-done, instead of dying in the middle. A handler writes the signal into
// a self-pipe that a watcher thread reads (blocking the signals instead would miss the
// threads OpenBLAS starts before main). A second signal ends the process at once, as the
// default would. The previous handlers come back on destruction.
// Thread-safety: one per process at a time (a second throws std::logic_error); the
// accessors are thread-safe.
#pragma once

#include <signal.h>

#include <array>
#include <atomic>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>

namespace baton {

// Thrown by a step that saw the stop token: the command was stopped by `signal`, and
// exits with 128 + signal once everything it owns is unwound.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal)
      : std::runtime_error(std::string("stopped by ") + sigabbrev(signal)), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  static const char* sigabbrev(int signal);
  int signal_;
};

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  std::stop_token token() const { return source_.get_token(); }
  // The signal that asked to stop, 0 while none has.
  int received() const { return received_.load(std::memory_order_acquire); }
  // Throws Interrupted when a signal has asked to stop.
  void throw_if_stopped() const;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};

  void watch(std::stop_token stop);
  void restore() noexcept;
  void close_pipe() noexcept;

  int pipe_[2] = {-1, -1};
  std::array<struct sigaction, kSignals.size()> previous_{};
  std::size_t installed_ = 0;
  std::stop_source source_;
  std::atomic<int> received_{0};
  std::jthread watcher_;  // last: starts after the rest
};

}  // namespace baton
