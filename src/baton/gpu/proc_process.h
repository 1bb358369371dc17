// What /proc says about processes: a process's command name (naming the pids NVML reports),
// its state and start time (whether a process of the host-wide turn still lives, and is
// the one that attached: host_segment), and whether this process sees the host's pids
// (NVML's) at all.
// Thread-safety: pure functions over /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace baton {

// /proc/PID/comm without its newline; nullopt when there is no such process here (it ended,
// or it lives in another PID namespace) or it cannot be read.
std::optional<std::string> process_name(std::uint32_t pid);

struct ProcStat {
  char state = '?';              // R, S, D, Z (zombie), X (dead), ...
  std::uint64_t start_time = 0;  // clock ticks after boot: tells a reused pid apart
};
// /proc/PID/stat's state (field 3) and start time (field 22); nullopt when there is no such
// process or it cannot be read. Plain system calls only (no allocation): it runs under
// the host turn's robust mutex while it recovers from a dead holder.
std::optional<ProcStat> read_proc_stat(std::uint32_t pid);

// Whether this process is in the host's (the initial) PID namespace, whose pids the NVIDIA
// driver reports everywhere; false in a container's own namespace or when unknown.
bool in_host_pid_namespace();

}  // namespace baton
