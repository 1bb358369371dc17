// A CLI11 check for a floating-point flag: a finite number within [min, max]. CLI::Range
// alone lets "nan" through (every comparison with NaN is false), and a NaN or an infinity
// would flow into the arithmetic and print a half-made table. The message names the flag
// (CLI11 puts it first) and exits with 2, as other usage errors do. Also the check of
// --prefill-share, a number or "auto".
// Thread-safety: the validator is immutable once made.
#pragma once

#include <CLI/CLI.hpp>

namespace baton {

CLI::Validator finite_range(double min, double max);
// --prefill-share: "weights", "auto" or a share in [0.01, 1] (parse_prefill_share).
CLI::Validator prefill_share_check();

}  // namespace baton
