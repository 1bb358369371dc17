// What /proc says about processes, for naming the pids NVML reports: a process's
// command name, and whether this process sees the host's pids (NVML's) at all.
// Thread-safety: pure functions over /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace baton {

// /proc/PID/comm without its newline; nullopt when there is no such process here (it ended,
// or it lives in another PID namespace) or it cannot be read.
std::optional<std::string> process_name(std::uint32_t pid);

// Whether this process is in the host's (the initial) PID namespace, whose pids the NVIDIA
// driver reports everywhere; false in a container's own namespace or when unknown.
bool in_host_pid_namespace();

}  // namespace baton
