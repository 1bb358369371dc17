// Strata: busy time and hangs split by the state the LLM engines were in, so that causes
// that occur together (two engines busy, a prefill in flight, a long context, one host or
// another) can be told apart by a Poisson regression (poisson_regression.h).
// The state at an instant, over the engines busy then (embedding work is not LLM work):
//   busy: how many were busy (1, 2, 3 or more); dual: two or more;
//   prefill_in_flight: some interval of kind "prefill" was open;
//   long_context: some interval of at least the long-context threshold was open;
//   host: the source (a ledger) it came from, for a fleet of several;
//   policy, backend, driver: those of the runs whose engines were busy ("mixed" when runs
//     of two were busy at once, empty when the source does not say: CSV logs, the CPU's
//     driver);
//   day: the UTC date (a stretch over midnight is split there);
//   other_gpu_client: whether a process other than baton used the GPU then (gpu_clients.h):
//     "busy" (at least the threshold of SM time), "idle", "unresolved" (pids that could not
//     be told from baton's), "unsampled" (no poll then); empty when the source has no poll.
// A hang counts in the state at its time; hangs while no engine was busy are counted
// apart (they have no exposure to be a rate of).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "baton/analysis/exposure_input.h"
#include "baton/analysis/gpu_clients.h"
#include "baton/analysis/poisson_regression.h"

namespace baton {

enum class Factor {
  busy,
  dual,
  prefill_in_flight,
  long_context,
  host,
  policy,
  backend,
  driver,
  other_gpu_client,
  day
};

// The names above; nullopt for another.
std::optional<Factor> parse_factor(std::string_view name);
std::string_view to_string(Factor factor);
// "busy, dual, prefill_in_flight, long_context, host, policy, backend, driver,
// other_gpu_client, day", for errors.
std::string known_factors();

struct StratumState {
  int busy = 1;  // 1, 2, or 3 for three or more
  bool prefill_in_flight = false;
  bool long_context = false;
  std::string host;
  std::string policy;
  std::string backend;
  std::string driver;
  std::string day;  // YYYY-MM-DD, UTC
  std::string other_gpu_client;
  auto operator<=>(const StratumState&) const = default;
};

struct Stratum {
  StratumState state;
  double hours = 0.0;
  std::int64_t hangs = 0;
  std::int64_t attributed_hangs = 0;  // of those, blamed on an engine (the uniform test's)
};

// A counted event and the state at its moment; nullopt: no LLM engine was busy.
struct PlacedEvent {
  std::optional<StratumState> state;
  HangRecord event;
};

struct Strata {
  std::vector<Stratum> strata;  // sorted by state; only states that occurred
  std::int64_t hangs_while_idle = 0;
  std::vector<PlacedEvent> events;  // every counted one, in the input's order (stratify())
};

// The strata of one source. `hang_classes`: the event classes that count;
// `other_client_sm_percent`: the other use from which other_gpu_client is "busy".
Strata stratify(const ExposureInput& input, std::int64_t long_context_threshold,
                const std::set<std::string>& hang_classes, const std::string& host,
                double other_client_sm_percent = kDefaultOtherClientSmPercent);

// The busy hours of all the strata; 0 when no LLM engine was busy (nothing to fit).
double busy_hours(const Strata& strata);

// Several sources' strata, summed (a fleet).
Strata merge_strata(const std::vector<Strata>& parts);

// The regression's table for `factors`: one cell per combination of their levels that
// occurred, one column per level past the first (busy: "busy=2", "busy=3+"; host, policy,
// backend, driver, day: "host=NAME" for each past the first by name; other_gpu_client:
// each level but "idle", "other_gpu_client=busy"), one term per factor.
PoissonDesign design_for(const Strata& strata, const std::vector<Factor>& factors);

}  // namespace baton
