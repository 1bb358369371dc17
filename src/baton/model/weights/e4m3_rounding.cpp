#include "baton/model/weights/e4m3_rounding.h"

#include <algorithm>
#include <cmath>

namespace baton {

namespace {

constexpr float kLargest = 448.0f;
constexpr int kMantissaBits = 3;
constexpr int kSmallestExponent = -6;  // of the normal numbers; subnormals step 2^-9

}  // namespace

float round_to_e4m3(float v) {
  if (std::isnan(v)) return v;
  const float magnitude = std::fabs(v);
  if (magnitude >= kLargest) return std::copysign(kLargest, v);
  if (magnitude == 0.0f) return v;
  // The spacing of E4M3 numbers around `magnitude`: 2^(exponent - 3), the subnormals' below 2^-6.
  const int exponent = std::max(std::ilogb(magnitude), kSmallestExponent);
  const float step = std::ldexp(1.0f, exponent - kMantissaBits);
  // nearbyint rounds ties to even in the default mode: the even multiple is the even code.
  const float rounded = std::nearbyint(magnitude / step) * step;
  return std::copysign(std::min(rounded, kLargest), v);
}

void round_row_through_e4m3(float* values, int cols, int group) {
  const int step = group > 0 ? group : cols;
  for (int first = 0; first < cols; first += step) {
    const int count = std::min(step, cols - first);
    float* v = values + first;
    float largest = 0.0f;
    for (int i = 0; i < count; ++i) largest = std::max(largest, std::fabs(v[i]));
    if (largest == 0.0f) continue;
    const float scale = largest / kLargest;
    for (int i = 0; i < count; ++i) v[i] = round_to_e4m3(v[i] / scale) * scale;
  }
}

}  // namespace baton
