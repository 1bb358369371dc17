// StreamRecorder: writes the GPU-side exposure into a Ledger: every stretch during which
// a stream had work in flight (from the commit that made it busy to the completion that
// made it idle) becomes a row of stream_intervals. It sees the same transitions as the
// device's OverlapMeter, so the ledger's stream dual time is what `baton repro` reports
// as overlap, and under `serialize` it is zero. (The engine intervals, from asking for
// the turn to completion, count waiting for the turn as busy.)
//
// To keep the ledger small, a stream that goes busy again within Ledger::kMergeGapSeconds
// continues its interval, but only when no stream at all was busy in the gap: the merge
// then adds that gap to busy time and never to dual time. (Streams report from their own
// threads, so another stream's busy report can come after the merge with a time inside
// the gap: such a race adds under a millisecond of dual time, and only where streams do
// overlap.)
//
// Thread-safety: name_stream() during set-up; stream_busy/idle() are called from every
// stream's threads at once (one mutex, and the Ledger only queues); finish() once every
// stream is idle.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "baton/gpu/stream_observer.h"
#include "baton/ledger/ledger.h"
#include "baton/ledger/wall_reference.h"

namespace baton {

class StreamRecorder final : public StreamObserver {
 public:
  StreamRecorder(Ledger& ledger, std::int64_t run_id, WallReference wall);

  // The name that the rows of stream `id` carry (default: "stream-ID").
  void name_stream(StreamId id, std::string name);
  void stream_busy(StreamId stream, TimePoint at) override;
  void stream_idle(StreamId stream, TimePoint at) override;
  // Records what is held back for a merge, and ends a stream still busy now. Call before
  // Ledger::end_run.
  void finish();
  // From `at` on, rows belong to run `run_id` (a live experiment's next block): stretches
  // busy across `at` are cut there, each side in its own run.
  void set_run(std::int64_t run_id, TimePoint at);

 private:
  struct Stretch {
    StreamId stream;
    TimePoint start;
    TimePoint end;
  };

  void record(const Stretch& stretch);  // mu_ held

  Ledger& ledger_;
  std::int64_t run_id_;  // guarded by mu_
  const WallReference wall_;

  std::mutex mu_;
  std::map<StreamId, std::string> names_;  // guarded by mu_
  std::map<StreamId, TimePoint> busy_;     // streams busy now, since when; guarded by mu_
  // The last stretch, held back while no stream has been busy since it ended: it may
  // merge with its stream's next one. guarded by mu_
  std::optional<Stretch> held_;
};

}  // namespace baton
