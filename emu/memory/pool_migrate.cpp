// An exportable pool that started in a range of a shared memfd (past own_file_budget(),
// pool_backing.hpp) moves into a memfd of its own at its first export, keeping its addresses
// and its bytes: the export must hand out a descriptor that names this pool alone.
//
// The move copies the written pages and moves a mapping of the new file over the old view. So that
// no write is lost between the copy and the new mapping, the view is read-only meanwhile; a
// thread that writes (a copy on a stream's worker, host code in a host pool) faults, waits in
// the SIGSEGV handler (pool_move_fault) until the move is done, and its write runs again on the
// new memory. Reads go on from the old pages, which hold the same bytes until the swap.
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "memory/managed.hpp"
#include "memory/pool_blocks.hpp"

namespace cuda_shim::mem {

namespace {
std::mutex g_move_m;  // one move at a time: the handler reads one range
// The view being moved [lo, hi), 0 when none; and the last one moved, for a fault that was
// raised during a move but reaches the handler after it ended.
std::atomic<uintptr_t> g_lo{0}, g_hi{0}, g_done_lo{0}, g_done_hi{0};
__thread uintptr_t t_retried __attribute__((tls_model("initial-exec"))) = 0;

// Copies the written parts of [off, off + len) of `from` (holes stay holes) to `to` at `at`,
// in the kernel (copy_file_range), else through `view` (the same bytes, mapped).
bool copy_data(int from, off_t off, size_t len, int to, off_t at, const char* view) {
  const off_t end = off + static_cast<off_t>(len);
  for (off_t pos = off; pos < end;) {
    off_t data = ::lseek(from, pos, SEEK_DATA);
    if (data < 0 || data >= end) return data >= 0 || errno == ENXIO;  // ENXIO: no data past pos
    off_t hole = ::lseek(from, data, SEEK_HOLE);
    if (hole < 0 || hole > end) hole = end;
    for (off_t p = data; p < hole;) {
      off_t in = p, out = at + (p - off);
      ssize_t n = ::copy_file_range(from, &in, to, &out, static_cast<size_t>(hole - p), 0);
      if (n < 0 && errno != EINTR)  // EXDEV, ENOSYS, EOPNOTSUPP...: copy through the mapping
        n = ::pwrite(to, view + (p - off), static_cast<size_t>(hole - p), at + (p - off));
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        return false;
      }
      p += n;
    }
    pos = hole;
  }
  return true;
}
}  // namespace

bool pool_move_fault(uintptr_t a) noexcept {
  const uintptr_t lo = g_lo.load(std::memory_order_acquire);
  if (lo && a >= lo && a < g_hi.load(std::memory_order_acquire)) {
    while (g_lo.load(std::memory_order_acquire) == lo) ::sched_yield();
    t_retried = 0;
    return true;
  }
  // Faulted during the move, handled after it: retry once (a second fault at the same address
  // is not the move's).
  const uintptr_t dlo = g_done_lo.load(std::memory_order_acquire);
  if (dlo && a >= dlo && a < g_done_hi.load(std::memory_order_acquire) && t_retried != a) {
    t_retried = a;
    return true;
  }
  return false;
}

Errc Pool::move_to_own_file(const char* api) {
  const size_t len = window_size_;
  std::shared_ptr<PoolFile> file = create_own_file(len);
  if (!file)
    return fail(Errc::out_of_memory, "{}: cannot create the {}-byte memfd that exporting {} hands out ({})", api, len,
                describe(), std::strerror(errno));
  const int fd = file->fd();
  // The view the emulator and host code write through: the shadow (for a host pool, the window).
  char* view = shadow_;
  const auto lo = reinterpret_cast<uintptr_t>(view);
  std::lock_guard mv(g_move_m);
  ensure_fault_handler();
  g_hi.store(lo + len, std::memory_order_release);
  g_lo.store(lo, std::memory_order_release);
  auto end_move = [&] {
    g_done_hi.store(lo + len, std::memory_order_release);
    g_done_lo.store(lo, std::memory_order_release);
    g_lo.store(0, std::memory_order_release);
  };
  if (::mprotect(view, len, PROT_READ) != 0) {
    end_move();
    return fail(Errc::out_of_memory, "{}: cannot move {} into its own memfd ({})", api, describe(),
                std::strerror(errno));
  }
  bool ok = true;
  for (size_t c = 0; ok && c < chunk_committed_.size(); ++c)
    if (chunk_committed_[c])
      ok = copy_data(span_.file->fd(), static_cast<off_t>(span_.offset + c * kPoolChunk), kPoolChunk, fd,
                     static_cast<off_t>(c * kPoolChunk), view + c * kPoolChunk);
  // Mapped elsewhere first, then moved over the view: a mapping that cannot be made (the
  // process's map count, address space) fails with the old view untouched, where mmap with
  // MAP_FIXED may already have unmapped it. mremap checks the map count before it unmaps the
  // target, and swaps under the mmap lock, so no thread sees the range empty.
  void* fresh = MAP_FAILED;
  if (ok) {
    fresh = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    ok = fresh != MAP_FAILED;
  }
  if (ok && ::mremap(fresh, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, view) != view) {
    ok = false;
    const int err = errno;
    ::munmap(fresh, len);
    errno = err;
  }
  if (!ok) {
    const int err = errno;
    ::mprotect(view, len, PROT_READ | PROT_WRITE);  // the old memory, as it was
    end_move();
    return fail(Errc::out_of_memory, "{}: cannot move {} into its own memfd ({})", api, describe(),
                std::strerror(err));
  }
  end_move();
  // The old range is nobody's now (exportable pools never hand a shared range out).
  for (size_t c = 0; c < chunk_committed_.size(); ++c)
    if (chunk_committed_[c]) punch_pool_span(*span_.file, span_.offset + c * kPoolChunk, kPoolChunk);
  span_ = PoolSpan{std::move(file), 0};
  own_span_ = true;
  return Errc::success;
}

}  // namespace cuda_shim::mem
