// Op and CommandBuffer: units of device work as a Stream records them.
// An Op is one kernel-sized piece of work; a CommandBuffer is the batch of ops that is
// committed (submitted) to the device at once, in order.
// Thread-safety: values; moved from the encoding thread to the executing one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "baton/common/clock.h"
#include "baton/gpu/fault_hooks.h"

namespace baton {

struct Op {
  std::function<void()> run;  // the work; may throw GpuError
  std::size_t bytes = 0;      // device memory the op touches, counted against the MB cap
};

struct CommandBuffer {
  std::uint64_t id = 0;  // per stream, increasing from 1
  std::vector<Op> ops;
  std::size_t bytes = 0;
  TimePoint committed_at{};
  BufferFault fault = BufferFault::none;  // decided at commit by the fault hooks, if any
};

}  // namespace baton
