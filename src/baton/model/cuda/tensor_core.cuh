// The warp-level tensor-core instructions the model kernels use (mma.m16n8k16 on bf16,
// ldmatrix, cp.async), wrapped once so that each kernel names what it does. Fragment
// layouts: lane = 4 g + t; a 16 x 16 A holds rows g and g + 8, columns 2t, 2t+1 and
// 2t+8, 2t+9; an 8-column B holds inner values 2t, 2t+1, 2t+8, 2t+9 of column g; the f32
// result holds rows g and g + 8, columns 2t and 2t+1.
// Thread-safety: device code; every lane of a warp must call the warp-wide ones together.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace baton::cuda::kernels::detail {

// d += a b over 16 inner values: a 16 x 16 (row-major), b 16 x 8 (column-major), bf16 in,
// f32 out.
__device__ inline void mma_16x8x16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                   uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ inline uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8 x 8 bf16 matrices from shared memory: lanes 8i..8i+7 name the rows of matrix i;
// r[i] is this lane's fragment of it (row g, columns 2t and 2t+1).
__device__ inline void load_matrices(uint32_t (&r)[4], const __nv_bfloat16* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}

// As load_matrices, each matrix transposed: r[i] holds rows 2t and 2t+1 of column g.
__device__ inline void load_matrices_transposed(uint32_t (&r)[4], const __nv_bfloat16* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}

// Copies 16 bytes to shared memory without passing through registers; `valid` false
// writes zeros instead (and reads nothing).
__device__ inline void copy_async_16(void* to, const void* from, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :
               : "r"(shared_address(to)), "l"(from), "r"(valid ? 16 : 0));
}
__device__ inline void copy_async_commit() { asm volatile("cp.async.commit_group;\n"); }
// Waits until at most `pending` of this thread's committed groups are in flight.
template <int pending>
__device__ inline void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" : : "n"(pending));
}

__device__ inline uint32_t pack_bf16(float low, float high) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<const uint32_t*>(&pair);
}

}  // namespace baton::cuda::kernels::detail
