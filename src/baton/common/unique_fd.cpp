#include "baton/common/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include "baton/common/throw_errno.h"

namespace baton {

Pipe make_pipe(bool nonblocking) {
  int fds[2];
#ifdef __linux__
  if (::pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) != 0) throw_errno("pipe");
  return Pipe{.read = UniqueFd(fds[0]), .write = UniqueFd(fds[1])};
#else
  if (::pipe(fds) != 0) throw_errno("pipe");
  Pipe ends{.read = UniqueFd(fds[0]), .write = UniqueFd(fds[1])};
  for (const int fd : fds) {
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) throw_errno("fcntl");
    if (nonblocking && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
      throw_errno("fcntl");
    }
  }
  return ends;
#endif
}

}  // namespace baton
