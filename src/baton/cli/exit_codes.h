// Exit codes of the `baton` command, documented in the README.
#pragma once

namespace baton {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the run itself failed (device, I/O, ...)
inline constexpr int kExitUsage = 2;      // bad command-line arguments
inline constexpr int kExitGpuFatal = 70;  // the device can no longer be used; restart the process

}  // namespace baton
