// WeightMatrix: one [rows x cols] weight (a torch Linear's [out x in], or the embedding
// table) as the CPU kernels read it. bf16 tensors stay bf16, read in place from the
// file's memory map (half the memory of f32, and no load-time copy); f16 and f32 tensors
// are held as f32. Rows are converted to f32 tile by tile as the kernels need them.
// Thread-safety: immutable after load; any number of threads may read it. A bf16 matrix
// is valid as long as the ModelWeights it came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/model/model_weights.h"
#include "baton/model/tensor_view.h"

namespace baton {

class WeightMatrix {
 public:
  WeightMatrix() = default;
  // Tensor `name` of `weights`, which must have shape [rows x cols] (ModelFileError naming
  // the file, the tensor and both shapes otherwise). `keep_bf16`: a bf16 tensor stays bf16.
  static WeightMatrix load(const ModelWeights& weights, const std::string& name, std::int64_t rows,
                           std::int64_t cols, bool keep_bf16);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  bool is_bf16() const { return !bf16_.bytes.empty(); }
  // Bytes held for this matrix (in the memory map for bf16).
  std::size_t bytes() const;
  // Rows [first, first + count) as f32, row-major, into `out` (count * cols floats).
  void rows_to_float(int first, int count, float* out) const;
  // The f32 rows themselves, or nullptr for a bf16 matrix.
  const float* f32_data() const { return f32_.empty() ? nullptr : f32_.data(); }
  // The bf16 rows (little-endian, unaligned), or nullptr for an f32 matrix.
  const std::byte* bf16_data() const { return is_bf16() ? bf16_.bytes.data() : nullptr; }

 private:
  int rows_ = 0;
  int cols_ = 0;
  std::vector<float> f32_;
  TensorView bf16_;  // a bf16 tensor's view of the memory map; no bytes for f32
};

// Reads vector tensor `name` of `size` floats (norm weights, biases), checked as above.
std::vector<float> load_vector(const ModelWeights& weights, const std::string& name,
                               std::int64_t size);

}  // namespace baton
