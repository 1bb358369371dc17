#include "baton/engine/worker.h"

namespace baton {

Worker::Worker(std::string name)
    : name_(std::move(name)), thread_([this](std::stop_token stop) { loop(stop); }) {}

Worker::~Worker() { stop(); }

void Worker::post(std::unique_ptr<Job> job) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      jobs_.push_back(std::move(job));
      cv_.notify_one();
      return;
    }
  }
  job->cancel();
}

void Worker::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  thread_.request_stop();
  std::lock_guard join_lock(join_mu_);
  if (thread_.joinable()) thread_.join();
}

void Worker::loop(std::stop_token stop) {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, stop, [this] { return !jobs_.empty(); });
      if (stop.stop_requested()) break;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job->run(stop);
  }
  std::deque<std::unique_ptr<Job>> left;
  {
    std::lock_guard lock(mu_);
    left.swap(jobs_);
  }
  for (auto& job : left) job->cancel();
}

}  // namespace baton
