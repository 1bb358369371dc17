// ModelRegistry: the life of every configured model while the server runs. A model is
// unloaded, loading (with its progress), ready, unloading (its requests drain, then its
// engine stops) or failed (with the reason). It loads at start-up (`load = "startup"`) or
// on the first request for it (`on-demand`), on POST .../load, and unloads on POST
// .../unload, after `idle_ttl` unused, or when a load needs its memory: the host-wide
// budget counts each loaded model's weights and KV budget, and a load past it evicts the
// least recently used unpinned models first. A model that fails to load fails alone.
//
// Requests hold a lease (a shared_ptr to the ServedModel): while serving, a model is
// destroyed on the registry's own thread, only once every lease is gone, so a request
// never sees its engine or weights go (the destructor destroys what is left, once the
// HTTP server is gone). Loads run on a thread per load; one ticker thread drains
// unloading models, starts loads that waited for memory, expires idle models and answers
// the requests whose wait for a load ran out.
//
// Thread-safety: every member is thread-safe. The loader and the waiters' callbacks are
// called without the registry's lock held; the event sink with it (so that the ledger has
// a load before any request runs on the model): it must be quick and never call back.
// stop() (or the destructor) before the host stops: no thread of the registry adds or
// removes an engine after it returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "baton/common/clock.h"
#include "baton/ledger/wall_reference.h"
#include "baton/server/http/api_error.h"
#include "baton/server/models/served_model.h"

namespace baton {

enum class ModelState { unloaded, loading, ready, unloading, failed };
std::string_view to_string(ModelState state);

// One model as GET /v1/models shows it.
struct ModelStatus {
  ModelSpec spec;
  ModelState state = ModelState::unloaded;
  std::uint64_t progress_done = 0;  // bytes of weights read, while loading
  std::uint64_t progress_total = 0;
  std::string reason;                 // why it failed
  std::uint64_t memory_bytes = 0;     // what it holds (estimated while loading), else 0
  std::uint64_t host_memory_bytes = 0;    // of a loaded model: where it holds it (ServedModel)
  std::uint64_t device_memory_bytes = 0;
  std::optional<double> last_used;    // Unix seconds
  std::optional<double> expires_at;   // Unix seconds, with idle_ttl
  int context_length = 0;             // of the loaded engine; 0 when not loaded
  std::uint64_t kv_budget_bytes = 0;  // of a loaded chat model; 0 otherwise
  std::string kv_source;              // given, default or auto (kv_sizing.h)
  EngineTotals totals;  // its engines' counters, every load's added up (cumulative per seat)
};

// A load, unload, eviction or failed load, for the ledger's events.
struct LifecycleEvent {
  std::string kind;  // load, unload, evict, load_failed
  std::string model;
  std::string detail;
};

struct RegistryOptions {
  std::uint64_t memory_budget_bytes = 0;         // 0: none
  std::chrono::milliseconds load_wait{120'000};  // a request's wait for a load
  std::chrono::milliseconds drain_timeout{30'000};
  std::chrono::milliseconds tick{20};
};

class ModelRegistry {
 public:
  using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;
  // Loads the files and hosts the engine; throws what loading throws.
  using Loader = std::function<std::unique_ptr<ServedModel>(const ModelSpec&, const Progress&)>;
  // What a model will hold once loaded, known before loading (for the budget).
  using Sizer = std::function<std::uint64_t(const ModelSpec&)>;
  using EventSink = std::function<void(const LifecycleEvent&)>;
  using Lease = std::shared_ptr<const ServedModel>;
  // A request's model once loaded, or the error that ends its wait (an ApiError).
  using Ready = std::function<void(Lease model, std::exception_ptr error)>;

  ModelRegistry(std::vector<ModelSpec> specs, RegistryOptions options, Loader loader, Sizer sizer,
                EventSink events);
  // stop(), then destroys every model (leases must be gone: the HTTP server first).
  ~ModelRegistry();
  // Joins the ticker and the loads in progress (a load runs to its end) and answers the
  // waiting requests with a 503; the models stay until the destructor. Idempotent.
  void stop();
  ModelRegistry(const ModelRegistry&) = delete;
  ModelRegistry& operator=(const ModelRegistry&) = delete;

  // Loads the start-up models, in order, on this thread, with `progress` per model.
  // Throws the first error when every start-up model failed; logs the others' failures.
  void load_startup(
      std::ostream& log,
      const std::function<void(const std::string&, std::uint64_t, std::uint64_t)>& progress = {});

  // The model for a request: its lease when ready. When it is loading, or unloaded and
  // on-demand (which starts its load), `on_ready` is called once it is ready or failed, or
  // its wait ran out, and the lease returned is null. Throws ApiError: 404 (no such model,
  // or not of kind `chat`), 503 (failed, unloading, or unloaded and not on-demand).
  Lease acquire(const std::string& name, bool chat, Ready on_ready);

  // POST .../load and .../unload: start the transition; return the status after it.
  // Throw ApiError 404 for an unknown model.
  ModelStatus load(const std::string& name);
  ModelStatus unload(const std::string& name);

  std::vector<ModelStatus> statuses() const;
  ModelStatus status(const std::string& name) const;  // ApiError 404
  // The ready models' leases, for the routes that describe engines.
  std::vector<Lease> ready() const;
  std::uint64_t used_bytes() const;
  std::uint64_t budget_bytes() const { return options_.memory_budget_bytes; }
  const std::vector<ModelSpec>& specs() const { return specs_; }

 private:
  struct Entry;
  struct Waiter {
    Ready ready;
    TimePoint deadline;
  };
  using Calls = std::vector<std::function<void()>>;  // run after the lock is released

  Entry& entry(const std::string& name) const;  // ApiError 404
  ModelStatus status_locked(const Entry& e) const;
  std::uint64_t used_locked() const;
  void request_load_locked(Entry& e, Calls& calls);
  void try_start_locked(Entry& e, Calls& calls);
  void start_unload_locked(Entry& e, std::string kind, std::string detail);
  void run_load(Entry& e);  // a load's thread
  // Runs the loader on this thread, then makes `e` ready or failed; the loader's error.
  std::exception_ptr load_now(Entry& e, const Progress& progress);
  void ready_locked(Entry& e, std::unique_ptr<ServedModel> model, const std::string& detail,
                    Calls& calls);
  void fail_locked(Entry& e, const std::string& reason, Calls& calls);
  void answer_waiters_locked(Entry& e, const ApiError& error, Calls& calls);
  void tick_loop(std::stop_token stop);
  void tick_locked(Calls& calls);
  void retire(Entry& e);  // the ticker: drains, stops and destroys an unloading model
  static void run(Calls& calls);

  const std::vector<ModelSpec> specs_;
  const RegistryOptions options_;
  const Loader loader_;
  const Sizer sizer_;
  const EventSink events_;
  const WallReference wall_;  // last_used and expires_at in Unix seconds

  mutable std::mutex mu_;
  std::condition_variable_any tick_;             // the ticker's sleep, which stop() cuts short
  std::vector<std::unique_ptr<Entry>> entries_;  // one per spec; the set is fixed
  std::vector<Entry*> pending_;                  // loads waiting for memory, oldest first
  bool stopping_ = false;
  std::jthread ticker_;  // last: starts after the rest
};

}  // namespace baton
