// StreamObserver: what sees every stream become busy or idle, and every error a device
// reports (the overlap meter, the fault injector, the watchdog).
// Thread-safety: implementations are called from encoding and executing threads at once
// and must be thread-safe. A Stream calls them under its own lock, so they must not call
// back into any Stream.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/common/clock.h"
#include "baton/gpu/gpu_error.h"

namespace baton {

using StreamId = std::uint32_t;

class StreamObserver {
 public:
  virtual ~StreamObserver() = default;
  // The stream's in-flight count went from 0 to 1 at `at`.
  virtual void stream_busy(StreamId stream, TimePoint at) = 0;
  // The stream's in-flight count went back to 0 at `at`.
  virtual void stream_idle(StreamId stream, TimePoint at) = 0;
  // The device reported `error` for a buffer of the stream (not called for the error a
  // reset() puts on a stream: whoever resets has seen the fault already).
  virtual void buffer_failed(StreamId /*stream*/, const GpuError& /*error*/, TimePoint /*at*/) {}
};

// Calls every observer in turn. Observers are added during set-up, before any stream
// commits work; after that the list is read-only.
class ObserverList final : public StreamObserver {
 public:
  void add(StreamObserver& observer) { observers_.push_back(&observer); }
  void stream_busy(StreamId stream, TimePoint at) override {
    for (StreamObserver* o : observers_) o->stream_busy(stream, at);
  }
  void stream_idle(StreamId stream, TimePoint at) override {
    for (StreamObserver* o : observers_) o->stream_idle(stream, at);
  }
  void buffer_failed(StreamId stream, const GpuError& error, TimePoint at) override {
    for (StreamObserver* o : observers_) o->buffer_failed(stream, error, at);
  }

 private:
  std::vector<StreamObserver*> observers_;
};

}  // namespace baton
