#include "baton/server/models/model_registry.h"

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cmath>

#include "baton/common/human_bytes.h"
#include "baton/server/http/api_error.h"
#include "baton/server/models/eviction.h"

namespace baton {
namespace {

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown error";
  }
}

ApiError load_failed(const std::string& name, const std::string& reason,
                     const std::string& hint = {}) {
  return ApiError(503, "The model '" + name + "' failed to load: " + reason + hint, "server_error",
                  "model_load_failed", "model");
}

ApiError not_loaded(const std::string& name) {
  return ApiError(
      503, "The model '" + name + "' was unloaded; POST /v1/models/" + name + "/load loads it",
      "server_error", "model_not_loaded", "model");
}

double seconds(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

}  // namespace

std::string_view to_string(ModelState state) {
  switch (state) {
    case ModelState::unloaded:
      return "unloaded";
    case ModelState::loading:
      return "loading";
    case ModelState::ready:
      return "ready";
    case ModelState::unloading:
      return "unloading";
    case ModelState::failed:
      return "failed";
  }
  return "unknown";
}

struct ModelRegistry::Entry {
  explicit Entry(const ModelSpec& s) : spec(s) {}
  const ModelSpec& spec;
  ModelState state = ModelState::unloaded;
  std::string reason;                  // failed
  std::unique_ptr<ServedModel> model;  // ready, unloading
  // While ready, the registry holds one; every lease shares it. Its deleter says when the
  // last lease is gone, on whatever thread let it go.
  std::shared_ptr<int> token;
  std::shared_ptr<std::atomic<bool>> released = std::make_shared<std::atomic<bool>>(true);
  std::uint64_t memory = 0;  // counted while started, ready or unloading
  bool started = false;      // loading: its thread runs
  std::atomic<std::uint64_t> done{0}, total{0};
  std::optional<TimePoint> last_used;
  std::vector<Waiter> waiters;
  std::jthread loader;
  TimePoint load_began{};
  // Unloading:
  TimePoint drain_deadline{};
  bool stopped = false;     // its engine was told to stop
  std::string unload_kind;  // unload or evict
  std::string unload_detail;
  bool reload_after = false;       // an on-demand request waits for it to load again
  bool unload_after_load = false;  // unload was asked while it was loading
  EngineTotals earlier;            // the counters of its engines that were unloaded

  Lease lease() const { return Lease(token, model.get()); }
};

ModelRegistry::ModelRegistry(std::vector<ModelSpec> specs, RegistryOptions options, Loader loader,
                             Sizer sizer, EventSink events)
    : specs_(std::move(specs)),
      options_(options),
      loader_(std::move(loader)),
      sizer_(std::move(sizer)),
      events_(std::move(events)) {
  for (const ModelSpec& spec : specs_) entries_.push_back(std::make_unique<Entry>(spec));
  ticker_ = std::jthread([this](std::stop_token stop) { tick_loop(stop); });
}

ModelRegistry::~ModelRegistry() {
  stop();
  for (auto& e : entries_) {
    if (HostedEngine* engine = e->model ? e->model->engine() : nullptr) engine->stop();
    e->token.reset();
    e->model.reset();
  }
}

void ModelRegistry::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;  // from now on no load starts
  }
  ticker_.request_stop();  // wakes the ticker's wait
  if (ticker_.joinable()) ticker_.join();
  for (auto& e : entries_) {
    if (e->loader.joinable()) e->loader.join();
  }
  Calls calls;
  {
    std::lock_guard lock(mu_);
    const ApiError stopping =
        ApiError(503, "The server is stopping", "server_error", "server_stopping")
            .with_retry_after(1);
    for (auto& e : entries_) answer_waiters_locked(*e, stopping, calls);
  }
  run(calls);
}

ModelRegistry::Entry& ModelRegistry::entry(const std::string& name) const {
  for (const auto& e : entries_) {
    if (e->spec.name == name) return *e;
  }
  std::string names;
  for (const ModelSpec& spec : specs_) names += (names.empty() ? "" : ", ") + spec.name;
  throw ApiError(404, "The model '" + name + "' does not exist; the models are: " + names,
                 "invalid_request_error", "model_not_found", "model");
}

