// UniqueFd: owns one file descriptor and closes it on destruction. Pipe: the two ends of a
// pipe, both closed on exec; make_pipe creates one.
// Thread-safety: UniqueFd and Pipe are plain values (one owner at a time); make_pipe is
// safe from any thread and throws std::system_error when the pipe cannot be created.
#pragma once

#include <unistd.h>

#include <utility>

namespace baton {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }

  int get() const { return fd_; }
  // close() is not retried on EINTR: the descriptor is released either way (Linux, macOS),
  // and a retry could close one that another thread has just opened.
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Both ends close on exec, so no child inherits them. `nonblocking`: both ends, too.
Pipe make_pipe(bool nonblocking);

}  // namespace baton
