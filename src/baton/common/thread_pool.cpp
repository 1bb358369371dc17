#include "baton/common/thread_pool.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "baton/common/cpu_relax.h"
#include "baton/common/env.h"

namespace baton {
namespace {

// How long a thread spins for the next loop (or the caller for a loop's last items) before
// it sleeps: longer than the gaps between the loops of a decode step.
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds spin{positive_int_from_env("BATON_POOL_SPIN_US", 50)};
  return spin;
}

// Spins until done() for at most spin_time(), yielding the core now and then;
// returns whether done() came true.
template <typename Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + spin_time();
  for (int round = 1;; ++round) {
    if (done()) return true;
    cpu_relax();
    if (round % 64 == 0) {
      if (std::chrono::steady_clock::now() > deadline) return done();
      std::this_thread::yield();
    }
  }
}

}  // namespace

// One parallel_for: lives on its caller's stack until every thread has left it.
struct ThreadPool::Loop {
  const std::function<void(std::size_t)>* body;
  std::size_t count;
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint32_t> unfinished;
  std::mutex error_mu;
  std::exception_ptr error;  // guarded by error_mu
};

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) throw std::invalid_argument("a thread pool needs at least one thread");
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work_loop(); });
}

ThreadPool::~ThreadPool() {
  stopping_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
}

void ThreadPool::parallel_for(std::size_t count, const std::function<void(std::size_t)>& body) {
  if (count == 0) return;
  std::lock_guard call(call_mu_);
  Loop loop{&body, count, {}, {static_cast<std::uint32_t>(count)}, {}, {}};
  current_.store(&loop);
  generation_.fetch_add(1);
  generation_.notify_all();
  run_items(loop);
  // The last items may still run on other threads: spin a little, then sleep on the count.
  if (!spin_until([&] { return loop.unfinished.load() == 0; })) {
    for (std::uint32_t left = loop.unfinished.load(); left != 0; left = loop.unfinished.load()) {
      loop.unfinished.wait(left);
    }
  }
  // No thread may touch the loop once this returns: wait out those that joined it.
  current_.store(nullptr);
  while (joined_.load() != 0) cpu_relax();
  if (loop.error) std::rethrow_exception(loop.error);
}

void ThreadPool::work_loop() {
  std::uint32_t seen = 0;
  while (!stopping_.load()) {
    if (!spin_until([&] { return generation_.load() != seen; })) {
      sleeping_.fetch_add(1);
      generation_.wait(seen);
      sleeping_.fetch_sub(1);
    }
    seen = generation_.load();
    joined_.fetch_add(1);
    // Checked after joining: the caller, which waits for joined_ to drop to 0 before its
    // loop goes, cleared current_ first, so a loop seen here is still alive.
    if (Loop* loop = current_.load()) run_items(*loop);
    joined_.fetch_sub(1);
  }
}

// Takes items until none is left; the thread that finishes the last one wakes the caller.
void ThreadPool::run_items(Loop& loop) {
  for (std::size_t item = loop.next.fetch_add(1); item < loop.count;
       item = loop.next.fetch_add(1)) {
    try {
      (*loop.body)(item);
    } catch (...) {
      std::lock_guard lock(loop.error_mu);
      if (!loop.error) loop.error = std::current_exception();
    }
    if (loop.unfinished.fetch_sub(1) == 1) loop.unfinished.notify_one();
  }
}

int default_cpu_threads() {
  const auto hardware =
      static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(positive_int_from_env("BATON_CPU_THREADS", hardware));
}

}  // namespace baton
