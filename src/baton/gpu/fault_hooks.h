// FaultHooks: how a fault injector reaches into any backend's streams. A Stream asks it
// at commit (should this buffer fail?), at every op boundary (should the stream hang
// here?) and after every op (is the stream slowed down?), and reports each fault it
// actually realized. Streams without hooks pay nothing. A backend that runs ops on the
// device asks whether hangs arrive at op boundaries at all (then it puts a gate before
// each op), takes a hang for the stream while it has work in flight, and gives back one
// that no gate took before that work ended.
// Thread-safety: implementations are called from encoding and executing threads at once
// and must be thread-safe; they must not call back into a Stream.
#pragma once

#include "baton/common/clock.h"
#include "baton/gpu/stream_observer.h"

namespace baton {

enum class BufferFault {
  none,
  hang,                 // the buffer stalls at its start until the stream is reset
  timeout,              // the buffer fails with a timeout error
  submissions_ignored,  // the device no longer runs anything (fatal)
  device_fault,         // the buffer faults on the device: a real sticky error on CUDA (fatal)
};

class FaultHooks {
 public:
  virtual ~FaultHooks() = default;
  // Owner thread, at commit: the fault this buffer will suffer.
  virtual BufferFault on_commit(StreamId stream) = 0;
  // Executor, at an op boundary: true when the stream must hang here.
  virtual bool stall_now(StreamId stream) = 0;
  // Executor, after an op: how many times slower than normal the stream runs (>= 1).
  virtual double slowdown(StreamId stream, TimePoint now) = 0;
  // Executor: a fault was realized (a stall began, a buffer failed).
  virtual void realized(StreamId stream, BufferFault fault) = 0;
  // Any thread: true when stall_now() can ever answer true (hangs arrive in overlap time).
  virtual bool hangs_at_op_boundaries() const { return false; }
  // Executor: a hang stall_now() handed out found no op boundary before the stream's
  // work ended; it may still land on another stream of the same overlap.
  virtual void hang_not_landed(StreamId /*stream*/) {}
};

}  // namespace baton
