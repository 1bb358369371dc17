// allocate_weight_buffer: memory for a weight that load copies or converts (weight_matrix.h):
// 64-byte aligned; from 2 MiB up on a 2 MiB boundary with huge pages asked for (fewer TLB
// misses while a decode step streams it), mapped up to the page that holds its last byte
// and no further, so that no rounding up to a whole huge page is ever resident (one per
// matrix made a model's copy a tenth larger than its weights). Once a device holds the
// weight, release_weight_buffer() gives such a buffer's pages back while its owner lives.
// Thread-safety: pure functions, but release_weight_buffer() only while nothing reads the
// buffer; the buffer is freed (munmap or free) with its last owner.
#pragma once

#include <cstddef>
#include <memory>

namespace baton {

// A buffer of `bytes` bytes (std::bad_alloc when there is no memory). Below 2 MiB it is not
// zeroed; from 2 MiB up (a fresh map) it is.
std::shared_ptr<std::byte> allocate_weight_buffer(std::size_t bytes);

// The bytes mapped for `buffer` (from allocate_weight_buffer: 2 MiB or more, rounded up to a
// page), which release_weight_buffer() gives back; 0 for a smaller one (aligned_alloc's,
// kept whole until freed) or an empty pointer.
std::size_t weight_buffer_mapped_bytes(const std::shared_ptr<const std::byte>& buffer);

// Gives `buffer`'s pages back to the system (its RSS drops) but keeps its address range
// reserved, unreadable: its owner's munmap stays valid, and a read afterwards faults instead
// of reading zeros. Returns the bytes given back: weight_buffer_mapped_bytes(buffer), or 0
// where the system refused (the buffer then stays as it was).
std::size_t release_weight_buffer(const std::shared_ptr<const std::byte>& buffer);

}  // namespace baton
