// `baton make-model` end to end through the command line: a model directory that baton's
// readers load, exit code 2 for bad flags, and no writing into a non-empty directory
// without --force.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "baton/model/config/config_reader.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "cli_util.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::run_baton;
using testing::TempDir;

TEST(MakeModelCli, WritesALoadableModelAndSaysWhat) {
  TempDir dir;
  const fs::path out = dir.path() / "tiny-qwen3";
  const auto r = run_baton("make-model --arch qwen3 --out " + out.string() +
                           " --hidden 32 --heads 2 --kv-heads 1 --layers 1 --dtype f32 --seed 9");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model.safetensors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("parameters: "), std::string::npos) << r.output;
  const ModelConfig config = read_model_config(out);
  EXPECT_EQ(config.arch, ModelArch::qwen3);
  EXPECT_EQ(config.hidden_size, 32);
  EXPECT_EQ(config.head_dim, 16);
  EXPECT_EQ(config.num_layers, 1);
  EXPECT_EQ(config.dtype, "float32");
  EXPECT_NO_THROW(BpeTokenizer::from_directory(out));
}

TEST(MakeModelCli, BadFlagsExitWithTwo) {
  TempDir dir;
  const std::string out = " --out " + (dir.path() / "m").string();
  for (const std::string& args : {"--arch gpt9" + out, "--arch qwen2 --dtype f8" + out,
                                  "--arch qwen2 --shape huge" + out, "--arch llama --heads 3" + out,
                                  "--arch llama --vocab 100" + out, std::string("--arch llama")}) {
    const auto r = run_baton("make-model " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "m"));
}

TEST(MakeModelCli, ANonEmptyDirectoryNeedsForce) {
  TempDir dir;
  std::ofstream(dir.path() / "notes.txt") << "mine";
  const std::string args = "make-model --arch llama --out " + dir.path().string();
  const auto refused = run_baton(args);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_FALSE(fs::exists(dir.path() / "config.json"));
  const auto forced = run_baton(args + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_EQ(read_model_config(dir.path()).arch, ModelArch::llama);
  EXPECT_TRUE(fs::exists(dir.path() / "notes.txt"));
}

// Nothing is written past 4 GiB without --force, nor past the disk's free space with it,
// and the message says how big the model is.
TEST(MakeModelCli, TheSizeIsCheckedBeforeWriting) {
  TempDir dir;
  const std::string args =
      "make-model --arch llama --hidden 65536 --layers 64 --out " + (dir.path() / "m").string();
  const auto refused = run_baton(args);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("this model is 1.5 TiB, over the 4.0 GiB"), std::string::npos)
      << refused.output;
  // The largest shape allowed (petabytes): no disk has room for it.
  const auto no_room = run_baton(
      "make-model --arch llama --hidden 1048576 --layers 1024 --force "
      "--out " +
      (dir.path() / "m").string());
  EXPECT_EQ(no_room.exit_code, 2) << no_room.output;
  EXPECT_NE(no_room.output.find("free"), std::string::npos) << no_room.output;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// On a terminal the write shows a progress bar (script(1) gives the command one).
TEST(MakeModelCli, ATerminalSeesProgress) {
  if (testing::run_command("script --version").exit_code != 0) {
    GTEST_SKIP() << "script(1) from util-linux is missing";
  }
  TempDir dir;
  const std::string args = "make-model --arch llama --hidden 256 --layers 4 --dtype f32 --out ";
  const auto tty = testing::run_command("script -qec '" + std::string(BATON_BINARY) + " " + args +
                                        (dir.path() / "a").string() + "' /dev/null");
  EXPECT_EQ(tty.exit_code, 0) << tty.output;
  EXPECT_NE(tty.output.find("model.safetensors ["), std::string::npos) << tty.output;
  EXPECT_NE(tty.output.find("100%"), std::string::npos) << tty.output;
  const auto piped = run_baton(args + (dir.path() / "b").string());
  EXPECT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(piped.output.find("model.safetensors ["), std::string::npos) << piped.output;
}

// SIGTERM (or Ctrl-C) in the middle of the write: no staging directory and no model left
// behind, and the process ends by the signal (as a shell sees 128 + 15).
TEST(MakeModelCli, ASignalMidWriteLeavesNothingBehind) {
  TempDir dir;
  const fs::path out = dir.path() / "q";
  const std::string out_text = out.string();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl(BATON_BINARY, BATON_BINARY, "make-model", "--arch", "qwen2", "--shape", "qwen2.5-0.5b",
          "--out", out_text.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto staging_exists = [&] {
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      if (entry.path().filename().string().starts_with(".q.partial-")) return true;
    }
    return false;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!staging_exists() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(staging_exists());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // into the weights
  kill(child, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace baton
