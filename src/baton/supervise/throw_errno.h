// throw_errno: how the supervisor reports a failed system call, as a std::system_error
// carrying errno and a message that starts with "[supervise]".
// Thread-safety: a free function; reads the calling thread's errno.
#pragma once

#include <string>

#include "baton/common/throw_errno.h"

namespace baton::supervise_detail {

[[noreturn]] inline void throw_errno(const char* what) {
  baton::throw_errno(std::string("[supervise] ") + what);
}

}  // namespace baton::supervise_detail
