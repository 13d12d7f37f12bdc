#include "memory/backing.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cuda_shim::mem {

size_t page_size() noexcept {
  static const size_t ps = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return ps;
}

std::shared_ptr<Backing> Backing::create(size_t size, View view, const char* api, Errc& err) {
  const size_t ps = page_size();
  if (size > SIZE_MAX - ps) {
    err = fail(Errc::out_of_memory, "{}: {} bytes cannot be mapped", api, size);
    return nullptr;
  }
  const size_t len = (size + ps - 1) / ps * ps;
  std::shared_ptr<Backing> b(new Backing());
  b->fd_ = ::memfd_create(view == View::device ? "cuda-shim-device" : "cuda-shim-host", MFD_CLOEXEC);
  if (b->fd_ < 0) {
    err = fail(Errc::out_of_memory, "{}: memfd_create failed ({})", api, std::strerror(errno));
    return nullptr;
  }
  if (::ftruncate(b->fd_, static_cast<off_t>(len)) != 0) {
    err = fail(Errc::out_of_memory, "{}: cannot size a {}-byte backing file ({})", api, len, std::strerror(errno));
    return nullptr;
  }
  std::shared_ptr<Backing> m = adopt(b->fd_, len, view, api, err);
  b->fd_ = -1;
  return m;
}

std::shared_ptr<Backing> Backing::adopt(int fd, size_t size, View view, const char* api, Errc& err) {
  const size_t ps = page_size();
  const size_t len = (size + ps - 1) / ps * ps;
  std::shared_ptr<Backing> b(new Backing());
  b->fd_ = fd;
  b->size_ = len;
  if (view == View::device) {
    // The user-visible view: reserved address space that faults on host access.
    void* u = ::mmap(nullptr, len, PROT_NONE, MAP_SHARED | MAP_NORESERVE, b->fd_, 0);
    if (u == MAP_FAILED) {
      err = fail(Errc::out_of_memory, "{}: cannot map {} bytes of device memory ({})", api, len, std::strerror(errno));
      return nullptr;
    }
    b->user_ = u;
    void* s = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, b->fd_, 0);
    if (s == MAP_FAILED) {
      err = fail(Errc::out_of_memory, "{}: cannot map the {}-byte shadow of device memory ({})", api, len,
                 std::strerror(errno));
      return nullptr;
    }
    b->shadow_ = s;
  } else {
    void* u = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, b->fd_, 0);
    if (u == MAP_FAILED) {
      err = fail(Errc::out_of_memory, "{}: cannot map {} bytes of pinned host memory ({})", api, len,
                 std::strerror(errno));
      return nullptr;
    }
    b->user_ = b->shadow_ = u;
  }
  err = Errc::success;
  return b;
}

Backing::~Backing() {
  if (shadow_ && shadow_ != user_) ::munmap(shadow_, size_);
  if (user_) ::munmap(user_, size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace cuda_shim::mem