void ModelRegistry::answer_waiters_locked(Entry& e, const ApiError& error, Calls& calls) {
  for (Waiter& w : e.waiters) {
    calls.push_back(
        [ready = std::move(w.ready), error] { ready(nullptr, std::make_exception_ptr(error)); });
  }
  e.waiters.clear();
}

void ModelRegistry::run(Calls& calls) {
  for (auto& call : calls) call();
  calls.clear();
}

std::uint64_t ModelRegistry::used_locked() const {
  std::uint64_t used = 0;
  for (const auto& e : entries_) {
    const bool counted = e->state == ModelState::ready || e->state == ModelState::unloading ||
                         (e->state == ModelState::loading && e->started);
    if (counted) used += e->memory;
  }
  return used;
}

std::uint64_t ModelRegistry::used_bytes() const {
  std::lock_guard lock(mu_);
  return used_locked();
}

ModelStatus ModelRegistry::status_locked(const Entry& e) const {
  ModelStatus s;
  s.spec = e.spec;
  s.state = e.state;
  s.reason = e.reason;
  if (e.state == ModelState::loading) {
    s.progress_done = e.done.load(std::memory_order_relaxed);
    s.progress_total = e.total.load(std::memory_order_relaxed);
  }
  const bool holds = e.state == ModelState::ready || e.state == ModelState::unloading ||
                     (e.state == ModelState::loading && e.started);
  s.memory_bytes = holds ? e.memory : 0;
  if (e.last_used) s.last_used = wall_.unix_seconds(*e.last_used);
  if (e.state == ModelState::ready && e.spec.idle_ttl_s > 0 && !e.spec.pin && e.last_used) {
    s.expires_at = *s.last_used + e.spec.idle_ttl_s;
  }
  s.totals = e.earlier;
  if (e.model) s.totals += e.model->totals();
  if (e.state == ModelState::ready) {
    s.host_memory_bytes = e.model->host_memory_bytes();
    s.device_memory_bytes = e.model->device_memory_bytes();
  }
  if (e.state == ModelState::ready && e.model->llm != nullptr) {
    s.context_length = e.model->llm->context_length();
    s.kv_budget_bytes = std::uint64_t{e.model->spec.kv_budget_mb} << 20;
    s.kv_source = e.model->kv_source;
  } else if (e.state == ModelState::ready && e.model->model) {
    s.context_length = static_cast<int>(e.model->model->config().max_position_embeddings);
  }
  return s;
}

std::vector<ModelStatus> ModelRegistry::statuses() const {
  std::lock_guard lock(mu_);
  std::vector<ModelStatus> all;
  for (const auto& e : entries_) all.push_back(status_locked(*e));
  return all;
}

ModelStatus ModelRegistry::status(const std::string& name) const {
  std::lock_guard lock(mu_);
  return status_locked(entry(name));
}

std::vector<ModelRegistry::Lease> ModelRegistry::ready() const {
  std::lock_guard lock(mu_);
  std::vector<Lease> leases;
  for (const auto& e : entries_) {
    if (e->state == ModelState::ready) leases.push_back(e->lease());
  }
  return leases;
}

ModelRegistry::Lease ModelRegistry::acquire(const std::string& name, bool chat, Ready on_ready) {
  Calls calls;
  std::optional<ApiError> refused;
  {
    std::lock_guard lock(mu_);
    Entry& e = entry(name);
    const bool is_chat = e.spec.kind == ModelSpec::Kind::chat;
    if (is_chat != chat) {
      std::string served;
      for (const ModelSpec& spec : specs_) {
        if ((spec.kind == ModelSpec::Kind::chat) == chat) {
          served += (served.empty() ? "" : ", ") + spec.name;
        }
      }
      throw ApiError(404,
                     "The model '" + name + "' is " + (is_chat ? "a chat" : "an embedding") +
                         " model; this route serves: " + (served.empty() ? "none" : served),
                     "invalid_request_error", "model_not_found", "model");
    }
    const std::string load_hint = "; POST /v1/models/" + name + "/load loads it";
    switch (e.state) {
      case ModelState::ready:
        e.last_used = Clock::now();
        return e.lease();
      case ModelState::failed:
        throw load_failed(name, e.reason, load_hint);
      case ModelState::unloading:
        if (!e.spec.on_demand) {
          throw ApiError(503, "The model '" + name + "' is unloading" + load_hint, "server_error",
                         "model_not_loaded", "model")
              .with_retry_after(1);
        }
        e.reload_after = true;
        break;
      case ModelState::unloaded:
        if (!e.spec.on_demand) {
          throw ApiError(503, "The model '" + name + "' is not loaded" + load_hint, "server_error",
                         "model_not_loaded", "model");
        }
        request_load_locked(e, calls);
        break;
      case ModelState::loading:
        break;
    }
    if (e.state == ModelState::failed) {  // refused at once (over the budget)
      refused = load_failed(name, e.reason, load_hint);
    } else {
      e.waiters.push_back(
          {.ready = std::move(on_ready), .deadline = Clock::now() + options_.load_wait});
    }
  }
  run(calls);
  if (refused) throw *refused;
  return nullptr;
}

