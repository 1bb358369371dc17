// Tests of `baton supervise`: backoff parsing, then the supervisor with real children
// (/bin/sh scripts that count their starts in a temp dir), then signals. The signal tests
// run the supervisor in a helper process of its own (this test binary, started again with
// a filter and an environment variable), so that SIGTERM and SIGINT never reach the test
// process itself. Last, the `baton` command line, once main.cpp wires the verb.
#include "baton/supervise/supervisor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_util.h"
#include "temp_dir.h"
#include "test_util.h"

extern char** environ;

namespace baton {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using namespace std::chrono_literals;
using testing::TempDir;

// ---- Helpers -----------------------------------------------------------------------------

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int count_lines(const std::string& path) {
  int lines = 0;
  for (const char c : read_file(path)) lines += c == '\n' ? 1 : 0;
  return lines;
}

// A shell fragment that counts this start in `counter` and leaves the count in $n.
std::string count_start(const std::string& counter) {
  return "n=$(($(cat '" + counter + "' 2>/dev/null || echo 0) + 1)); echo $n > '" + counter + "'; ";
}

struct Supervised {
  SuperviseOutcome outcome;
  std::string log;
};

Supervised supervise_script(const std::string& script, int max_restarts = 5,
                            const std::string& backoff = "10ms:40ms") {
  SuperviseOptions options;
  options.command = {"/bin/sh", "-c", script};
  options.max_restarts = max_restarts;
  options.backoff = parse_backoff(backoff);
  std::ostringstream log;
  Supervised result;
  result.outcome = supervise(options, log);
  result.log = log.str();
  return result;
}

bool log_contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- Backoff -----------------------------------------------------------------------------

TEST(SupervisorBackoff, ParsesSecondsAndMilliseconds) {
  EXPECT_EQ(parse_duration("200ms"), 200ms);
  EXPECT_EQ(parse_duration("5s"), 5000ms);
  EXPECT_EQ(parse_duration("1.5"), 1500ms);
  EXPECT_EQ(parse_duration("0"), 0ms);

  const Backoff pair = parse_backoff("200ms:5s");
  EXPECT_EQ(pair.initial, 200ms);
  EXPECT_EQ(pair.max, 5000ms);
  const Backoff alone = parse_backoff("2");
  EXPECT_EQ(alone.initial, 2000ms);
  EXPECT_EQ(alone.max, 60000ms);  // the default cap
  const Backoff long_initial = parse_backoff("90s");
  EXPECT_EQ(long_initial.max, 90000ms);  // the cap never undercuts INITIAL
}

TEST(SupervisorBackoff, RejectsMalformedValuesWithTheirOrigin) {
  for (const char* text :
       {"", "abc", "-1s", "1m", "5s:1s", "1s:", ":5s", "1s:2s:3s", "2d", "inf"}) {
    try {
      parse_backoff(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(log_contains(e.what(), "[supervise] --backoff")) << e.what();
    }
  }
  EXPECT_THROW(parse_duration("25h"), std::invalid_argument);
}

TEST(SupervisorBackoff, DoublesFromInitialAndStopsAtMax) {
  const Backoff backoff{.initial = 100ms, .max = 1000ms};
  EXPECT_EQ(backoff.before_restart(1), 100ms);
  EXPECT_EQ(backoff.before_restart(2), 200ms);
  EXPECT_EQ(backoff.before_restart(3), 400ms);
  EXPECT_EQ(backoff.before_restart(4), 800ms);
  EXPECT_EQ(backoff.before_restart(5), 1000ms);
  EXPECT_EQ(backoff.before_restart(1000000), 1000ms);  // no overflow
  EXPECT_EQ((Backoff{.initial = 0ms, .max = 50ms}.before_restart(7)), 0ms);
}

// ---- The supervisor with real children ---------------------------------------------------

TEST(Supervisor, ChildExitingZeroRunsOnceAndGivesZero) {
  TempDir dir;
  const std::string counter = (dir.path() / "starts").string();
  const Supervised r = supervise_script(count_start(counter) + "exit 0");
  EXPECT_EQ(r.outcome.exit_code, 0) << r.log;
  EXPECT_EQ(r.outcome.starts, 1);
  EXPECT_EQ(r.outcome.restarts, 0);
  EXPECT_EQ(read_file(counter), "1\n");
  EXPECT_EQ(r.log, "");  // a clean run is silent
}

TEST(Supervisor, OtherExitCodesEndTheSupervisionWithThatCode) {
  for (const int code : {3, 1, 127}) {
    TempDir dir;
    const std::string counter = (dir.path() / "starts").string();
    const Supervised r = supervise_script(count_start(counter) + "exit " + std::to_string(code));
    EXPECT_EQ(r.outcome.exit_code, code) << r.log;
    EXPECT_EQ(r.outcome.starts, 1);
    EXPECT_EQ(read_file(counter), "1\n");
    EXPECT_FALSE(log_contains(r.log, "cannot execute")) << r.log;  // 127 of the child's own
  }
}

TEST(Supervisor, RestartsAfterTheFatalCodeUntilTheChildSucceeds) {
  TempDir dir;
  const std::string counter = (dir.path() / "starts").string();
  const Supervised r =
      supervise_script(count_start(counter) + "[ $n -le 2 ] && exit 70; exit 0", 5, "10ms:40ms");
  EXPECT_EQ(r.outcome.exit_code, 0) << r.log;
  EXPECT_EQ(r.outcome.starts, 3);
  EXPECT_EQ(r.outcome.restarts, 2);
  EXPECT_EQ(read_file(counter), "3\n");
  EXPECT_TRUE(log_contains(r.log,
                           "exited with code 70 (the device can no longer be used); "
                           "restart 1 of 5 in 10ms"))
      << r.log;
  EXPECT_TRUE(log_contains(r.log, "restart 2 of 5 in 20ms")) << r.log;
}

TEST(Supervisor, RestartsAChildKilledByASignal) {
  TempDir dir;
  const std::string counter = (dir.path() / "starts").string();
  const Supervised r =
      supervise_script(count_start(counter) + "[ $n -le 1 ] && kill -KILL $$; exit 0");
  EXPECT_EQ(r.outcome.exit_code, 0) << r.log;
  EXPECT_EQ(r.outcome.restarts, 1);
  EXPECT_EQ(read_file(counter), "2\n");
  EXPECT_TRUE(log_contains(r.log, "was killed by signal 9 (SIGKILL); restart 1 of 5")) << r.log;
}

TEST(Supervisor, GivesUpWith70WhenTheRestartsAreUsedUp) {
  TempDir dir;
  const std::string counter = (dir.path() / "starts").string();
  const Supervised r = supervise_script(count_start(counter) + "exit 70", 2);
  EXPECT_EQ(r.outcome.exit_code, 70) << r.log;
  EXPECT_EQ(r.outcome.starts, 3);
  EXPECT_EQ(r.outcome.restarts, 2);
  EXPECT_EQ(read_file(counter), "3\n");
  EXPECT_TRUE(log_contains(r.log, "giving up after 2 restarts (--max-restarts 2), exiting with 70"))
      << r.log;

  // A signal with no restart left gives 70 as well, not 128 + N.
  const Supervised killed = supervise_script("kill -KILL $$", 0);
  EXPECT_EQ(killed.outcome.exit_code, 70) << killed.log;
  EXPECT_EQ(killed.outcome.starts, 1);
}

TEST(Supervisor, WaitsTheBackoffBeforeEachRestart) {
  const auto begin = std::chrono::steady_clock::now();
  const Supervised r = supervise_script("exit 70", 3, "40ms:80ms");
  const auto elapsed = std::chrono::steady_clock::now() - begin;
  EXPECT_EQ(r.outcome.exit_code, 70) << r.log;
  EXPECT_GE(elapsed, 40ms + 80ms + 80ms);
}

TEST(Supervisor, LooksTheCommandUpInPath) {
  SuperviseOptions options;
  options.command = {"sh", "-c", "exit 4"};
  std::ostringstream log;
  EXPECT_EQ(supervise(options, log).exit_code, 4) << log.str();
}

TEST(Supervisor, ACommandThatCannotBeExecutedGives127AndSaysWhy) {
  TempDir dir;
  const std::string not_executable = (dir.path() / "script").string();
  std::ofstream(not_executable) << "exit 0\n";
  const struct {
    std::string command;
    std::string reason;
  } cases[] = {
      {"/nonexistent/baton-test-command", "No such file or directory"},
      {"baton-test-command-not-in-path", "No such file or directory"},
      {not_executable, "Permission denied"},
  };
  for (const auto& c : cases) {
    SuperviseOptions options;
    options.command = {c.command};
    std::ostringstream log;
    const SuperviseOutcome outcome = supervise(options, log);
    EXPECT_EQ(outcome.exit_code, kExitCannotExecute) << log.str();
    EXPECT_EQ(outcome.starts, 1);
    EXPECT_EQ(outcome.restarts, 0);
    EXPECT_TRUE(
        log_contains(log.str(), "[supervise] cannot execute '" + c.command + "': " + c.reason))
        << log.str();
  }
}

TEST(Supervisor, RejectsAnEmptyCommand) {
  std::ostringstream log;
  EXPECT_THROW(supervise(SuperviseOptions{}, log), std::invalid_argument);
  SuperviseOptions negative;
  negative.command = {"true"};
  negative.max_restarts = -1;
  EXPECT_THROW(supervise(negative, log), std::invalid_argument);
}

TEST(Supervisor, LeavesTheSignalHandlersAsItFoundThem) {
  struct sigaction before[3];
  const int signals[3] = {SIGTERM, SIGINT, SIGCHLD};
  for (int i = 0; i < 3; ++i) ASSERT_EQ(::sigaction(signals[i], nullptr, &before[i]), 0);
  supervise_script("exit 70", 1);
  for (int i = 0; i < 3; ++i) {
    struct sigaction after {};
    ASSERT_EQ(::sigaction(signals[i], nullptr, &after), 0);
    EXPECT_EQ(after.sa_handler, before[i].sa_handler) << "signal " << signals[i];
  }
}

// ---- Signals, in a helper process ----------------------------------------------------------

constexpr char kHelperScript[] = "BATON_SUPERVISE_TEST_SCRIPT";
constexpr char kHelperBackoff[] = "BATON_SUPERVISE_TEST_BACKOFF";

// Not a test of its own: the body of the helper process the SupervisorSignals tests start.
TEST(SupervisorHelper, SupervisesTheScriptItIsGiven) {
  const char* script = std::getenv(kHelperScript);
  const char* backoff = std::getenv(kHelperBackoff);
  if (script == nullptr || backoff == nullptr) {
    GTEST_SKIP() << "runs only in the helper process that the SupervisorSignals tests start";
  }
  SuperviseOptions options;
  options.command = {"/bin/sh", "-c", script};
  options.max_restarts = 3;
  options.backoff = parse_backoff(backoff);
  std::exit(supervise(options, std::cerr).exit_code);
}

// This test binary, started again to run only SupervisorHelper with `script`; its stderr
// (the supervisor's log) goes to `log_path`. Killed and reaped if still running at the end.
class HelperProcess {
 public:
  HelperProcess(const std::string& script, const std::string& backoff,
                const std::string& log_path) {
    // Everything the child needs is built here: between fork and exec it may only call
    // async-signal-safe functions.
    const std::string exe = fs::read_symlink("/proc/self/exe").string();
    std::vector<std::string> args = {exe, "--gtest_filter=SupervisorHelper.*"};
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!std::string_view(*e).starts_with("GTEST_")) env.emplace_back(*e);
    }
    env.push_back(std::string(kHelperScript) + "=" + script);
    env.push_back(std::string(kHelperBackoff) + "=" + backoff);
    const std::vector<char*> argv = pointers(args);
    const std::vector<char*> envp = pointers(env);
    const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (log_fd < 0 || null_fd < 0) throw std::runtime_error("cannot open the helper's output");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
      ::execve(exe.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(log_fd);
    ::close(null_fd);
    if (pid_ < 0) throw std::runtime_error("fork failed");
  }
  ~HelperProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The helper's wait status, once it has exited within `timeout`.
  std::optional<int> wait_for_exit(milliseconds timeout) {
    std::optional<int> result;
    testing::eventually(
        [&] {
          int status = 0;
          if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
          pid_ = -1;
          result = status;
          return true;
        },
        timeout);
    return result;
  }

 private:
  static std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> result;
    for (std::string& s : strings) result.push_back(s.data());
    result.push_back(nullptr);
    return result;
  }

