#include "platform/memfd.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace cuda_shim {

namespace {
constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW;
}

int sealed_memfd(const char* name, size_t size) noexcept {
  int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (::fchmod(fd, 0600) != 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, kSizeSeals | F_SEAL_SEAL) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

bool size_sealed(int fd) noexcept {
  int seals = ::fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & kSizeSeals) == kSizeSeals;
}

}  // namespace cuda_shim
