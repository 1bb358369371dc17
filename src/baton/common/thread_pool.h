// ThreadPool: a fixed set of threads that split one loop between them (parallel_for). The
// CPU kernels of the model use it for matrix products and attention heads: threads are
// started once, not per call, because a decode step runs hundreds of short loops.
// Between loops a thread spins for a short while (a decode step's next loop comes within
// microseconds, and a sleeping thread takes tens of them to wake) and then sleeps, so an
// idle pool uses no CPU. While spinning it yields to any other runnable thread, so two
// engines' pools on the same cores share them.
// Thread-safety: parallel_for() may be called from any thread; concurrent callers take
// turns (one loop runs at a time). The destructor joins the threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace baton {

class ThreadPool {
 public:
  // `threads` in all, the caller's included (so threads - 1 are started); at least 1.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs body(i) for every i in [0, count), spread over the threads, and returns when all
  // are done. The first exception a body throws is rethrown here (the rest still run).
  void parallel_for(std::size_t count, const std::function<void(std::size_t)>& body);

  // Threads asleep now, waiting for a loop (for tests of the idle pool).
  int sleeping() const { return sleeping_.load(); }

 private:
  struct Loop;
  void work_loop();
  static void run_items(Loop& loop);

  std::mutex call_mu_;                        // one parallel_for at a time
  std::atomic<Loop*> current_{nullptr};       // the loop being run, on its caller's stack
  std::atomic<std::uint32_t> generation_{0};  // bumped when a loop starts (and at stop)
  std::atomic<int> joined_{0};                // threads inside the current loop
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stopping_{false};
  std::vector<std::jthread> workers_;  // last: started after the rest
};

// The pool size for CPU kernels: $BATON_CPU_THREADS when set, else the hardware threads.
int default_cpu_threads();

}  // namespace baton