  pid_t pid_ = -1;
};

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// Writes this shell's pid to `path` in one step, so a reader never sees half of it.
std::string publish_pid(const std::string& path) {
  return "echo $$ > '" + path + ".tmp' && mv '" + path + ".tmp' '" + path + "'; ";
}

class SupervisorSignals : public ::testing::TestWithParam<int> {};

TEST_P(SupervisorSignals, AreForwardedAndTheSupervisorExitsAsTheChildDid) {
  const int sig = GetParam();
  TempDir dir;
  const std::string pid_file = (dir.path() / "child.pid").string();
  const std::string log = (dir.path() / "log").string();
  HelperProcess helper(publish_pid(pid_file) + "exec sleep 30", "10ms", log);
  ASSERT_TRUE(testing::eventually([&] { return fs::exists(pid_file); })) << read_file(log);
  const pid_t sleeper = std::stoi(read_file(pid_file));

  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(helper.pid(), sig), 0);
  const std::optional<int> status = helper.wait_for_exit(10s);
  ASSERT_TRUE(status.has_value()) << "the supervisor did not stop\n" << read_file(log);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, 2s);
  ASSERT_TRUE(WIFEXITED(*status)) << read_file(log);
  EXPECT_EQ(WEXITSTATUS(*status), 128 + sig) << read_file(log);
  EXPECT_FALSE(process_exists(sleeper)) << "the sleep child outlived its supervisor";
  EXPECT_TRUE(log_contains(read_file(log), "forwarding it to child " + std::to_string(sleeper)))
      << read_file(log);
  EXPECT_FALSE(log_contains(read_file(log), "restart 1 of")) << read_file(log);
  if (HasFailure() && process_exists(sleeper)) ::kill(sleeper, SIGKILL);
}

