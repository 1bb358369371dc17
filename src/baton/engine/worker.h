// Worker: one thread that runs jobs in the order they were posted. An LLM engine owns
// one; all embedding engines share one (the global embedding executor).
// A job never throws across the thread boundary: it hands its outcome (value or error)
// to its caller through its own promise. On stop the running job sees the stop token,
// and every job still queued is cancelled, so no caller waits forever.
// Thread-safety: post() and stop() are thread-safe. The destructor stops and joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

namespace baton {

class Job {
 public:
  virtual ~Job() = default;
  // Runs on the worker thread; must deliver its own outcome and not throw.
  virtual void run(std::stop_token stop) noexcept = 0;
  // The worker stopped before running the job; must deliver an error and not throw.
  virtual void cancel() noexcept = 0;
};

class Worker {
 public:
  explicit Worker(std::string name);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  const std::string& name() const { return name_; }
  // Queues `job`; when the worker is stopping, cancels it at once instead.
  void post(std::unique_ptr<Job> job);
  // Stops: the running job is asked to stop, queued jobs are cancelled, the thread joins.
  // Idempotent and thread-safe; must not be called from a job.
  void stop();

 private:
  void loop(std::stop_token stop);

  const std::string name_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<std::unique_ptr<Job>> jobs_;  // guarded by mu_
  bool stopping_ = false;                  // guarded by mu_
  std::mutex join_mu_;                     // one joiner at a time
  std::jthread thread_;                    // last: starts after the rest
};

}  // namespace baton
