// throw_errno: how the supervisor reports a failed system call, as a std::system_error
// carrying errno and a message that starts with "[supervise]".
// Thread-safety: a free function; reads the calling thread's errno.
#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace baton::supervise_detail {

[[noreturn]] inline void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), std::string("[supervise] ") + what);
}

}  // namespace baton::supervise_detail
