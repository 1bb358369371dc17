// WeightMatrix: one [rows x cols] weight (a torch Linear's [out x in], or the embedding
// table) as the CPU kernels read it, in the format chosen at load (weight_format.h): bf16
// (read in place from the file's memory map where the tensor starts on a 64-byte
// boundary; else copied once at load to one, since a 64-byte load that straddles two
// cache lines made the one-row product a third slower, and safetensors files align
// their tensors to 8 bytes), f32, or q8 (q8_matrix.h). An MLX affine-quantized weight
// (mlx_affine.h) or a GGUF tensor in quantized blocks (ggml_blocks.h) is dequantized at
// load into the chosen format (bf16: 2 bytes a weight where the file held 0.25-1). Rows are
// converted to f32 tile by tile as the kernels need them (rows_to_float). Thread-safety: immutable
// after load; any number of threads may read it. A bf16 matrix read in place is valid as long as
// the ModelWeights it came from; the others own their data (a copy of the WeightMatrix shares it,
// immutable), until release_host_copy() gives it back once a device holds it: from then on only
// the shape and format may be read, by any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/model/files/tensor_view.h"
#include "baton/model/weights/model_weights.h"
#include "baton/model/weights/q8_matrix.h"
#include "baton/model/weights/weight_format.h"

namespace baton {

// What the matrix is loaded for: the CPU kernels (bf16 read in place only where aligned),
// or an upload to a device (bf16 read in place wherever it lies, uploaded once).
enum class WeightUse { cpu_kernels, upload };

class WeightMatrix {
 public:
  WeightMatrix() = default;
  // Tensor `name` of `weights`, which must have shape [rows x cols] (ModelFileError naming
  // the file, the tensor and both shapes otherwise), in `format` (see above). A tensor
  // holding an infinity or a NaN is refused (ModelFileError naming it, its row and column),
  // found in the pass that copies or converts it (or, read in place, its first read). A
  // tensor copied or converted has its pages of the memory map released
  // (release_mapped_pages): each weight is held once.
  static WeightMatrix load(const ModelWeights& weights, const std::string& name, std::int64_t rows,
                           std::int64_t cols, WeightFormat format,
                           WeightUse use = WeightUse::cpu_kernels);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  // What it holds: bf16 (in place), f32 or q8.
  WeightFormat format() const;
  bool is_bf16() const { return !bf16_.bytes.empty(); }
  bool is_q8() const { return q8_ != nullptr; }
  // Bytes held for this matrix (in the memory map or its aligned copy for bf16).
  std::size_t bytes() const;
  // Whether it is read in place from the memory map (bf16 not copied).
  bool in_map() const { return is_bf16() && aligned_ == nullptr; }
  // Of bytes(), those release_host_copy() gives back: its copies' buffers of 2 MiB or more.
  std::size_t releasable_bytes() const;
  // Gives the pages of its copy (an aligned or converted bf16 copy, q8's values and scales)
  // back to the system, for every WeightMatrix that shares it (weight_buffer.h: buffers of
  // 2 MiB or more; smaller ones and f32 stay). Never the memory map's pages (those are
  // LlamaModel::release_host_pages()'s). Returns the bytes given back (whole pages). The
  // members stay as they are: rows(), cols(), format(), bytes() and the like may still be
  // read on any thread, but a read of the rows afterwards faults. Only once nothing on the
  // host reads them again (a device holds them).
  std::size_t release_host_copy();
  // Rows [first, first + count) as f32, row-major, into `out` (count * cols floats);
  // dequantized for q8.
  void rows_to_float(int first, int count, float* out) const;
  // The f32 rows themselves, or nullptr for a bf16 or q8 matrix.
  const float* f32_data() const { return f32_.empty() ? nullptr : f32_.data(); }
  // The bf16 rows (little-endian, 64-byte aligned), or nullptr for an f32 or q8 matrix.
  const std::byte* bf16_data() const { return is_bf16() ? bf16_.bytes.data() : nullptr; }
  // The 8-bit rows; std::logic_error unless is_q8().
  const Q8Matrix& q8() const;
  // Whether a GPU keeps this matrix 8-bit as it is (model/cuda/q8_weights.h): q8, in rows of
  // whole 8-value loads, which decode_gemm_q8 reads. CudaModel and upload_bytes() ask here.
  bool stays_q8_on_device() const { return is_q8() && cols_ % 8 == 0; }
  // `m`'s rows, each passed through `round(row, cols)`, held as f32: what another format
  // would keep of them, emulated (e4m3_rounding.h).
  static WeightMatrix with_rounded_rows(const WeightMatrix& m, const std::string& name,
                                        const std::function<void(float* row, int cols)>& round);

 private:
  // `values` [rows x cols] held in `format` (a dequantized MLX weight: mlx_affine.h).
  static WeightMatrix from_values(std::vector<float> values, const std::string& name,
                                  const std::string& file, std::int64_t rows, std::int64_t cols,
                                  WeightFormat format);

  int rows_ = 0;
  int cols_ = 0;
  std::vector<float> f32_;
  TensorView bf16_;  // a bf16 tensor's view of the memory map or of aligned_; else no bytes
  std::shared_ptr<const std::byte> aligned_;  // a misaligned bf16 tensor's copy
  std::shared_ptr<Q8Matrix> q8_;              // q8 only
};

// Reads vector tensor `name` of `size` floats (norm weights, biases), checked as above
// (its shape, and no infinity or NaN).
std::vector<float> load_vector(const ModelWeights& weights, const std::string& name,
                               std::int64_t size);

}  // namespace baton
