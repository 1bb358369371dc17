// Q8Matrix: a [rows x cols] weight matrix in 8 bits, to decode from half the bytes of bf16
// (decode is memory-bound: every step reads every weight once). Each row's input dimension
// is cut into groups of 32; a group keeps 32 int8 values q and one scale s = max|w| / 127,
// with q = round(w / s), so |w - q * s| <= s / 2.
//
// Layout, for the kernels (q8_kernels.h): a row's int8 values are contiguous, rows follow
// at a stride of whole groups (a last partial group is padded with zeros, so the kernels
// need no tail) from a 64-byte aligned start; the scales are a second array, [rows x
// groups]. Scales are f32, not f16: 4 bytes per 32 weights instead of 2 (36 bytes a group
// rather than 34, 6% more to read) buys bf16's whole exponent range, where f16 would
// flush the scale of a group of tiny weights to a subnormal or zero. Both arrays come from
// allocate_weight_buffer (weight_buffer.h), so that once a device holds the matrix,
// release_host_copy() can give their pages back.
//
// Thread-safety: quantize_rows() and set_row() of disjoint rows may run on several threads
// at once, but not while anything reads those rows; once filled, any number of threads may
// read it. release_host_copy() only once nothing reads the values or scales again (the
// shape stays readable: rows(), cols(), groups(), bytes()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace baton {

// Quantizes `count` <= 32 floats `x` into `q` (32 values; zeros past `count`) and returns
// the group's scale, max|x| / 127 (0 for a group of zeros). A non-finite x gives a
// non-finite scale (callers reject it) and zeros for q.
float quantize_group(const float* x, int count, std::int8_t* q);

class Q8Matrix {
 public:
  static constexpr int kGroup = 32;

  Q8Matrix() = default;
  // All zeros (every scale 0) until quantize_rows() fills it.
  Q8Matrix(int rows, int cols);
  // Move-only: a copy would share (and write into) the same rows.
  Q8Matrix(const Q8Matrix&) = delete;
  Q8Matrix& operator=(const Q8Matrix&) = delete;
  Q8Matrix(Q8Matrix&&) = default;
  Q8Matrix& operator=(Q8Matrix&&) = default;

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int groups() const { return groups_; }  // per row: cols / 32 rounded up
  int stride() const { return groups_ * kGroup; }

  // Quantizes rows [first, first + count) from `source`, row-major f32 (count * cols).
  void quantize_rows(int first, int count, const float* source);
  // Row `row` as stored elsewhere in this layout (GGUF's Q8_0 blocks): groups() scales,
  // and cols values (a last partial group's padding stays zero).
  void set_row(int row, const std::int8_t* values, const float* scales);
  // Rows [first, first + count) as f32 (q * s), row-major, into `out` (count * cols).
  void dequantize_rows(int first, int count, float* out) const;

  // Row `row`'s stride() int8 values (zeros past cols) and its groups() scales.
  const std::int8_t* row_values(int row) const {
    return value_data() + static_cast<std::size_t>(row) * stride();
  }
  const float* row_scales(int row) const {
    return scale_data() + static_cast<std::size_t>(row) * groups_;
  }
  // Whether every scale is finite (false when a weight was infinite or NaN).
  bool finite() const;
  // Bytes held: the values (padding included) and the scales.
  std::size_t bytes() const;
  // Of bytes(), those release_host_copy() gives back: each array of 2 MiB or more.
  std::size_t releasable_bytes() const;
  // Gives the pages of the values and scales of 2 MiB or more back to the system
  // (release_weight_buffer); a later read of them faults. Returns the bytes given back
  // (whole pages). For a matrix a device holds, once nothing on the host reads it again.
  std::size_t release_host_copy();

 private:
  std::int8_t* value_data() const { return reinterpret_cast<std::int8_t*>(values_.get()); }
  float* scale_data() const { return reinterpret_cast<float*>(scales_.get()); }

  int rows_ = 0;
  int cols_ = 0;
  int groups_ = 0;
  std::shared_ptr<std::byte> values_;  // [rows x stride] int8, 64-byte aligned
  std::shared_ptr<std::byte> scales_;  // [rows x groups] f32, 64-byte aligned
};

}  // namespace baton
