// StartGate: the cross-process scenario's `baton repro` children start their timed runs
// together. Each child, its engines ready, marks itself ready in the gate's folder and
// waits for the parent to open the gate; the parent opens it once every child is ready.
// Without it, a child whose start-up outlasted the other's whole run (a loaded machine,
// ThreadSanitizer) never met it, and the host-wide turn saw no handover. Files in a folder,
// because the two sides are different processes.
// Thread-safety: each function is called by one thread of its process.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>

namespace baton {

// How long either side waits for the other: model loading under ThreadSanitizer included.
inline constexpr std::chrono::milliseconds kStartUpLimit{300'000};

// The child's side: marks this process ready, then returns once the gate is open. Throws
// std::runtime_error naming the folder when it is not opened within `limit`.
void wait_at_start_gate(const std::filesystem::path& gate, std::chrono::milliseconds limit);

// The parent's side: opens the gate once `children` are ready. Returns false without
// opening it when `gave_up()` turns true first (a child exited before it was ready) or
// `limit` passes.
bool open_start_gate(const std::filesystem::path& gate, std::size_t children,
                     const std::function<bool()>& gave_up, std::chrono::milliseconds limit);

}  // namespace baton
