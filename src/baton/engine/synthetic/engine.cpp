#include "baton/engine/synthetic/engine.h"

namespace baton {

class Engine::RequestJob final : public Job {
 public:
  RequestJob(Engine& engine, Request request) : engine_(engine), request_(request) {}
  std::future<RequestResult> future() { return promise_.get_future(); }

  void run(std::stop_token stop) noexcept override {
    try {
      promise_.set_value(engine_.run(request_, stop));
    } catch (...) {
      engine_.count_failure();
      promise_.set_exception(std::current_exception());
    }
    engine_.job_finished();
  }
  void cancel() noexcept override {
    engine_.count_failure();
    promise_.set_exception(std::make_exception_ptr(EngineStopped(engine_.name())));
    engine_.job_finished();
  }

 private:
  Engine& engine_;
  Request request_;
  std::promise<RequestResult> promise_;
};

Engine::Engine(std::string name, std::unique_ptr<Workload> workload, std::unique_ptr<Stream> stream,
               GpuTurn& turn)
    : name_(std::move(name)),
      workload_(std::move(workload)),
      owned_stream_(std::move(stream)),
      stream_(owned_stream_.get()),
      turn_(turn),
      client_(turn.register_client(name_, *stream_)),
      owned_worker_(std::make_unique<Worker>(name_)),
      worker_(owned_worker_.get()) {
  stats_.name = name_;
  stats_.kind = workload_->kind();
}

Engine::Engine(std::string name, std::unique_ptr<Workload> workload, Worker& shared_worker,
               Stream& shared_stream, GpuTurn& turn)
    : name_(std::move(name)),
      workload_(std::move(workload)),
      stream_(&shared_stream),
      turn_(turn),
      client_(turn.register_client(name_, shared_stream)),
      worker_(&shared_worker) {
  stats_.name = name_;
  stats_.kind = workload_->kind();
}

Engine::~Engine() {
  stop();
  // Jobs on a shared worker still point at this engine; they fail fast once stopped.
  std::unique_lock lock(jobs_mu_);
  jobs_cv_.wait(lock, [this] { return pending_jobs_ == 0; });
}

std::future<RequestResult> Engine::submit(Request request) {
  auto job = std::make_unique<RequestJob>(*this, request);
  auto future = job->future();
  {
    std::lock_guard lock(jobs_mu_);
    ++pending_jobs_;
  }
  if (stopped_.load(std::memory_order_acquire)) {
    job->cancel();
  } else {
    worker_->post(std::move(job));
  }
  return future;
}

void Engine::stop() {
  stopped_.store(true, std::memory_order_release);
  if (owned_worker_) owned_worker_->stop();
}

EngineStats Engine::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

void Engine::job_finished() {
  // Notified under the lock: the destructor may free the engine as soon as it sees 0.
  std::lock_guard lock(jobs_mu_);
  --pending_jobs_;
  jobs_cv_.notify_all();
}

void Engine::count_failure() {
  std::lock_guard lock(stats_mu_);
  ++stats_.requests_failed;
}

RequestResult Engine::run(const Request& request, std::stop_token stop) {
  RequestResult result{.id = request.id, .burst_ms = {}};
  for (std::uint32_t burst = 0; burst < request.bursts; ++burst) {
    // A shared worker outlives this engine's stop(), so the engine's own flag counts too.
    if (stop.stop_requested() || stopped_.load(std::memory_order_acquire)) {
      throw EngineStopped(name_);
    }
    const double ms = run_burst(request);
    result.burst_ms.push_back(ms);
    std::lock_guard lock(stats_mu_);
    stats_.burst_ms.push_back(ms);
  }
  std::lock_guard lock(stats_mu_);
  ++stats_.requests_done;
  return result;
}

EngineActivity Engine::activity() const {
  return EngineActivity{.engine = name_,
                        .stream = stream_->name(),
                        .kind = workload_->kind(),
                        .state = state_.load(std::memory_order_relaxed)};
}

double Engine::run_burst(const Request& request) {
  GpuBurst burst(burst_context_, workload_->kind(), request.id, workload_->context_tokens());
  workload_->set_device_share(burst.device_share());
  workload_->encode_burst(*stream_, [&](Boundary boundary) {
    burst.yield_point(boundary);
    workload_->set_device_share(burst.device_share());
  });
  stream_->synchronize();
  return burst.done();  // a failed burst is reported by its destructor
}

}  // namespace baton
