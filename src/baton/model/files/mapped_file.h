// MappedFile: a read-only memory map of a whole file (open, fstat, mmap; munmap in the
// destructor). The descriptor is closed as soon as the mapping exists. An empty file maps
// to an empty span without calling mmap. Errors are ModelFileError naming the path and
// the errno text.
// The map is MAP_PRIVATE and PROT_READ: pages are read lazily from the page cache. A file
// truncated by someone else while mapped makes reads past its new end raise SIGBUS; model
// files are not expected to change under a running server.
// Thread-safety: bytes() may be read from any thread; moving or destroying needs exclusive
// access. The address of the bytes does not change when a MappedFile is moved.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace baton {

// Drops the pages wholly inside `bytes`, a part of a MappedFile's map, from this process's
// resident memory (madvise MADV_DONTNEED): its RSS falls, and the bytes stay readable (a
// later read brings them back from the file). For bytes copied or converted elsewhere at
// load, so that each weight is held once. Thread-safe: readers at the time read the file.
void release_mapped_pages(std::span<const std::byte> bytes) noexcept;

class MappedFile {
 public:
  // Maps `path`. Throws ModelFileError if it cannot be opened, is not a regular file, or
  // cannot be mapped.
  explicit MappedFile(const std::filesystem::path& path);
  // An empty map: no file, no bytes.
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  // Drops every page of the map from this process's memory (release_mapped_pages).
  void release_resident() const noexcept { release_mapped_pages(bytes()); }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void unmap() noexcept;

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace baton
