// ZeroedPages: a large buffer of zero bytes from anonymous memory pages, unmapped on
// destruction. The kernel hands each page zeroed when it is first touched, so a buffer sized
// for the worst case (a KV cache) costs nothing until it is used; filling a vector instead
// wrote all of it at start-up (256 MB: a second per process, five under ThreadSanitizer).
// Thread-safety: a plain value (one owner at a time); distinct bytes may be written by
// distinct threads, as with any memory.
#pragma once

#include <cstddef>
#include <utility>

namespace baton {

class ZeroedPages {
 public:
  // Throws std::system_error when the memory cannot be mapped.
  explicit ZeroedPages(std::size_t bytes);
  ~ZeroedPages();
  ZeroedPages(ZeroedPages&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  ZeroedPages& operator=(ZeroedPages&& other) noexcept;
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void release();

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace baton
