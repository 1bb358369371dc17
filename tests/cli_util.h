// Runs the `baton` binary built with the tests (BATON_BINARY) through the shell and
// captures its exit code and output, for end-to-end tests of the command line.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace baton::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string output;  // stdout and stderr together
};

// Any shell command line, stderr into the output.
inline CommandResult run_command(const std::string& command_line) {
  const std::string command = command_line + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// With `timeout_s` > 0 the command is killed after that many seconds (exit code 137), so
// that a test of a hang fails instead of hanging.
inline CommandResult run_baton(const std::string& args, int timeout_s = 0) {
  const std::string limit =
      timeout_s > 0 ? "timeout -s KILL " + std::to_string(timeout_s) + " " : std::string();
  return run_command(limit + std::string(BATON_BINARY) + " " + args);
}

}  // namespace baton::testing
