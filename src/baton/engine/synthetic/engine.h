// Engine: one loaded model (or synthetic workload) with its request queue, the thread
// that runs it and the stream it encodes on. An LLM engine owns its worker thread and
// its stream; an embedding engine runs on the shared embedding executor and the
// device's default stream. Every burst takes the GPU turn.
//
// Thread-safety: submit(), stop() and stats() are thread-safe. The engine must be
// stopped (or destroyed) before the worker, stream and turn it uses.
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/engine/gpu_burst.h"
#include "baton/engine/hosted_engine.h"
#include "baton/engine/request.h"
#include "baton/engine/synthetic/workload.h"
#include "baton/engine/worker.h"
#include "baton/turn/gpu_turn.h"

namespace baton {

struct EngineStats {
  std::string name;
  BurstKind kind = BurstKind::decode;
  std::uint64_t requests_done = 0;
  std::uint64_t requests_failed = 0;
  std::vector<double> burst_ms;  // every completed burst, turn wait included
};

class Engine final : public HostedEngine {
 public:
  // An engine with its own worker thread and its own stream (LLM engines).
  Engine(std::string name, std::unique_ptr<Workload> workload, std::unique_ptr<Stream> stream,
         GpuTurn& turn);
  // An engine on a shared worker and a shared stream (embedding engines).
  Engine(std::string name, std::unique_ptr<Workload> workload, Worker& shared_worker,
         Stream& shared_stream, GpuTurn& turn);
  // Stops, then waits until none of its jobs is left on a shared worker.
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const std::string& name() const override { return name_; }
  BurstKind kind() const { return workload_->kind(); }
  Stream& stream() override { return *stream_; }
  TurnClientId turn_client() const override { return client_; }

  // Queues `request`. The future holds the result, or EngineStopped, or the GpuError
  // that failed it. Never blocks on the device.
  std::future<RequestResult> submit(Request request);
  // Refuses new requests, stops the current one at its next burst boundary, cancels the
  // queued ones (EngineStopped) and, for an owned worker, joins its thread.
  void stop() override;
  EngineStats stats() const;
  // What the engine is doing right now (a momentary reading, lock-free).
  EngineActivity activity() const override;
  void add_burst_observer(BurstObserver& observer) override {
    burst_observers_.push_back(&observer);
  }

 private:
  class RequestJob;
  RequestResult run(const Request& request, std::stop_token stop);
  double run_burst(const Request& request);
  void count_failure();
  void job_finished();

  const std::string name_;
  std::unique_ptr<Workload> workload_;
  std::unique_ptr<Stream> owned_stream_;
  Stream* stream_;
  GpuTurn& turn_;
  TurnClientId client_;
  std::atomic<bool> stopped_{false};
  std::atomic<EngineState> state_{EngineState::idle};
  std::vector<BurstObserver*> burst_observers_;  // set-up only
  const BurstContext burst_context_{.engine = name_,
                                    .turn = turn_,
                                    .client = client_,
                                    .state = state_,
                                    .observers = burst_observers_};
  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::uint32_t pending_jobs_ = 0;  // posted and not yet finished; guarded by jobs_mu_

  mutable std::mutex stats_mu_;
  EngineStats stats_;  // guarded by stats_mu_

  std::unique_ptr<Worker> owned_worker_;  // after everything its jobs touch
  Worker* worker_;
};

}  // namespace baton