INSTANTIATE_TEST_SUITE_P(Supervisor, SupervisorSignals, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return param.param == SIGTERM ? std::string("SIGTERM")
                                                         : std::string("SIGINT");
                         });

TEST(SupervisorStop, AfterAForwardedSignalEvenTheFatalCodeIsNotRestarted) {
  TempDir dir;
  const std::string starts = (dir.path() / "starts").string();
  const std::string pid_file = (dir.path() / "child.pid").string();
  const std::string log = (dir.path() / "log").string();
  HelperProcess helper("echo x >> '" + starts + "'; trap 'exit 70' TERM; " + publish_pid(pid_file) +
                           "while :; do sleep 0.05; done",
                       "10ms", log);
  ASSERT_TRUE(testing::eventually([&] { return fs::exists(pid_file); })) << read_file(log);

  ASSERT_EQ(::kill(helper.pid(), SIGTERM), 0);
  const std::optional<int> status = helper.wait_for_exit(10s);
  ASSERT_TRUE(status.has_value()) << "the supervisor did not stop\n" << read_file(log);
  ASSERT_TRUE(WIFEXITED(*status)) << read_file(log);
  EXPECT_EQ(WEXITSTATUS(*status), 70) << read_file(log);  // the child's own code
  EXPECT_EQ(count_lines(starts), 1) << read_file(log);
}

