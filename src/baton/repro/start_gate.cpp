#include "baton/repro/start_gate.h"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

namespace baton {
namespace {

namespace fs = std::filesystem;

constexpr auto kPoll = std::chrono::milliseconds(2);
constexpr const char* kOpen = "open";

std::size_t ready_count(const fs::path& gate) {
  std::size_t n = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(gate)) {
    if (entry.path().filename().string().starts_with("ready-")) ++n;
  }
  return n;
}

void touch(const fs::path& file) {
  std::ofstream out(file);
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace

void wait_at_start_gate(const fs::path& gate, std::chrono::milliseconds limit) {
  // The process and the thread: unique among the children, and among a test's threads.
  const std::size_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
  touch(gate / ("ready-" + std::to_string(::getpid()) + "-" + std::to_string(thread)));
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!fs::exists(gate / kOpen)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error("the start gate " + gate.string() + " was not opened within " +
                               std::to_string(limit.count() / 1000) + " s");
    }
    std::this_thread::sleep_for(kPoll);
  }
}

bool open_start_gate(const fs::path& gate, std::size_t children,
                     const std::function<bool()>& gave_up, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (ready_count(gate) < children) {
    if (gave_up() || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
  touch(gate / kOpen);
  return true;
}

}  // namespace baton