ModelStatus ModelRegistry::load(const std::string& name) {
  Calls calls;
  ModelStatus status;
  {
    std::lock_guard lock(mu_);
    Entry& e = entry(name);
    if (e.state == ModelState::unloaded || e.state == ModelState::failed) {
      request_load_locked(e, calls);
    } else if (e.state == ModelState::unloading) {
      e.reload_after = true;
    } else if (e.state == ModelState::loading) {
      e.unload_after_load = false;
    }
    status = status_locked(e);
  }
  run(calls);
  return status;
}

ModelStatus ModelRegistry::unload(const std::string& name) {
  Calls calls;
  ModelStatus status;
  {
    std::lock_guard lock(mu_);
    Entry& e = entry(name);
    e.reload_after = false;
    if (e.state == ModelState::ready) {
      start_unload_locked(e, "unload", "asked by POST /v1/models/" + name + "/unload");
    } else if (e.state == ModelState::loading && !e.started) {  // still waiting for memory
      std::erase(pending_, &e);
      e.state = ModelState::unloaded;
      e.memory = 0;
      answer_waiters_locked(e, not_loaded(name), calls);
    } else if (e.state == ModelState::loading) {
      e.unload_after_load = true;
    } else if (e.state == ModelState::failed) {
      e.state = ModelState::unloaded;
      e.reason.clear();
    }
    status = status_locked(e);
  }
  run(calls);
  return status;
}

void ModelRegistry::request_load_locked(Entry& e, Calls& calls) {
  e.state = ModelState::loading;
  e.reason.clear();
  e.started = false;
  e.unload_after_load = false;
  e.done = 0;
  e.total = 0;
  try {
    e.memory = sizer_(e.spec);
  } catch (const std::exception& error) {
    fail_locked(e, error.what(), calls);
    return;
  }
  pending_.push_back(&e);
  try_start_locked(e, calls);
}

void ModelRegistry::try_start_locked(Entry& e, Calls& calls) {
  if (stopping_) {
    fail_locked(e, "the server is stopping", calls);
    return;
  }
  const std::uint64_t budget = options_.memory_budget_bytes;
  const std::uint64_t used = used_locked();
  if (budget > 0 && used + e.memory > budget) {
    const bool freeing = std::any_of(entries_.begin(), entries_.end(), [](const auto& x) {
      return x->state == ModelState::unloading;
    });
    if (freeing) return;  // tried again once they are gone
    std::vector<Entry*> candidates;
    std::vector<EvictionCandidate> sizes;
    for (const auto& x : entries_) {
      if (x.get() != &e && x->state == ModelState::ready && !x->spec.pin) {
        candidates.push_back(x.get());
        sizes.push_back({.memory = x->memory, .last_used = x->last_used});
      }
    }
    const EvictionPlan plan = choose_evictions(sizes, e.memory, budget, used);
    if (!plan.fits) {
      fail_locked(e,
                  fmt::format("it needs {} but the memory budget is {}, and the models that "
                              "cannot be evicted (pinned or loading) hold {}",
                              human_bytes(e.memory), human_bytes(budget),
                              human_bytes(used - plan.evictable)),
                  calls);
      return;
    }
    for (const std::size_t i : plan.evict) {
      start_unload_locked(*candidates[i], "evict", "to make room for " + e.spec.name);
    }
    return;
  }
  std::erase(pending_, &e);
  e.started = true;
  e.load_began = Clock::now();
  if (e.loader.joinable()) {  // a finished load's thread: joined after the lock
    calls.push_back([done = std::make_shared<std::jthread>(std::move(e.loader))] { done->join(); });
  }
  e.loader = std::jthread([this, &e] { run_load(e); });
}

