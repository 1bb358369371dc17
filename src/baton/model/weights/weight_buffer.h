// allocate_weight_buffer: memory for a weight that load copies or converts (weight_matrix.h):
// 64-byte aligned; from 2 MiB up on a 2 MiB boundary with huge pages asked for (fewer TLB
// misses while a decode step streams it), mapped up to the page that holds its last byte
// and no further, so that no rounding up to a whole huge page is ever resident (one per
// matrix made a model's copy a tenth larger than its weights).
// Thread-safety: a pure function; the buffer is freed (munmap or free) with its last owner.
#pragma once

#include <cstddef>
#include <memory>

namespace baton {

// A buffer of `bytes` bytes (std::bad_alloc when there is no memory).
std::shared_ptr<std::byte> allocate_weight_buffer(std::size_t bytes);

}  // namespace baton
