#include "memory/backing.hpp"

#include "platform/memfd.hpp"

#include <fcntl.h>
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
  return carve(view == View::device ? ArenaClass::device : ArenaClass::host, size, page_size(), api, err);
}

std::shared_ptr<Backing> Backing::carve(ArenaClass c, size_t size, size_t align, const char* api, Errc& err) {
  const size_t ps = page_size();
  if (size > SIZE_MAX - kArenaBytes - align) {
    err = fail(Errc::out_of_memory, "{}: {} bytes cannot be mapped", api, size);
    return nullptr;
  }
  const size_t len = (size + ps - 1) / ps * ps;
  std::shared_ptr<Backing> b(new Backing());
  if (!mem::carve(c, len, align, b->extent_)) {
    err = fail(Errc::out_of_memory, "{}: cannot map {} more bytes of {} memory ({})", api, len,
               c == ArenaClass::host ? "pinned host" : c == ArenaClass::managed ? "managed" : "device",
               std::strerror(errno));
    return nullptr;
  }
  b->size_ = len;
  b->user_ = b->extent_.user;
  b->shadow_ = b->extent_.shadow;
  err = Errc::success;
  return b;
}

Errc Backing::shareable_fd(int& fd, const char* api) {
  if (fd_ >= 0 || !extent_.arena) {
    fd = fd_;
    return fd_ >= 0 ? Errc::success : fail(Errc::invalid_value, "{}: this memory has no shareable backing", api);
  }
  if (user_ == shadow_) return fail(Errc::invalid_value, "{}: host memory is not shared this way", api);
  int own = sealed_memfd("cuda-shim-device", size_);
  if (own < 0)
    return fail(Errc::out_of_memory, "{}: cannot create a {}-byte memfd to share the allocation ({})", api, size_,
                std::strerror(errno));
  // Copy only what was written: untouched pages stay holes in both files.
  const int afd = arena_fd(extent_);
  const off_t first = static_cast<off_t>(extent_.offset), end = first + static_cast<off_t>(size_);
  for (off_t at = first; at < end;) {
    off_t data = ::lseek(afd, at, SEEK_DATA);
    if (data < 0 || data >= end) break;
    off_t hole = ::lseek(afd, data, SEEK_HOLE);
    if (hole < 0 || hole > end) hole = end;
    for (off_t p = data; p < hole;) {
      ssize_t n = ::pwrite(own, static_cast<char*>(shadow_) + (p - first), static_cast<size_t>(hole - p), p - first);
      if (n <= 0) {
        ::close(own);
        return fail(Errc::out_of_memory, "{}: cannot copy the allocation to its own memfd ({})", api,
                    std::strerror(errno));
      }
      p += n;
    }
    at = hole;
  }
  const int flags = MAP_SHARED | MAP_FIXED | MAP_NORESERVE;
  if (::mmap(shadow_, size_, PROT_READ | PROT_WRITE, flags, own, 0) == MAP_FAILED ||
      ::mmap(user_, size_, PROT_NONE, flags, own, 0) == MAP_FAILED) {
    int e = errno;
    remap_home(extent_);  // both views back on the arena's pages, which still hold the data
    ::close(own);
    return fail(Errc::out_of_memory, "{}: cannot map the allocation's own memfd ({})", api, std::strerror(e));
  }
  // The arena's copy is no longer seen by anyone: give its memory back now.
  ::fallocate(afd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, first, static_cast<off_t>(size_));
  fd = fd_ = own;
  return Errc::success;
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
  b->file_off_ = first;
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
  if (extent_.arena) {
    if (fd_ >= 0) {
      // Moved out for IPC: the arena's pages go back under both views. Should that fail, the
      // extent stays out of use rather than hand out addresses mapped to another file.
      const bool home = remap_home(extent_);
      ::close(fd_);
      if (!home) return;
    }
    release(extent_);
    return;
  }
  if (shadow_ && shadow_ != user_) ::munmap(shadow_, size_);
  if (user_) ::munmap(user_, size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace cuda_shim::mem