void ModelRegistry::fail_locked(Entry& e, const std::string& reason, Calls& calls) {
  std::erase(pending_, &e);
  e.state = ModelState::failed;
  e.reason = reason;
  e.started = false;
  e.memory = 0;
  if (events_) events_({"load_failed", e.spec.name, reason});
  answer_waiters_locked(e, load_failed(e.spec.name, reason), calls);
}

void ModelRegistry::run_load(Entry& e) {
  (void)load_now(e, [&e](std::uint64_t done, std::uint64_t total) {
    e.done.store(done, std::memory_order_relaxed);
    e.total.store(total, std::memory_order_relaxed);
  });
}

std::exception_ptr ModelRegistry::load_now(Entry& e, const Progress& progress) {
  std::unique_ptr<ServedModel> model;
  std::exception_ptr error;
  try {
    model = loader_(e.spec, progress);
  } catch (...) {
    error = std::current_exception();
  }
  Calls calls;
  {
    std::lock_guard lock(mu_);
    if (error) {
      fail_locked(e, what_of(error), calls);
    } else {
      const double took = std::chrono::duration<double>(Clock::now() - e.load_began).count();
      const std::string detail =
          fmt::format("{} in {:.2f} s", human_bytes(model->memory_bytes()), took);
      ready_locked(e, std::move(model), detail, calls);
    }
  }
  run(calls);
  return error;
}

void ModelRegistry::ready_locked(Entry& e, std::unique_ptr<ServedModel> model,
                                 const std::string& detail, Calls& calls) {
  e.model = std::move(model);
  e.memory = e.model->memory_bytes();
  e.released->store(false, std::memory_order_relaxed);
  e.token = std::shared_ptr<int>(new int(0), [released = e.released](int* p) {
    delete p;
    released->store(true, std::memory_order_release);
  });
  e.state = ModelState::ready;
  e.last_used = Clock::now();
  // Under the lock, so that the ledger has the load before any request runs on the model.
  if (events_) events_({"load", e.spec.name, detail});
  const Lease lease = e.lease();
  for (Waiter& w : e.waiters) {
    calls.push_back([ready = std::move(w.ready), lease] { ready(lease, nullptr); });
  }
  e.waiters.clear();
  if (e.unload_after_load) start_unload_locked(e, "unload", "asked while it was loading");
}

void ModelRegistry::start_unload_locked(Entry& e, std::string kind, std::string detail) {
  e.state = ModelState::unloading;
  e.drain_deadline = Clock::now() + options_.drain_timeout;
  e.stopped = false;
  e.unload_kind = std::move(kind);
  e.unload_detail = std::move(detail);
  e.token.reset();  // no new lease; the deleter runs with the last request's
}

void ModelRegistry::load_startup(
    std::ostream& log,
    const std::function<void(const std::string&, std::uint64_t, std::uint64_t)>& progress) {
  std::exception_ptr first_error;
  int startup = 0, failed = 0;
  for (const auto& entry_ptr : entries_) {
    Entry& e = *entry_ptr;
    if (e.spec.on_demand) continue;
    ++startup;
    Calls calls;
    bool fits = true;
    {
      std::lock_guard lock(mu_);
      e.state = ModelState::loading;
      e.memory = sizer_(e.spec);
      const std::uint64_t budget = options_.memory_budget_bytes;
      fits = budget == 0 || used_locked() + e.memory <= budget;
      if (fits) {
        e.started = true;
        e.load_began = Clock::now();
      } else {  // at start-up no model is evicted for another
        fail_locked(e,
                    fmt::format("it needs {}, more than the memory budget of {} leaves",
                                human_bytes(e.memory), human_bytes(budget)),
                    calls);
      }
    }
    run(calls);
    std::exception_ptr error;
    if (fits) {
      const std::string& name = e.spec.name;
      error = load_now(e, [&](std::uint64_t done, std::uint64_t total) {
        e.done.store(done, std::memory_order_relaxed);
        e.total.store(total, std::memory_order_relaxed);
        if (progress) progress(name, done, total);
      });
      if (error && !first_error) first_error = error;
    }
    if (!fits || error) {
      ++failed;
      std::lock_guard lock(mu_);
      log << "baton serve: model " << e.spec.name << " failed to load: " << e.reason << "\n";
    }
  }
  if (startup > 0 && failed == startup) {
    if (first_error) std::rethrow_exception(first_error);
    throw std::invalid_argument("every start-up model failed to load (see above)");
  }
}

