// allocate_weight_buffer: aligned_alloc below 2 MiB; above, an anonymous map made 2 MiB
// larger than needed, trimmed to start on a 2 MiB boundary and end on the next page.
// release_weight_buffer maps the same range again, PROT_NONE and without pages.
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

// A mapped buffer's deleter, found again by std::get_deleter: its size is the exact range
// mapped, which a release must cover and no more.
struct Unmap {
  std::size_t size = 0;
  void operator()(std::byte* p) const { ::munmap(p, size); }
};

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
  return {buffer, Unmap{.size = size}};
}

std::size_t weight_buffer_mapped_bytes(const std::shared_ptr<const std::byte>& buffer) {
  const Unmap* unmap = std::get_deleter<Unmap>(buffer);
  return unmap != nullptr ? unmap->size : 0;
}

std::size_t release_weight_buffer(const std::shared_ptr<const std::byte>& buffer) {
  const std::size_t size = weight_buffer_mapped_bytes(buffer);
  if (size == 0) return 0;
  // MAP_FIXED swaps the range's pages for a reservation in one call: no window in which
  // another map could take the addresses before the owner's munmap.
  void* at = const_cast<std::byte*>(buffer.get());
  void* reserved =
      ::mmap(at, size, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return reserved == MAP_FAILED ? 0 : size;
}

}  // namespace baton
