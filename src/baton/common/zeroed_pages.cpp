#include "baton/common/zeroed_pages.h"

#include <sys/mman.h>

#include "baton/common/throw_errno.h"

namespace baton {

ZeroedPages::ZeroedPages(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw_errno("cannot map " + std::to_string(bytes) + " bytes of memory");
  data_ = p;
}

ZeroedPages::~ZeroedPages() { release(); }

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void ZeroedPages::release() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace baton