void ModelRegistry::tick_loop(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    tick_.wait_for(lock, stop, options_.tick, [] { return false; });  // a sleep stop ends
    if (stop.stop_requested()) break;
    Calls calls;
    tick_locked(calls);
    // Engines stop and models go outside the lock: stopping joins an engine's thread.
    std::vector<Entry*> retiring;
    for (auto& e : entries_) {
      if (e->state == ModelState::unloading) retiring.push_back(e.get());
    }
    lock.unlock();
    run(calls);
    for (Entry* e : retiring) retire(*e);
    lock.lock();
  }
}

void ModelRegistry::tick_locked(Calls& calls) {
  const TimePoint now = Clock::now();
  for (Entry* e : std::vector<Entry*>(pending_)) try_start_locked(*e, calls);
  for (auto& e : entries_) {
    // A model a request holds is in use: idle_ttl counts from the last request's end.
    if (e->state == ModelState::ready && e->token.use_count() > 1) e->last_used = now;
    if (e->state == ModelState::ready && e->spec.idle_ttl_s > 0 && !e->spec.pin && e->last_used &&
        e->token.use_count() == 1 &&
        now - *e->last_used >= std::chrono::duration<double>(e->spec.idle_ttl_s)) {
      start_unload_locked(*e, "unload", fmt::format("idle for {:g} s", e->spec.idle_ttl_s));
    }
    if (e->waiters.empty()) continue;
    const std::string name = e->spec.name;
    const std::uint64_t done = e->done, total = e->total;
    std::erase_if(e->waiters, [&](Waiter& w) {
      if (w.deadline > now) return false;
      const std::string progress =
          total > 0 ? fmt::format(" ({:.0f} % read)",
                                  100.0 * static_cast<double>(done) / static_cast<double>(total))
                    : "";
      calls.push_back([ready = std::move(w.ready), name, progress, this] {
        ready(nullptr, std::make_exception_ptr(
                           ApiError(503,
                                    fmt::format("The model '{}' is still loading{} after {:g} s",
                                                name, progress, seconds(options_.load_wait)),
                                    "server_error", "model_loading", "model")
                               .with_retry_after(5)));
      });
      return true;
    });
  }
}

void ModelRegistry::retire(Entry& e) {
  // Only the ticker changes an unloading entry's model, so reading it unlocked is safe.
  HostedEngine* engine = e.model->engine();  // null only for a test's model
  bool stop_now = false;
  {
    std::lock_guard lock(mu_);
    const bool drained = e.released->load(std::memory_order_acquire);
    if (!e.stopped && (drained || Clock::now() >= e.drain_deadline)) {
      e.stopped = true;
      stop_now = true;
    }
  }
  if (stop_now && engine != nullptr)
    engine->stop();  // what is left fails with EngineStopped (a 503)
  if (!e.stopped || !e.released->load(std::memory_order_acquire)) return;
  std::unique_ptr<ServedModel> gone;
  {
    std::lock_guard lock(mu_);  // status_locked() reads the model's counters
    e.earlier += e.model->totals();
    gone = std::move(e.model);
  }
  gone.reset();  // the engine leaves the host; the weights go
  Calls calls;
  {
    std::lock_guard lock(mu_);
    e.state = ModelState::unloaded;
    e.memory = 0;
    e.started = false;
    if (events_) {
      calls.push_back([this, kind = e.unload_kind, name = e.spec.name, detail = e.unload_detail] {
        events_({kind, name, detail});
      });
    }
    if (e.reload_after) {
      e.reload_after = false;
      request_load_locked(e, calls);
    } else {
      answer_waiters_locked(e, not_loaded(e.spec.name), calls);
    }
  }
  run(calls);
}

}  // namespace baton
