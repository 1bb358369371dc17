// Interrupted: thrown by a step that saw a stop signal (StopSignals), so that everything
// the command owns unwinds (a half-written model directory is removed) before the process
// ends by that signal.
// Thread-safety: an immutable value.
#pragma once

#include <signal.h>
#include <string.h>

#include <stdexcept>
#include <string>

namespace baton {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal)
      : std::runtime_error(std::string("stopped by ") + ::strsignal(signal)), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace baton
