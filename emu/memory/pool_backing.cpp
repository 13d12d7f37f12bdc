#include "memory/pool_backing.hpp"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <new>

#include "platform/memfd.hpp"

namespace cuda_shim::mem {

namespace {

// A shared file's size: sparse, so only pages written cost memory. The pools' address space
// budget is as large (pool.hpp, kPoolVaBudget), so one file usually serves a process; a
// program that creates and destroys pools of the device's size starts a new one every few
// hundred pools.
constexpr uint64_t kFileBytes = uint64_t(1) << 46;
// Windows start at this alignment in the file (pools commit 32 MiB chunks; 2 MiB keeps
// transparent huge pages possible).
constexpr uint64_t kSpanAlign = uint64_t(2) << 20;

struct Shared {
  std::mutex m;
  std::shared_ptr<PoolFile> file;
  uint64_t next = 0;  // first offset of `file` never handed out
};
Shared& shared() {
  static Shared* s = new Shared;  // never destroyed: pools may outlive static destruction
  return *s;
}

}  // namespace

std::shared_ptr<PoolFile> own_pool_file(int fd) noexcept {
  try {
    return std::make_shared<PoolFile>(fd);
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return nullptr;
  }
}

bool carve_pool_span(size_t len, PoolSpan& out) noexcept {
  const uint64_t need = (uint64_t(len) + kSpanAlign - 1) / kSpanAlign * kSpanAlign;
  Shared& s = shared();
  std::lock_guard lk(s.m);
  if (!s.file || kFileBytes - s.next < need) {
    // A window larger than a shared file (CUDA_SHIM_POOL_VA_MAX raised) gets a file of its own.
    const uint64_t size = std::max(kFileBytes, need);
    int fd = sealed_memfd("cuda-shim-pools", static_cast<size_t>(size));
    if (fd < 0) return false;
    std::shared_ptr<PoolFile> f = own_pool_file(fd);
    if (!f) {
      ::close(fd);
      errno = ENOMEM;
      return false;
    }
    if (size > kFileBytes) {
      out.file = std::move(f);
      out.offset = 0;
      return true;
    }
    s.file = std::move(f);
    s.next = 0;
  }
  out.file = s.file;
  out.offset = s.next;
  s.next += need;
  return true;
}

void punch_pool_span(const PoolFile& f, uint64_t off, size_t len) noexcept {
  ::fallocate(f.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off), static_cast<off_t>(len));
}

size_t own_file_budget() noexcept {
  static const size_t budget = [] {
    if (const char* e = std::getenv("CUDA_SHIM_POOL_OWN_FILES"); e && *e) return size_t(std::strtoull(e, nullptr, 10));
    rlimit rl{};
    const rlim_t soft = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 4096 * 4;
    return std::min<size_t>(size_t(soft) / 4, 4096);
  }();
  return budget;
}

namespace {
std::atomic<size_t> g_own_files{0};
}

bool take_own_file() noexcept {
  const size_t budget = own_file_budget();
  for (size_t n = g_own_files.load(std::memory_order_relaxed); n < budget;)
    if (g_own_files.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return true;
  return false;
}

void give_own_file() noexcept { g_own_files.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace cuda_shim::mem
