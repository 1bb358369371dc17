// ThreadPool: a fixed set of threads that split one loop between them (parallel_for). The
// CPU kernels of the model use it for matrix products and attention heads: threads are
// started once, not per call, because a decode step runs hundreds of short loops.
// Thread-safety: parallel_for() may be called from any thread; concurrent callers take
// turns (one loop runs at a time). The destructor joins the threads.
#pragma once

#include <condition_variable>
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

 private:
  void work_loop();
  void run_items();

  std::mutex call_mu_;  // one parallel_for at a time
  std::mutex mu_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  const std::function<void(std::size_t)>* body_ = nullptr;  // guarded by mu_
  std::size_t count_ = 0;                                   // guarded by mu_
  std::size_t next_ = 0;                                    // guarded by mu_
  std::size_t unfinished_ = 0;                              // guarded by mu_
  std::uint64_t generation_ = 0;                            // guarded by mu_
  std::exception_ptr error_;                                // guarded by mu_
  bool stopping_ = false;                                   // guarded by mu_
  std::vector<std::jthread> workers_;                       // last: started after the rest
};

// The pool size for CPU kernels: $BATON_CPU_THREADS when set, else the hardware threads.
int default_cpu_threads();

}  // namespace baton
