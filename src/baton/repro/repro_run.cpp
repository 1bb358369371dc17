#include "baton/repro/repro_run.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "baton/common/clock.h"
#include "baton/common/exit_codes.h"
#include "baton/gpu/nvidia_driver.h"
#include "baton/host/engine_host.h"
#include "baton/host/make_device.h"
#include "baton/host/make_workload.h"
#include "baton/ledger/gpu_sampling.h"
#include "baton/ledger/ledger_recorder.h"
#include "baton/ledger/stream_recorder.h"
#include "baton/repro/burst_times.h"
#include "baton/repro/clients.h"
#include "baton/repro/start_gate.h"

namespace baton {
namespace {

// The policy as the ledger names the run: with the engines' weights.
std::string policy_of(const ReproOptions& options) {
  std::vector<EngineWeight> weights;
  for (const ReproEngine& engine : options.engines) {
    weights.push_back({.engine = engine.name, .weight = engine.turn_weight});
  }
  return describe(options.turn, weights);
}

// A flagged burst [onset, time] of an engine on an episode's stream that overlaps the
// episode detects it.
void match_slowdowns(FaultReport& report, const std::vector<SlowdownEpisode>& episodes,
                     const std::vector<FaultEvent>& events,
                     const std::map<std::string, StreamId>& stream_of) {
  std::vector<bool> detected(episodes.size(), false);
  for (const FaultEvent& event : events) {
    if (event.kind != FaultKind::slowdown) continue;
    auto stream = stream_of.find(event.engine);
    bool inside = false;
    for (std::size_t i = 0; i < episodes.size() && stream != stream_of.end(); ++i) {
      const SlowdownEpisode& e = episodes[i];
      if (e.stream == stream->second && event.onset.value_or(event.time) <= e.until &&
          event.time >= e.start) {
        detected[i] = true;
        inside = true;
      }
    }
    if (!inside) ++report.slowdowns_outside_episodes;
  }
  report.slowdown_episodes = episodes.size();
  report.slowdown_episodes_detected =
      static_cast<std::uint64_t>(std::count(detected.begin(), detected.end(), true));
}

FaultReport summarize_faults(EngineHost& host, const std::vector<FaultEvent>& events) {
  FaultReport report;
  std::vector<SlowdownEpisode> episodes;
  if (const FaultInjector* injector = host.injector()) {
    const InjectedCounts injected = injector->injected();
    report.by_kind[FaultKind::hang].injected = injected.hangs;
    report.by_kind[FaultKind::timeout].injected = injected.timeouts;
    report.by_kind[FaultKind::slowdown].injected = injected.slowdowns;
    // The fatal switch counts once however many submissions it then refuses.
    report.by_kind[FaultKind::submissions_ignored].injected =
        (injected.ignored_submissions > 0 ? 1 : 0) + injected.device_faults;
    report.hangs_arrived = injected.hangs_arrived;
    report.hangs_dropped = injected.hangs_dropped;
    episodes = injector->slowdown_episodes();
  }
  std::vector<double> latencies;
  for (const FaultEvent& event : events) {
    ++report.by_kind[event.kind].detected;
    if (event.detect_latency_ms) latencies.push_back(*event.detect_latency_ms);
  }
  std::map<std::string, StreamId> stream_of;
  for (const auto& engine : host.engines()) stream_of[engine->name()] = engine->stream().id();
  match_slowdowns(report, episodes, events, stream_of);
  report.detect_latency_ms = summarize(latencies);
  report.recovered = host.faults().recovered();
  if (auto fatal = host.faults().fatal()) {
    report.fatal = true;
    report.fatal_detail = fatal->detail;
  }
  return report;
}

// One engine of the run, synthetic or a real model's.
struct HostedSpec {
  const ReproEngine* spec = nullptr;
  Engine* synthetic = nullptr;
  LlmEngine* llm = nullptr;
  EmbeddingEngine* embedding = nullptr;
  std::size_t vocab = 0;  // real models only
};

EngineResult summarize_engine(const HostedSpec& hosted, const BurstTimes& times,
                              double duration_s) {
  EngineResult r;
  r.name = hosted.spec->name;
  r.kind = hosted.spec->shape.kind;
  r.model = hosted.spec->llm() ? "llm" : hosted.spec->embedding() ? "embedding" : "";
  const std::vector<double> ms = times.of(r.name);
  r.steps = ms.size();
  r.step_ms = summarize(ms);
  r.decode_step_ms = summarize(times.decode_of(r.name));
  r.steps_per_s = duration_s > 0 ? static_cast<double>(r.steps) / duration_s : 0.0;
  if (hosted.llm != nullptr) {
    const LlmEngineStats stats = hosted.llm->stats();
    r.prefill_pieces = stats.prefill_pieces;
    r.prefill_piece_layers = stats.prefill_piece_layers;
    r.longest_piece_ms = stats.longest_piece_ms;
    r.warm_up_ms = stats.warm_up_ms;
  }
  r.failed_requests = hosted.llm != nullptr         ? hosted.llm->stats().requests_failed
                      : hosted.embedding != nullptr ? hosted.embedding->stats().requests_failed
                                                    : hosted.synthetic->stats().requests_failed;
  return r;
}

// Room for every request the client keeps in flight (one: its prompt and up to 64 tokens),
// and prefill chunks of a GPU engine's usual size on a GPU.
LlmBatchOptions llm_options(const ModelConfig& config, std::size_t prompt_tokens,
                            std::string_view backend) {
  LlmBatchOptions options;
  const std::size_t blocks = (prompt_tokens + 64) / options.block_tokens + 2;
  options.kv_budget_bytes = std::max(
      options.kv_budget_bytes, blocks * KvBlockPool::block_bytes(config, options.block_tokens));
  if (backend == "cuda") options.prefill_chunk = 2048;
  return options;
}

// A request the engine would refuse would fail every time: refuse the run instead.
void check_fits(const ReproEngine& spec, const ModelConfig& config) {
  const auto positions = static_cast<std::size_t>(config.max_position_embeddings);
  if (spec.llm() && spec.prompt_tokens + kMaxGeneratedTokens > positions) {
    throw std::invalid_argument(
        "--engine " + spec.spec + ": " + std::to_string(spec.prompt_tokens) +
        " prompt tokens and up to " + std::to_string(kMaxGeneratedTokens) +
        " generated ones do not fit the model's " + std::to_string(positions) + " positions");
  }
}

}  // namespace

std::uint64_t FaultReport::injected() const {
  std::uint64_t total = 0;
  for (const auto& [kind, counts] : by_kind) total += counts.injected;
  return total;
}

std::uint64_t FaultReport::detected() const {
  std::uint64_t total = 0;
  for (const auto& [kind, counts] : by_kind) total += counts.detected;
  return total;
}

ReproResult run_repro(const ReproOptions& options) {
  // Real models first: a bad directory fails the run before anything is recorded. They
  // outlive the host, whose engines read them.
  std::map<std::string, std::unique_ptr<LlamaModel>> models;
  std::map<std::string, ModelSource> sources;
  for (const ReproEngine& spec : options.engines) {
    if (spec.model != ReproEngine::Model::none) {
      const ModelSource& source =
          sources.emplace(spec.name, ModelSource::open(spec.model_dir)).first->second;
      models[spec.name] =
          std::make_unique<LlamaModel>(LlamaModel::load(source, {.weights = options.weights}));
      check_fits(spec, models[spec.name]->config());
    }
  }
  BurstTimes times;
  auto injector = options.faults.any() ? std::make_unique<FaultInjector>(options.faults) : nullptr;
  auto device = make_device(options.backend, injector.get(),
                            options.limits.value_or(CommitLimits::from_env()));
  const std::string backend(device->backend());
  // The ledger outlives the host: stopping the engines still records bursts and events.
  std::optional<Ledger> ledger;
  std::optional<LedgerRecorder> recorder;
  std::optional<StreamRecorder> streams;  // outlives the device, whose streams report to it
  std::int64_t run_id = 0;
  if (!options.ledger_path.empty()) {
    ledger.emplace(options.ledger_path);
    run_id = ledger->begin_run({
        .start = unix_seconds_now(),
        .version = BATON_VERSION,
        .backend = backend,
        .policy = options.ledger_policy.empty() ? policy_of(options) : options.ledger_policy,
        .streams_recorded = true,
        .driver = backend == "cuda" ? installed_nvidia_driver() : "",
    });
    recorder.emplace(*ledger, run_id);
    // Both exposures: engines with requests in progress (bursts) and streams with work
    // in flight, on one clock so that they line up.
    streams.emplace(*ledger, run_id, recorder->wall());
    device->add_observer(*streams);
    streams->name_stream(device->default_stream().id(), device->default_stream().name());
  }
  // After the ledger, so destroyed before it; stopped before the run ends.
  std::unique_ptr<GpuProcessSampler> gpu_sampler;
  if (ledger && options.gpu_sampling && backend == "cuda") {
    gpu_sampler = start_gpu_sampling(*ledger, run_id, *device, std::cerr, "baton repro");
  }
  EngineHost host(std::move(device), options.turn, options.watchdog, std::move(injector));
  host.add_burst_observer(times);
  if (recorder) {
    host.add_burst_observer(*recorder);
    host.faults().add_sink([&recorder](const FaultEvent& event) { recorder->event(event); });
  }
  std::vector<HostedSpec> engines;
  for (const ReproEngine& spec : options.engines) {
    HostedSpec hosted{.spec = &spec};
    HostedEngine* engine = nullptr;
    if (spec.llm()) {
      LlamaModel& model = *models.at(spec.name);
      LlmBatchOptions batch = llm_options(model.config(), spec.prompt_tokens, backend);
      hosted.llm = &host.add_llm_engine(spec.name, model, nullptr, batch);
      // Its runner holds the weights on the GPU now; the host reads its copies no more.
      if (backend == "cuda") model.release_host_copies();
      hosted.vocab = model.config().vocab_size;
      engine = hosted.llm;
    } else if (spec.embedding()) {
      const LlamaModel& model = *models.at(spec.name);
      hosted.embedding =
          &host.add_embedding_engine(spec.name, model, read_pooling(sources.at(spec.name)));
      hosted.vocab = model.config().vocab_size;
      engine = hosted.embedding;
    } else {
      hosted.synthetic = &host.add_engine(
          spec.name, spec.attention
                         ? make_long_dispatch_workload(backend, *spec.attention)
                         : make_synthetic_workload(backend, spec.shape, spec.sm_count_target));
      engine = hosted.synthetic;
    }
    host.turn().set_weight(engine->turn_client(), spec.turn_weight);
    if (streams) streams->name_stream(engine->stream().id(), engine->stream().name());
    engines.push_back(hosted);
  }

  // As long as the cross-process parent waits for its children's start-up.
  if (!options.start_gate.empty()) wait_at_start_gate(options.start_gate, kStartUpLimit);
  std::vector<ClientTally> tallies(engines.size());
  TurnStats turn_stats;
  // The window starts here: the engines' warm-up bursts at load (290-360 ms of device time
  // for the first CUDA engine of a process) are not part of any engine's share.
  const TurnStats at_start = host.turn().stats();
  const TimePoint start = Clock::now();
  {
    std::vector<std::jthread> clients;
    std::uint64_t seed = options.seed;
    const bool retry = options.retry_failed;
    for (std::size_t i = 0; i < engines.size(); ++i) {
      const HostedSpec& hosted = engines[i];
      if (hosted.spec->idle) continue;  // resident, and never sent a request
      clients.emplace_back([hosted, retry, &tally = tallies[i], s = seed++](std::stop_token stop) {
        if (hosted.llm != nullptr) {
          tally =
              drive_llm(*hosted.llm, {hosted.spec->prompt_tokens, hosted.vocab, retry}, s, stop);
        } else if (hosted.embedding != nullptr) {
          tally = drive_embedding(*hosted.embedding, hosted.vocab, s, stop);
        } else {
          tally = drive(*hosted.synthetic, s, stop);
        }
      });
    }
    // Ends early if the device turns fatal: nothing is gained by running on.
    (void)host.faults().wait_fatal_for(std::chrono::duration<double>(options.duration_s));
    // The turn's figures while every engine was driven: a long prefill burst still in flight
    // finishes alone during the stop, and its device time would count as a share.
    turn_stats = stats_since(host.turn().stats(), at_start);
    for (auto& client : clients) client.request_stop();
    host.stop();  // in-flight requests end with EngineStopped; clients return
  }
  const TimePoint end = Clock::now();

  ReproResult result;
  result.backend = std::string(host.device().backend());
  result.turn = options.turn;
  result.duration_s = seconds_between(start, end);
  const OverlapReading overlap = host.overlap(end);
  result.overlap_s = overlap.overlap_s;
  result.overlap_episodes = overlap.episodes;
  result.events = host.faults().events();
  for (std::size_t i = 0; i < engines.size(); ++i) {
    EngineResult summary = summarize_engine(engines[i], times, result.duration_s);
    summary.gpu_failures = tallies[i].failed;
    summary.retries = tallies[i].retried;
    for (const FaultEvent& event : result.events) {
      if (event.kind == FaultKind::hang && event.engine == summary.name) ++summary.hangs;
    }
    result.engines.push_back(std::move(summary));
  }
  result.turn_stats = std::move(turn_stats);
  result.faults = summarize_faults(host, result.events);
  stop_gpu_sampling(gpu_sampler, std::cerr, "baton repro");  // its last poll in the run
  if (streams) streams->finish();  // every stream is idle: the host has stopped
  if (ledger) {
    ledger->end_run(run_id, unix_seconds_now(), result.faults.fatal ? kExitGpuFatal : kExitOk);
    result.ledger = ledger->write_status();
  }
  return result;
}

}  // namespace baton
