// throw_errno: a failed system call as a std::system_error carrying errno and `what`.
// Thread-safety: a free function; reads the calling thread's errno.
#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace baton {

[[noreturn]] inline void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace baton
