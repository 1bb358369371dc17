// What `--weights fp8` holds, computed on the host: each row of a matrix scaled by its
// largest magnitude / 448 and every value rounded to the nearest E4M3 number (OCP FP8:
// 4 exponent bits of bias 7, 3 mantissa bits, subnormals down to 2^-9, largest 448; ties
// to the even code), then scaled back. The device quantizes the same way
// (model/cuda/fp8_weights.cu); the CPU uses this to measure what the format costs in
// accuracy (bench/q8_accuracy) where no GPU is at hand.
// Thread-safety: pure functions.
#pragma once

namespace baton {

// The E4M3 number nearest to `v` (|v| beyond 448 saturates to 448; NaN stays NaN).
float round_to_e4m3(float v);

// Row `values` of `cols` floats rounded through E4M3, in place: at the row's own scale
// (group 0, what a GPU's `--weights fp8` holds), or at a scale for each `group` values.
void round_row_through_e4m3(float* values, int cols, int group = 0);

}  // namespace baton
