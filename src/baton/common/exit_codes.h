// Exit codes of the `baton` command, documented in the README.
#pragma once

namespace baton {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the run itself failed (device, I/O, ...)
inline constexpr int kExitUsage = 2;      // bad command-line arguments
inline constexpr int kExitGpuFatal = 70;  // the device can no longer be used; restart the process
// The run itself went well, but its ledger misses rows (or the run's end) that could not be
// written (sysexits' EX_IOERR). A fatal device's 70 goes first.
inline constexpr int kExitLedgerIncomplete = 74;
// The shell's convention for "the command could not be executed" (not found, not
// executable). `baton supervise` returns it without a restart: running it again would fail
// the same way.
inline constexpr int kExitCannotExecute = 127;
// A process stopped by signal N exits with 128 + N, as shells report it.
inline constexpr int kExitSignalBase = 128;

}  // namespace baton
