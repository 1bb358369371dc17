// allocate_weight_buffer: aligned_alloc below 2 MiB; above, an anonymous map made 2 MiB
// larger than needed, trimmed to start on a 2 MiB boundary and end on the next page.
// Thread-safety: see weight_buffer.h.
#include "baton/model/weights/weight_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace baton {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

std::shared_ptr<std::byte> small_buffer(std::size_t bytes) {
  auto* raw = static_cast<std::byte*>(std::aligned_alloc(64, round_up(bytes, 64)));
  if (raw == nullptr) throw std::bad_alloc();
  return {raw, [](std::byte* p) { std::free(p); }};
}

}  // namespace

std::shared_ptr<std::byte> allocate_weight_buffer(std::size_t bytes) {
  if (bytes < kHugePage) return small_buffer(bytes);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t size = round_up(bytes, page);
  void* mapped =
      ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t start = round_up(base, kHugePage);
  // Give back the map's head before the boundary and its tail past the buffer.
  if (start > base) ::munmap(mapped, start - base);
  const std::uintptr_t end = start + size;
  const std::uintptr_t mapped_end = base + size + kHugePage;
  if (mapped_end > end) ::munmap(reinterpret_cast<void*>(end), mapped_end - end);
  auto* buffer = reinterpret_cast<std::byte*>(start);
  // Only a hint: without huge pages the buffer works the same.
  static_cast<void>(::madvise(buffer, size, MADV_HUGEPAGE));
  return {buffer, [size](std::byte* p) { ::munmap(p, size); }};
}

}  // namespace baton
