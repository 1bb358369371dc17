// StreamObserver: what sees every stream become busy or idle (the overlap meter today;
// the fault injector and watchdog later).
// Thread-safety: implementations are called from encoding and executing threads at once
// and must be thread-safe. A Stream calls them under its own lock, so they must not call
// back into any Stream.
#pragma once

#include <cstdint>

#include "baton/common/clock.h"

namespace baton {

using StreamId = std::uint32_t;

class StreamObserver {
 public:
  virtual ~StreamObserver() = default;
  // The stream's in-flight count went from 0 to 1 at `at`.
  virtual void stream_busy(StreamId stream, TimePoint at) = 0;
  // The stream's in-flight count went back to 0 at `at`.
  virtual void stream_idle(StreamId stream, TimePoint at) = 0;
};

}  // namespace baton
