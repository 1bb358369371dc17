// ChildProcess: another program run with its standard output in a file (posix_spawn), for
// the `cross-process` scenario's `baton repro` processes. The destructor kills (SIGKILL)
// and reaps a child still running, so no early return leaves one behind.
// Thread-safety: one owner thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace baton {

class ChildProcess {
 public:
  // Throws std::runtime_error when the program cannot be started.
  ChildProcess(const std::string& program, const std::vector<std::string>& args,
               const std::filesystem::path& stdout_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit code (128 + N for death by signal N), or empty when it runs past `timeout`;
  // once it has exited, its code again at every call.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = 0;  // once reaped_
};

// This program's own path (/proc/self/exe), to launch more of itself.
std::string self_executable();

}  // namespace baton
