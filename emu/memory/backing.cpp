#include "memory/backing.hpp"

#include "core/memfd.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cuda_shim::mem {

size_t page_size() noexcept {
  static const size_t ps = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return ps;
}

uint64_t physical_memory() noexcept {
  static const uint64_t bytes = [] {
    long pages = ::sysconf(_SC_PHYS_PAGES);
    return pages > 0 ? static_cast<uint64_t>(pages) * page_size() : UINT64_MAX;
  }();
  return bytes;
}

std::shared_ptr<Backing> Backing::create(size_t size, View view, const char* api, Errc& err) {
  const size_t ps = page_size();
  if (size > SIZE_MAX - ps) {
    err = fail(Errc::out_of_memory, "{}: {} bytes cannot be mapped", api, size);
    return nullptr;
  }
  const size_t len = (size + ps - 1) / ps * ps;
  std::shared_ptr<Backing> b(new Backing());
  // Mode 0600: through /proc/<pid>/fd only this user may open the memory (legacy IPC importers
  // run as the same user); a sealed size: no importer can truncate it under this process.
  b->fd_ = sealed_memfd(view == View::device ? "cuda-shim-device" : "cuda-shim-host", len);
  if (b->fd_ < 0) {
    err = fail(Errc::out_of_memory, "{}: cannot create a {}-byte backing file ({})", api, len, std::strerror(errno));
    return nullptr;
  }
  std::shared_ptr<Backing> m = adopt(b->fd_, len, view, api, err);
  b->fd_ = -1;
  return m;
}

std::shared_ptr<Backing> Backing::adopt(int fd, size_t size, View view, const char* api, Errc& err) {
  return adopt_range(fd, 0, size, view, api, err);
}

namespace {

// len bytes of PROT_NONE address space at an address congruent to `phase` modulo align.
void* reserve_at_phase(size_t len, size_t align, size_t phase) {
  if (len > SIZE_MAX - 2 * align) return MAP_FAILED;
  const size_t span = len + 2 * align;
  void* p = ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return p;
  auto a = reinterpret_cast<uintptr_t>(p);
  uintptr_t at = (a + align - 1) / align * align + phase;
  if (at > a) ::munmap(p, at - a);
  if (at + len < a + span) ::munmap(reinterpret_cast<void*>(at + len), a + span - (at + len));
  return reinterpret_cast<void*>(at);
}

}  // namespace

std::shared_ptr<Backing> Backing::adopt_range(int fd, uint64_t offset, size_t size, View view, const char* api,
                                              Errc& err, size_t va_align, size_t va_phase) {
  const size_t ps = page_size();
  const uint64_t first = offset / ps * ps;
  const size_t delta = static_cast<size_t>(offset - first);
  if (size > SIZE_MAX - ps - delta) {
    if (fd >= 0) ::close(fd);
    err = fail(Errc::out_of_memory, "{}: {} bytes cannot be mapped", api, size);
    return nullptr;
  }
  const size_t len = (size + delta + ps - 1) / ps * ps;
  const off_t at = static_cast<off_t>(first);
  std::shared_ptr<Backing> b(new Backing());
  b->fd_ = fd;
  b->size_ = len;
  b->delta_ = delta;
  if (view == View::device) {
    // The user-visible view: reserved address space that faults on host access.
    void* want = nullptr;
    if (va_align > ps) {
      // The pages start delta bytes before the user address; both exporters keep file offsets and
      // buffer offsets congruent within a page, so the user address lands on va_phase.
      want = reserve_at_phase(len, va_align, (va_phase % va_align) / ps * ps);
      if (want == MAP_FAILED) {
        err = fail(Errc::out_of_memory, "{}: cannot reserve {} bytes of address space ({})", api, len,
                   std::strerror(errno));
        return nullptr;
      }
    }
    void* u = ::mmap(want, len, PROT_NONE, MAP_SHARED | MAP_NORESERVE | (want ? MAP_FIXED : 0), b->fd_, at);
    if (u == MAP_FAILED) {
      err = fail(Errc::out_of_memory, "{}: cannot map {} bytes of device memory ({})", api, len, std::strerror(errno));
      return nullptr;
    }
    b->user_ = u;
    void* s = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, b->fd_, at);
    if (s == MAP_FAILED) {
      err = fail(Errc::out_of_memory, "{}: cannot map the {}-byte shadow of device memory ({})", api, len,
                 std::strerror(errno));
      return nullptr;
    }
    b->shadow_ = s;
  } else {
    void* u = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, b->fd_, at);
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
