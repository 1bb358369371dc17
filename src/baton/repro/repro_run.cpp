#include "baton/repro/repro_run.h"

#include <random>
#include <thread>

#include "baton/common/clock.h"
#include "baton/engine/engine_host.h"
#include "baton/gpu/make_device.h"

namespace baton {
namespace {

// Keeps one engine busy until stopped, as a steady stream of clients would.
void drive(Engine& engine, std::uint64_t seed, std::stop_token stop) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> decode_tokens(16, 64);
  std::exponential_distribution<double> embed_gap_ms(1.0 / 20.0);
  for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
    Request request{id, 1};
    if (engine.kind() == BurstKind::decode) request.bursts = decode_tokens(rng);
    if (engine.kind() == BurstKind::embed) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(embed_gap_ms(rng)));
    }
    try {
      engine.submit(request).get();
    } catch (const EngineStopped&) {
      return;
    } catch (const GpuError&) {
      // Counted by the engine; a client would retry.
    }
  }
}

EngineResult summarize_engine(const Engine& engine, double duration_s) {
  EngineStats stats = engine.stats();
  EngineResult r;
  r.name = stats.name;
  r.kind = stats.kind;
  r.steps = stats.burst_ms.size();
  r.step_ms = summarize(stats.burst_ms);
  r.steps_per_s = duration_s > 0 ? static_cast<double>(r.steps) / duration_s : 0.0;
  r.failed_requests = stats.requests_failed;
  return r;
}

}  // namespace

ReproResult run_repro(const ReproOptions& options) {
  EngineHost host(make_device(options.backend), options.turn);
  for (const ReproEngine& spec : options.engines) {
    host.add_engine(spec.name, std::make_unique<SyntheticWorkload>(spec.shape));
  }

  const TimePoint start = Clock::now();
  {
    std::vector<std::jthread> clients;
    std::uint64_t seed = options.seed;
    for (const auto& engine : host.engines()) {
      clients.emplace_back([&engine = *engine, s = seed++](std::stop_token stop) {
        drive(engine, s, stop);
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(options.duration_s));
    for (auto& client : clients) client.request_stop();
    host.stop();  // in-flight requests end with EngineStopped; clients return
  }
  const TimePoint end = Clock::now();

  ReproResult result;
  result.backend = std::string(host.device().backend());
  result.turn = options.turn;
  result.duration_s = seconds_between(start, end);
  const OverlapReading overlap = host.device().overlap().read(end);
  result.overlap_s = overlap.overlap_s;
  result.overlap_episodes = overlap.episodes;
  for (const auto& engine : host.engines()) {
    result.engines.push_back(summarize_engine(*engine, result.duration_s));
  }
  result.turn_stats = host.turn().stats();
  return result;
}

}  // namespace baton
