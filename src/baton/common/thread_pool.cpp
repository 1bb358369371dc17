#include "baton/common/thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <utility>

#include "baton/common/env.h"

namespace baton {

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) throw std::invalid_argument("a thread pool needs at least one thread");
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  start_cv_.notify_all();
}

void ThreadPool::parallel_for(std::size_t count, const std::function<void(std::size_t)>& body) {
  if (count == 0) return;
  std::lock_guard call(call_mu_);
  {
    std::lock_guard lock(mu_);
    body_ = &body;
    count_ = count;
    next_ = 0;
    unfinished_ = count;
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  run_items();
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, [this] { return unfinished_ == 0; });
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::work_loop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_items();
  }
}

// Takes items until none is left; the thread that finishes the last one wakes the caller.
void ThreadPool::run_items() {
  std::unique_lock lock(mu_);
  while (next_ < count_) {
    const std::size_t item = next_++;
    const auto* body = body_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*body)(item);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (--unfinished_ == 0) done_cv_.notify_all();
  }
}

int default_cpu_threads() {
  const auto hardware =
      static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(positive_int_from_env("BATON_CPU_THREADS", hardware));
}

}  // namespace baton
