// DeviceMatrix: a weight matrix in device memory as the products read it, [out x in]
// row-major: bf16 values; E4M3 bytes with one f32 scale per row (`--weights fp8`,
// fp8_weights.h); or Q8_0 int8 in rows of whole groups of 32 with one f32 scale per group
// (a model the host holds in q8, q8_weights.h). A view: CudaModel owns the memory.
// Thread-safety: a value; the memory it points at is immutable once uploaded.
#pragma once

#include <cstdint>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda {

enum class DeviceFormat { bf16, fp8_rows, q8_groups };

struct DeviceMatrix {
  const void* values = nullptr;
  const float* scales = nullptr;  // fp8_rows: [out]; q8_groups: [out x groups]; bf16: null
  int out = 0;
  int in = 0;
  DeviceFormat format = DeviceFormat::bf16;

  bool fp8() const { return format == DeviceFormat::fp8_rows; }
  bool q8() const { return format == DeviceFormat::q8_groups; }
  // 8 bits a weight: products of many rows widen it to bf16 first (cuda_linear.h).
  bool eight_bit() const { return format != DeviceFormat::bf16; }
  const kernels::bf16* bf16_values() const { return static_cast<const kernels::bf16*>(values); }
  const std::uint8_t* fp8_values() const { return static_cast<const std::uint8_t*>(values); }
  const std::int8_t* q8_values() const { return static_cast<const std::int8_t*>(values); }
};

}  // namespace baton::cuda
