// simulated_ledger: a ledger whose hangs depend on one known factor, to see `baton analyze
// --by` name it. Two LLM engines over HOURS hours in one-minute slots: each is busy in a
// slot with probability 0.5, and a busy slot is a prefill with probability 0.3, else a
// decode (so prefills are in flight more often while both are busy: the two factors go
// together). Hangs arrive at 2 an hour while CAUSE holds (dual: both busy;
// prefill_in_flight: a prefill open) and at 0.2 an hour in the rest of the busy time.
// Usage: simulated_ledger OUT.db dual|prefill_in_flight [HOURS (200)] [SEED (1)]
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "baton/ledger/ledger.h"

int main(int argc, char** argv) {
  if (argc < 3 || (std::string(argv[2]) != "dual" && std::string(argv[2]) != "prefill_in_flight")) {
    std::fprintf(stderr, "usage: simulated_ledger OUT.db dual|prefill_in_flight [HOURS] [SEED]\n");
    return 2;
  }
  const bool by_dual = std::string(argv[2]) == "dual";
  const double hours = argc > 3 ? std::atof(argv[3]) : 200.0;
  std::mt19937_64 random(argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1);
  std::bernoulli_distribution busy(0.5), prefill(0.3);
  std::uniform_real_distribution<double> within(0.0, 60.0);
  baton::Ledger ledger(argv[1]);
  const double t0 = 1.8e9;  // 2027-01-15
  const std::int64_t run = ledger.begin_run({.start = t0,
                                             .version = "simulated",
                                             .backend = "cpu",
                                             .policy = "concurrent",
                                             .streams_recorded = false});
  std::int64_t hangs = 0;
  for (double slot = t0; slot < t0 + hours * 3600.0; slot += 60.0) {
    bool any = false, both = true, prefilling = false;
    for (const char* engine : {"llm-a", "llm-b"}) {
      if (!busy(random)) {
        both = false;
        continue;
      }
      any = true;
      const bool is_prefill = prefill(random);
      prefilling = prefilling || is_prefill;
      ledger.record(baton::IntervalRow{.run_id = run,
                                       .engine = engine,
                                       .kind = is_prefill ? "prefill" : "decode",
                                       .start = slot,
                                       .end = slot + 60.0,
                                       .context_tokens = 1000,
                                       .request_id = std::nullopt,
                                       .bursts = 1});
    }
    if (!any) continue;
    const bool cause = by_dual ? both : prefilling;
    const double per_hour = cause ? 2.0 : 0.2;
    const auto count = std::poisson_distribution<int>(per_hour / 60.0)(random);
    for (int i = 0; i < count; ++i, ++hangs) {
      ledger.record(baton::EventRow{.run_id = run,
                                    .time = slot + within(random),
                                    .error_class = "hang",
                                    .engine = "llm-a",
                                    .stream = "",
                                    .in_flight = 1,
                                    .detail = ""});
    }
  }
  ledger.end_run(run, t0 + hours * 3600.0, 0);
  ledger.flush();
  std::printf("%s: %.0f hours, %lld hangs, caused by %s\n", argv[1], hours,
              static_cast<long long>(hangs), argv[2]);
  return 0;
}
