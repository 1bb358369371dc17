// MappedFile: open + fstat + mmap, with the descriptor held by a guard until mapped.
// Thread-safety: see mapped_file.h.
#include "baton/model/files/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

[[noreturn]] void throw_errno(const std::filesystem::path& path, const char* what, int error) {
  throw ModelFileError(path.string(),
                       std::string(what) + ": " + std::generic_category().message(error));
}

// Closes the descriptor when the mapping is made or when an error leaves the constructor.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() { ::close(fd_); }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::size_t regular_file_size(const std::filesystem::path& path, int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw_errno(path, "cannot stat", errno);
  if (!S_ISREG(info.st_mode)) throw ModelFileError(path.string(), "not a regular file");
  static_assert(sizeof(info.st_size) <= sizeof(std::size_t));
  if (info.st_size < 0) throw ModelFileError(path.string(), "negative file size");
  return static_cast<std::size_t>(info.st_size);
}

}  // namespace

void release_mapped_pages(std::span<const std::byte> bytes) noexcept {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(bytes.data());
  const std::uintptr_t first = (start + page - 1) / page * page;  // whole pages only: the
  const std::uintptr_t end = (start + bytes.size()) / page * page;  // edges may be shared
  // Only advice: a failure leaves the pages resident, which is what happened before.
  if (end > first) static_cast<void>(::madvise(reinterpret_cast<void*>(first), end - first,
                                               MADV_DONTNEED));
}

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block
  if (fd < 0) throw_errno(path, "cannot open", errno);
  const FdGuard guard(fd);
  const std::size_t size = regular_file_size(path, fd);
  if (size == 0) return;
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, guard.get(), 0);
  if (data == MAP_FAILED) throw_errno(path, "cannot mmap", errno);
  data_ = static_cast<const std::byte*>(data);
  size_ = size;
}

MappedFile::~MappedFile() { unmap(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace baton
