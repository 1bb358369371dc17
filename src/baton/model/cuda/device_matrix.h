// DeviceMatrix: a weight matrix in device memory as the products read it, [out x in]
// row-major: bf16 values, or E4M3 bytes with one f32 scale per row (`--weights fp8`,
// fp8_weights.h). A view: CudaModel owns the memory.
// Thread-safety: a value; the memory it points at is immutable once uploaded.
#pragma once

#include <cstdint>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda {

struct DeviceMatrix {
  const void* values = nullptr;
  const float* scales = nullptr;  // per row, E4M3 values only; null: bf16 values
  int out = 0;
  int in = 0;

  bool fp8() const { return scales != nullptr; }
  const kernels::bf16* bf16_values() const { return static_cast<const kernels::bf16*>(values); }
  const std::uint8_t* fp8_values() const { return static_cast<const std::uint8_t*>(values); }
};

}  // namespace baton::cuda
