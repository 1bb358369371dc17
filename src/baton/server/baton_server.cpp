#include "baton/server/baton_server.h"

#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "baton/common/clock.h"
#include "baton/common/exit_codes.h"
#include "baton/common/human_bytes.h"
#include "baton/common/ip_address.h"
#include "baton/gpu/nvidia_driver.h"
#include "baton/host/make_device.h"
#include "baton/ledger/gpu_sampling.h"

namespace baton {
namespace {

// The policy as the ledger, /metrics and /v1/engines name it: with the models' weights.
std::string policy_of(const ServeConfig& config, const TurnOptions& turn) {
  std::vector<EngineWeight> weights;
  for (const ModelSpec& spec : config.models) {
    weights.push_back({.engine = spec.name, .weight = spec.turn_weight});
  }
  return describe(turn, weights);
}

// The turns the policy may change to while serving (the admin route): the configured one's
// settings under the other policies. None under the host-wide turn, shared with processes
// that cannot follow a change.
std::vector<TurnOptions> other_turns(const TurnOptions& configured) {
  std::vector<TurnOptions> out;
  if (configured.scope == TurnScope::host) return out;
  for (const TurnPolicy policy : {TurnPolicy::concurrent, TurnPolicy::serialize}) {
    if (policy == configured.policy) continue;
    TurnOptions other = configured;
    other.policy = policy;
    out.push_back(other);
  }
  return out;
}

std::vector<std::string> names_of(const ServeConfig& config) {
  std::vector<std::string> names;
  for (const ModelSpec& spec : config.models) names.push_back(spec.name);
  return names;
}

WatchdogOptions watchdog_options(const ServeConfig& config) {
  WatchdogOptions options = WatchdogOptions::for_backend(config.backend);
  options.deadline =
      std::chrono::milliseconds(std::llround(config.watchdog_deadline_s * 1000.0));
  return options;
}

std::string describe_model(const ServedModel& m) {
  const ModelConfig& c = m.model->config();
  const std::string_view format = to_string(m.model->embedding().format());
  const double params = static_cast<double>(m.model->weight_count());
  const int context = m.llm != nullptr ? m.llm->context_length()
                                        : static_cast<int>(c.max_position_embeddings);
  // A context_length past what the model was trained for is capped: say so, not silently.
  const std::string capped =
      m.llm != nullptr && m.spec.context_length > context
          ? fmt::format(" (context_length {} capped to the model's max_position_embeddings)",
                        m.spec.context_length)
          : "";
  // Where the KV budget came from, unless the user gave it.
  const bool say = !m.kv_source.empty() && m.kv_source != "given";
  const std::string how = say ? " (" + m.kv_how + ")" : "";
  return fmt::format("model {} ({}): {} {}, {:.1f}M parameters, {} weights, {} layers, "
                     "context {}{}, {} {} MB{}; memory: host {}, device {}",
                     m.spec.name, m.kind_name(), to_string(c.arch), format, params / 1e6,
                     human_bytes(m.model->weight_bytes()), c.num_layers, context, capped,
                     m.chat() ? "KV cache" : "tokens per call", m.spec.kv_budget_mb, how,
                     human_bytes(m.host_memory_bytes()), human_bytes(m.device_memory_bytes()));
}

}  // namespace

BatonServer::BatonServer(ServeConfig config, std::ostream& log, const LoadProgress& progress)
    : config_(std::move(config)),
      health_(watchdog_options(config_).deadline, std::chrono::seconds(5)),
      metrics_(std::make_unique<ServerMetrics>(names_of(config_))) {
  // Bound before any model loads: a bad address or a port in use is told at once.
  HttpServerOptions http;
  http.host = config_.host;
  http.port = config_.port;
  http.setting = config_.address_setting;
  http.threads = config_.http_threads;
  http.max_body_bytes = config_.max_body_bytes;
  http_ = std::make_unique<HttpServer>(http, [this](const HttpRequest& r) { return router_->handle(r); });
  if (config_.api_key.empty() && !is_loopback_address(config_.host)) {
    log << "baton serve: warning: listening on " << config_.host << " ("
        << config_.address_setting << ") with no API key: anyone who reaches this address can use the models; set "
           "--api-key or BATON_API_KEY\n";
  }
  choose_arms();
  auto injector =
      config_.faults.any() ? std::make_unique<FaultInjector>(config_.faults) : nullptr;
  FaultInjector* faults = injector.get();
  auto device = make_device(config_.backend, faults);
  const std::string backend(device->backend());
  open_ledger(backend);
  start_gpu_sampling(*device, log);
  if (streams_) {
    device->add_observer(*streams_);
    streams_->name_stream(device->default_stream().id(), device->default_stream().name());
  }
  device->add_observer(activity_);
  const WatchdogOptions watchdog = watchdog_options(config_);
  ExposureCounters::Options exposure;  // long context: analyze's default threshold
  exposure.policy = arm_policies_.front();
  exposure.other_policies.assign(arm_policies_.begin() + 1, arm_policies_.end());
  exposure.backend = backend;
  // No burst outlasts the deadline and its poll, nor does a hang's detection.
  exposure.settle_after = watchdog.deadline + watchdog.deadline / 10 + std::chrono::seconds(1);
  for (const ModelSpec& spec : config_.models) exposure.engines.push_back(spec.name);
  exposure.engines.push_back("device-probe");
  exposure.start_unix = unix_seconds_now();
  exposure_ = std::make_unique<ExposureCounters>(exposure, Clock::now());
  host_ = std::make_unique<EngineHost>(
      std::move(device), arm_turns_.front(), watchdog_options(config_), std::move(injector),
      std::vector<TurnOptions>(arm_turns_.begin() + 1, arm_turns_.end()));
  if (SwitchableTurn* turn = host_->switchable_turn()) {
    live_policy_ = std::make_unique<LivePolicy>(
        *turn, [this](std::size_t arm) { next_run(arm, unix_seconds_now()); });
  }
  seat_models(faults);
  start_registry(log, progress);

  router_ = std::make_unique<Router>(RouterContext{
      .models = *models_,
      .host = *host_,
      .health = health_,
      .metrics = *metrics_,
      .busy = busy_,
      .api_key = config_.api_key,
      .policy = arm_policies_.front(),
      .http_stats = [this] { return http_->stats(); },
      .activity = &activity_,
      .exposure = exposure_.get(),
      .ledger = ledger_ ? &*ledger_ : nullptr,
      .live_policy = live_policy_.get(),
      .experiment = [this]() -> std::optional<nlohmann::json> {
        std::lock_guard lock(experiment_mu_);
        if (!experiment_) return std::nullopt;
        return to_json(experiment_->state());
      },
      .reread = config_.reread,
  });
  Stream& probe_stream = host_->add_watched_stream("device-probe");
  if (streams_) streams_->name_stream(probe_stream.id(), probe_stream.name());
  probe_ = std::make_unique<DeviceProbe>(
      host_->turn(), probe_stream,
      [this] { return http_->stats().pending_responses == 0; }, std::chrono::seconds(1));
}

BatonServer::~BatonServer() {
  if (http_) http_->stop();
  stop_experiment();
  probe_.reset();
  models_.reset();  // every engine out of the host, while the host can still free a hang
  if (host_) host_->stop();
}

void BatonServer::seat_models(FaultInjector* faults) {
  host_->add_burst_observer(health_);
  if (recorder_) host_->add_burst_observer(*recorder_);
  host_->add_burst_observer(activity_);
  host_->add_burst_observer(*exposure_);
  host_->faults().add_sink([this](const FaultEvent& e) { exposure_->fault(e); });
  if (recorder_) host_->faults().add_sink([this](const FaultEvent& e) { recorder_->event(e); });
  host_->faults().add_sink([this](const FaultEvent& e) { health_.fault(e); });
  host_->faults().add_sink([this](const FaultEvent& e) {
    if (e.kind != FaultKind::hang) return;
    // Where the hang began, as the ledger places it (analyze --experiment reads that).
    const TimePoint at = e.onset.value_or(e.time);
    const double began = recorder_ ? recorder_->unix_seconds(at)
                                   : unix_seconds_now() - seconds_between(at, Clock::now());
    std::lock_guard lock(experiment_mu_);
    if (experiment_) experiment_->record_hang(began);
  });
  for (const ModelSpec& spec : config_.models) {
    Stream& stream = host_->reserve_seat(spec.name, spec.kind == ModelSpec::Kind::chat);
    health_.watch(spec.name, &stream);
    if (streams_) streams_->name_stream(stream.id(), stream.name());
    if (faults != nullptr && spec.name == config_.fault_engine) faults->only_on({stream.id()});
  }
}

void BatonServer::start_registry(std::ostream& log, const LoadProgress& progress) {
  RegistryOptions options;
  options.memory_budget_bytes = std::uint64_t{config_.memory_budget_mb} << 20;
  options.load_wait = std::chrono::milliseconds(std::llround(config_.load_timeout_s * 1000.0));
  options.drain_timeout =
      std::chrono::milliseconds(std::llround(config_.drain_timeout_s * 1000.0));
  std::map<std::string, std::uint64_t> sized;  // and their weights, to leave room for
  const bool reports_memory = host_->device().memory().has_value();
  for (const ModelSpec& spec : config_.models) {
    if (kv_sized_at_load(spec, reports_memory)) sized[spec.name] = estimated_weight_bytes(spec);
  }
  kv_sizer_ = std::make_unique<KvSizer>(sized, config_.gpu_memory_fraction);
  models_ = std::make_unique<ModelRegistry>(
      config_.models, options,
      [this](const ModelSpec& spec, const ModelRegistry::Progress& p) {
        return load_served_model(*host_, spec, config_.cpu_threads, kv_sizer_.get(), p);
      },
      estimated_memory_bytes,
      [this](const LifecycleEvent& event) { record(event); });
  models_->load_startup(log, progress);
  for (const ModelRegistry::Lease& model : models_->ready()) log << describe_model(*model) << "\n";
  for (const ModelSpec& spec : config_.models) {
    if (spec.on_demand) log << "model " << spec.name << ": loads on demand\n";
  }
}

void BatonServer::record(const LifecycleEvent& event) {
  if (!ledger_) return;
  ledger_->record(EventRow{.run_id = run_id_.load(),
                           .time = unix_seconds_now(),
                           .error_class = event.kind,
                           .engine = event.model,
                           .stream = "",
                           .in_flight = 0,
                           .detail = event.detail});
}

void BatonServer::open_ledger(const std::string& backend) {
  if (config_.no_ledger) return;
  ledger_.emplace(config_.ledger, std::chrono::seconds(1), [this](const std::string& line) {
    log_later("baton serve: warning: ledger " + config_.ledger.string() + ": " + line);
  });
  run_start_ = {
      .start = unix_seconds_now(),
      .version = BATON_VERSION,
      .backend = backend,
      .policy = arm_policies_.front(),
      .streams_recorded = true,
      .driver = backend == "cuda" ? installed_nvidia_driver() : "",
  };
  run_id_ = ledger_->begin_run(run_start_);
  recorder_.emplace(*ledger_, run_id_);
  streams_.emplace(*ledger_, run_id_, recorder_->wall());
}

void BatonServer::next_run(std::size_t arm, double at) {
  const std::string& policy = arm_policies_.at(arm);
  exposure_->set_policy(policy);
  if (!ledger_) return;
  RunStart next = run_start_;
  next.start = at;
  next.policy = policy;
  const std::int64_t id = ledger_->begin_run(next);
  recorder_->set_run(id);
  streams_->set_run(id, Clock::now());
  ledger_->end_run(run_id_.exchange(id), next.start, 0);
}

void BatonServer::start_gpu_sampling(const Device& device, std::ostream& log) {
  if (!ledger_ || !config_.gpu_sampling || device.backend() != "cuda") return;
  gpu_sampler_ = baton::start_gpu_sampling(*ledger_, run_id_.load(), device, log, "baton serve");
}

int BatonServer::serve(SignalPipe& signals, std::ostream& out, std::ostream& log) {
  http_->start();
  start_experiment(log);
  // An IPv6 address is bracketed in a URL (RFC 3986), or the port would read as its last group.
  const bool ipv6 = config_.host.find(':') != std::string::npos;
  out << "baton serve: listening on http://" << (ipv6 ? "[" + config_.host + "]" : config_.host)
      << ":" << http_->port() << std::endl;
  for (;;) {
    if (host_->faults().fatal()) {
      log << "baton serve: the device is in a fatal state (" << host_->faults().fatal()->detail
          << "); exiting " << kExitGpuFatal << " so that a supervisor restarts the server"
          << std::endl;
      http_->stop();
      probe_.reset();
      models_.reset();
      host_->stop();
      close_ledger(kExitGpuFatal, log);
      return kExitGpuFatal;
    }
    log_ledger_warnings(log);
    if (!signals.wait(std::chrono::milliseconds(100)).empty()) break;
  }
  return shut_down(signals, log);
}

void BatonServer::choose_arms() {
  if (config_.experiment.empty()) {
    arm_turns_ = other_turns(config_.turn);
    arm_turns_.insert(arm_turns_.begin(), config_.turn);
  } else {
    try {
      plan_ = read_experiment_plan(config_.experiment, config_.turn);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(e.what());
    }
    for (const ExperimentArm& arm : plan_->arms) arm_turns_.push_back(arm.turn);
  }
  for (const TurnOptions& turn : arm_turns_) arm_policies_.push_back(policy_of(config_, turn));
}

void BatonServer::start_experiment(std::ostream& log) {
  if (!plan_) return;
  if (ledger_) {
    experiment_id_ =
        ledger_->begin_experiment(plan_->name, unix_seconds_now(), to_json(*plan_).dump());
  }
  SwitchableTurn& turn = *host_->switchable_turn();
  ExperimentHooks hooks{
      .now_unix = [] { return unix_seconds_now(); },
      .exposure_seconds = [this] { return busy_.dual_seconds(); },
      .switch_to = [&turn](std::size_t arm) { return turn.switch_to(arm).gate_closed_ms; },
      .block_started = [this](const BlockStart& block) { start_block(block); },
      .block_ended =
          [this](const BlockEnd& block) {
            if (ledger_) ledger_->end_block(run_id_.load(), block.end_unix, block.exposure_hours);
          },
      .ended = [this](const ExperimentState& state) { experiment_ended(state); },
  };
  log << "baton serve: experiment " << plan_->name << ": " << plan_->arms[0].name << " against "
      << plan_->arms[1].name << " in blocks of " << plan_->block_s << " s" << std::endl;
  auto runner = std::make_unique<ExperimentRunner>(*plan_, std::move(hooks));
  std::lock_guard lock(experiment_mu_);
  experiment_ = std::move(runner);
}

void BatonServer::start_block(const BlockStart& block) {
  next_run(block.arm, block.start_unix);
  if (!ledger_) return;
  ledger_->begin_block({.run_id = run_id_.load(),
                        .experiment_id = experiment_id_,
                        .block = static_cast<std::int64_t>(block.block),
                        .arm = static_cast<std::int64_t>(block.arm),
                        .arm_name = plan_->arms.at(block.arm).name,
                        .switch_ms = block.switch_ms});
}

void BatonServer::experiment_ended(const ExperimentState& state) {
  const std::string kept = state.kept_arm ? plan_->arms.at(*state.kept_arm).name : "";
  log_later("baton serve: experiment " + plan_->name + " ended (" + state.ended_reason +
            "): staying on " + kept);
  if (ledger_) ledger_->end_experiment(experiment_id_, unix_seconds_now(), to_json(state).dump());
}

void BatonServer::stop_experiment() {
  std::unique_ptr<ExperimentRunner> runner;
  {
    std::lock_guard lock(experiment_mu_);
    runner = std::move(experiment_);
  }
  runner.reset();  // ends the block in progress, into the ledger
}

void BatonServer::log_later(std::string line) {
  std::lock_guard lock(ledger_warnings_mu_);
  ledger_warnings_.push_back(std::move(line));
}

void BatonServer::log_ledger_warnings(std::ostream& log) {
  std::vector<std::string> lines;
  {
    std::lock_guard lock(ledger_warnings_mu_);
    lines.swap(ledger_warnings_);
  }
  for (const std::string& line : lines) log << line << std::endl;
}

int BatonServer::shut_down(SignalPipe& signals, std::ostream& log) {
  log << "baton serve: stopping; in-flight requests have " << config_.shutdown_timeout_s
      << " s to finish" << std::endl;
  http_->stop_accepting();
  const TimePoint deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(config_.shutdown_timeout_s));
  while (!http_->wait_idle(std::chrono::milliseconds(100))) {
    if (Clock::now() >= deadline || !signals.wait(std::chrono::milliseconds(0)).empty()) break;
  }
  const std::size_t left = http_->stats().pending_responses;
  if (left > 0) log << "baton serve: failing " << left << " requests still in flight" << std::endl;
  stop_experiment();
  probe_.reset();
  models_->stop();  // no load or unload from here on, while the host stops
  host_->stop();    // what is left fails with EngineStopped: its clients get a 503
  (void)http_->wait_idle(std::chrono::seconds(2));
  http_->stop();
  models_.reset();
  const bool complete = close_ledger(kExitOk, log);
  log << "baton serve: stopped" << std::endl;
  return complete ? kExitOk : kExitLedgerIncomplete;
}

bool BatonServer::close_ledger(int exit_code, std::ostream& log) {
  if (!ledger_) return true;
  stop_gpu_sampling(gpu_sampler_, log, "baton serve");  // its last poll is in the run
  if (streams_) streams_->finish();
  ledger_->end_run(run_id_.load(), unix_seconds_now(), exit_code);  // commits what is queued
  log_ledger_warnings(log);
  const LedgerWriteStatus status = ledger_->write_status();
  if (!status.troubled()) return true;
  log << "baton serve: the ledger " << config_.ledger.string() << " " << trouble_summary(status)
      << "; exiting " << kExitLedgerIncomplete << std::endl;
  return false;
}

}  // namespace baton