TEST(SupervisorStop, ASignalDuringTheBackoffStopsAtOnceWithoutANewChild) {
  TempDir dir;
  const std::string starts = (dir.path() / "starts").string();
  const std::string log = (dir.path() / "log").string();
  HelperProcess helper("echo x >> '" + starts + "'; exit 70", "30s", log);
  ASSERT_TRUE(testing::eventually([&] {
    return log_contains(read_file(log), "restart 1 of 3 in 30s");
  })) << read_file(log);

  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(helper.pid(), SIGTERM), 0);
  const std::optional<int> status = helper.wait_for_exit(10s);
  ASSERT_TRUE(status.has_value()) << "the supervisor did not stop\n" << read_file(log);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, 2s);
  ASSERT_TRUE(WIFEXITED(*status)) << read_file(log);
  EXPECT_EQ(WEXITSTATUS(*status), 128 + SIGTERM) << read_file(log);
  EXPECT_EQ(count_lines(starts), 1) << read_file(log);
  EXPECT_TRUE(log_contains(read_file(log), "SIGTERM during the backoff")) << read_file(log);
}

// ---- The `baton` command line ------------------------------------------------------------

using testing::CommandResult;
using testing::run_baton;

TEST(SuperviseCli, ExitCodesAndMessages) {
  const struct {
    const char* args;
    int exit_code;
    const char* message;
  } cases[] = {
      {"supervise", 2, "COMMAND is required"},
      {"supervise --", 2, "COMMAND is required"},
      {"supervise --backoff 5s:1s -- true", 2, "MAX is shorter than INITIAL"},
      {"supervise --backoff soon -- true", 2, "[supervise] --backoff 'soon'"},
      {"supervise --max-restarts -1 -- true", 2, "--max-restarts"},
      {"supervise -- /nonexistent/baton-test-command", 127, "[supervise] cannot execute"},
      {"supervise -- sh -c 'exit 3'", 3, ""},
      {"supervise sh -c 'exit 0'", 0, ""},  // everything from COMMAND on is COMMAND's
      {"supervise --backoff 10ms --max-restarts 1 -- sh -c 'exit 70'", 70, "giving up"},
  };
  for (const auto& c : cases) {
    const CommandResult r = run_baton(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.output;
    EXPECT_TRUE(log_contains(r.output, c.message)) << c.args << "\n" << r.output;
  }
}

TEST(SuperviseCli, RestartsBatonAfterAFatalDeviceState) {
  // baton itself exits with 70 when the device turns fatal; the supervisor restarts it.
  const std::string repro =
      std::string(BATON_BINARY) + " repro --engine decode --duration 30 --inject-fatal-after 0.2";
  const CommandResult r = run_baton("supervise --backoff 10ms --max-restarts 1 -- " + repro);
  EXPECT_EQ(r.exit_code, 70) << r.output;
  EXPECT_TRUE(log_contains(r.output, "restart 1 of 1")) << r.output;
  EXPECT_TRUE(log_contains(r.output, "giving up")) << r.output;
}

}  // namespace
}  // namespace baton
