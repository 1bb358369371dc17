// BatonServer: the composition root of `baton serve`. It gives every configured model a
// seat in one EngineHost (one turn, one watchdog), loads the start-up models through the
// ModelRegistry (which loads and unloads the rest while serving), records the run in the
// ledger (bursts, streams, fault events, loads and unloads), and serves the HTTP API
// (router.h) until asked to stop or the device turns fatal:
// - SIGTERM / SIGINT / SIGHUP: stop accepting, let in-flight requests finish for up to the
//   shutdown timeout, fail the rest (their clients get a 503 or an SSE error event),
//   flush the ledger, exit 0 (74 when the ledger could not write some rows: every failed
//   write is a warning in the log at once, and in /health and /metrics). A second signal
//   skips the wait.
// - a fatal device error: close the ledger run with 70 and exit 70, so that
//   `baton supervise` restarts the server.
// Thread-safety: construct, then serve() from one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "baton/common/signal_pipe.h"
#include "baton/experiment/experiment_runner.h"
#include "baton/gpu/gpu_process_sampler.h"
#include "baton/host/engine_host.h"
#include "baton/ledger/ledger.h"
#include "baton/ledger/ledger_recorder.h"
#include "baton/ledger/stream_recorder.h"
#include "baton/server/config/serve_config.h"
#include "baton/server/http/http_server.h"
#include "baton/server/live/live_policy.h"
#include "baton/server/models/kv_sizing.h"
#include "baton/server/models/model_registry.h"
#include "baton/server/models/served_model.h"
#include "baton/server/observe/device_probe.h"
#include "baton/server/observe/dual_engine_clock.h"
#include "baton/server/observe/engine_health.h"
#include "baton/server/observe/exposure_counters.h"
#include "baton/server/observe/metrics.h"
#include "baton/server/observe/recent_activity.h"
#include "baton/server/routes/router.h"

namespace baton {

// What loading reports: bytes of a model's weights mapped and checked so far.
using LoadProgress =
    std::function<void(const std::string& model, std::uint64_t done, std::uint64_t total)>;

class BatonServer {
 public:
  // Loads the start-up models and binds the port; throws ConfigError, BackendUnavailable,
  // std::system_error (the address is taken), or the first model's error when every
  // start-up model failed to load. `log` gets one line per model loaded or failed.
  BatonServer(ServeConfig config, std::ostream& log, const LoadProgress& progress = {});
  ~BatonServer();
  BatonServer(const BatonServer&) = delete;
  BatonServer& operator=(const BatonServer&) = delete;

  int port() const { return http_->port(); }
  // Serves until a signal of `signals` or a fatal device error; returns the exit code.
  // `out` gets the one line that says where it listens; `log` the rest.
  int serve(SignalPipe& signals, std::ostream& out, std::ostream& log);

 private:
  void open_ledger(const std::string& backend);
  // After a live policy change to arm `arm` at `at` (Unix seconds): the exposure counters
  // take the new policy, the ledger ends the run and starts the next.
  void next_run(std::size_t arm, double at);
  // The turn's arms (arm_turns_, arm_policies_): the experiment's, or the configured turn and
  // the others it may change to (the admin route). Throws ConfigError for a bad experiment file.
  void choose_arms();
  // A live experiment (--experiment): from serve() on; stopped before the host stops.
  void start_experiment(std::ostream& log);
  void start_block(const BlockStart& block);
  void experiment_ended(const ExperimentState& state);
  void stop_experiment();
  // A line for the log from another thread: the serving thread writes it.
  void log_later(std::string line);
  void start_gpu_sampling(const Device& device, std::ostream& log);
  void seat_models(FaultInjector* faults);  // faults: aimed at fault_engine's seat
  void start_registry(std::ostream& log, const LoadProgress& progress);
  void record(const LifecycleEvent& event);
  // Returns the exit code: 0, or 74 when the ledger misses rows.
  int shut_down(SignalPipe& signals, std::ostream& log);
  // Ends the ledger's run; false (and a line in `log`) when the ledger misses something.
  bool close_ledger(int exit_code, std::ostream& log);
  // The ledger writer's warnings, into `log` from the serving thread, which owns it.
  void log_ledger_warnings(std::ostream& log);

  const ServeConfig config_;
  std::mutex ledger_warnings_mu_;
  // The ledger's warnings and other threads' lines for the log; guarded by ledger_warnings_mu_.
  std::vector<std::string> ledger_warnings_;
  // Declared in the order they must be built; destroyed the other way round: the HTTP
  // server first, then the engines, then what they read and report to.
  std::optional<Ledger> ledger_;
  std::optional<LedgerRecorder> recorder_;
  std::optional<StreamRecorder> streams_;
  RunStart run_start_;                   // the first run's; the next ones differ by policy
  std::atomic<std::int64_t> run_id_{0};  // the run rows go to (a new one per policy change)
  std::unique_ptr<GpuProcessSampler> gpu_sampler_;  // cuda: other GPU clients, into the run
  EngineHealth health_;
  std::unique_ptr<ServerMetrics> metrics_;
  DualEngineClock busy_;
  RecentActivity activity_;  // the dashboard's timeline: sees every burst and stream
  std::unique_ptr<ExposureCounters> exposure_;  // /metrics' fleet counters; the backend's
  std::unique_ptr<EngineHost> host_;
  std::vector<TurnOptions> arm_turns_;       // the turn's arms: the first runs first
  std::vector<std::string> arm_policies_;    // each arm as the ledger and /metrics name it
  std::unique_ptr<LivePolicy> live_policy_;  // when the turn can switch
  std::optional<ExperimentPlan> plan_;       // --experiment
  std::int64_t experiment_id_ = 0;           // its row in the ledger
  std::mutex experiment_mu_;
  std::unique_ptr<ExperimentRunner> experiment_;  // guarded by experiment_mu_
  std::unique_ptr<KvSizer> kv_sizer_;      // outlives the models, whose unloads release it
  std::unique_ptr<ModelRegistry> models_;  // its engines leave the host before the host goes
  std::unique_ptr<DeviceProbe> probe_;     // stopped before the host
  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace baton
