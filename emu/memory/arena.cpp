#include "memory/arena.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "platform/free_ranges.hpp"
#include "platform/memfd.hpp"
#include "memory/backing.hpp"
#include "memory/copy.hpp"

namespace cuda_shim::mem {

namespace {

// Views start 2 MiB-aligned, so that managed memory's 2 MiB chunks (and large device
// allocations) land on the boundaries the real driver gives them.
constexpr size_t kViewAlign = size_t(2) << 20;

const char* memfd_name(ArenaClass c) {
  return c == ArenaClass::device ? "cuda-shim-device" : c == ArenaClass::host ? "cuda-shim-host" : "cuda-shim-managed";
}
int user_prot(ArenaClass c) { return c == ArenaClass::host ? PROT_READ | PROT_WRITE : PROT_NONE; }

// Freed device and pinned pages kept resident (zeroed) for the next allocation, in bytes, over
// all arenas: punching them out and faulting them in again costs far more than zeroing them
// (measured on fresh memfd pages: punch 256 MiB 60 ms, fault it back 220 ms, zero it 7 ms), and a
// GPU's memory does not go away between cudaFree and cudaMalloc either. Bounded, so that freed
// memory still returns to the system past it.
size_t warm_limit() {
  static const size_t v = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), ps = ::sysconf(_SC_PAGESIZE);
    const size_t ram = pages > 0 && ps > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(ps) : 0;
    return std::min(size_t(1) << 30, ram / 16);
  }();
  return v;
}
std::atomic<size_t> g_warm{0};  // bytes of every arena's warm_

}  // namespace

class Arena {
 public:
  Arena(ArenaClass c, size_t size) : cls_(c), size_(size) {}
  ~Arena() {
    g_warm.fetch_sub(warm_bytes_, std::memory_order_relaxed);
    if (shadow_ && shadow_ != user_) ::munmap(shadow_, size_);
    if (user_) ::munmap(user_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  bool map() {
    fd_ = sealed_memfd(memfd_name(cls_), size_);
    if (fd_ < 0) return false;
    // Reserve an aligned span, then place the user view at its aligned start.
    const size_t span = size_ + kViewAlign;
    void* p = ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    auto a = reinterpret_cast<uintptr_t>(p);
    uintptr_t at = (a + kViewAlign - 1) / kViewAlign * kViewAlign;
    if (at > a) ::munmap(p, at - a);
    if (at + size_ < a + span) ::munmap(reinterpret_cast<void*>(at + size_), a + span - (at + size_));
    void* u = ::mmap(reinterpret_cast<void*>(at), size_, user_prot(cls_), MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
                     fd_, 0);
    if (u == MAP_FAILED) {
      int e = errno;
      ::munmap(reinterpret_cast<void*>(at), size_);
      errno = e;
      return false;
    }
    user_ = static_cast<char*>(u);
    if (cls_ == ArenaClass::host) {
      shadow_ = user_;
    } else {
      void* s = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
      if (s == MAP_FAILED) return false;
      shadow_ = static_cast<char*>(s);
    }
    free_[0] = size_;
    return true;
  }

  // First fit by address (keeps long-lived allocations low and the tail free). Caller holds g.m.
  bool take(size_t len, size_t align, size_t& off) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const size_t start = it->first, flen = it->second;
      const uintptr_t u = reinterpret_cast<uintptr_t>(user_) + start;
      const size_t pad = static_cast<size_t>((u + align - 1) / align * align - u);
      if (pad > flen || flen - pad < len) continue;
      free_.erase(it);
      if (pad) free_[start] = pad;
      if (flen - pad > len) free_[start + pad + len] = flen - pad - len;
      off = start + pad;
      return true;
    }
    return false;
  }

  // Caller holds g.m.
  void give_back(size_t off, size_t len) { platform::give_back_range(free_, off, len); }

  // [off, off + len) is handed out: it is no longer warm spare memory. Caller holds g.m.
  void unwarm(size_t off, size_t len) {
    auto it = warm_.upper_bound(off);
    if (it != warm_.begin()) --it;
    while (it != warm_.end() && it->first < off + len) {
      const size_t a = it->first, b = a + it->second;
      if (b <= off) {
        ++it;
        continue;
      }
      it = warm_.erase(it);
      warm_bytes_ -= b - a;
      g_warm.fetch_sub(b - a, std::memory_order_relaxed);
      const size_t lo = std::max(a, off), hi = std::min(b, off + len);
      if (a < lo) keep_warm(a, lo - a);
      if (hi < b) {
        keep_warm(hi, b - hi);
        it = warm_.upper_bound(hi);
      }
    }
  }

  // Records a zeroed resident free range. No memory to record it: it is merely not counted
  // (still zero, so still correct). Caller holds g.m.
  void keep_warm(size_t off, size_t len) noexcept {
    try {
      warm_.emplace(off, len);
    } catch (const std::bad_alloc&) {
      return;
    }
    warm_bytes_ += len;
    g_warm.fetch_add(len, std::memory_order_relaxed);
  }

  ArenaClass cls_;
  size_t size_;
  int fd_ = -1;
  char* user_ = nullptr;
  char* shadow_ = nullptr;
  std::map<size_t, size_t> free_;  // offset -> length
  std::map<size_t, size_t> warm_;  // free ranges whose pages are resident (and zero)
  size_t warm_bytes_ = 0;
};

namespace {

struct Arenas {
  std::mutex m;
  std::vector<std::weak_ptr<Arena>> all[3];
  std::shared_ptr<Arena> spare[3];  // the newest standard-size arena of each class
};
Arenas& arenas() {
  static auto* a = new Arenas();  // never destroyed: allocations may outlive static destruction
  return *a;
}

}  // namespace

bool carve(ArenaClass c, size_t len, size_t align, ArenaExtent& out) noexcept {
  const size_t ps = page_size();
  if (align < ps) align = ps;
  if (len == 0 || len % ps || len > SIZE_MAX - kArenaBytes) {
    errno = ENOMEM;
    return false;
  }
  auto& g = arenas();
  auto& list = g.all[static_cast<int>(c)];
  std::shared_ptr<Arena> a;
  size_t off = 0;
  try {
    std::lock_guard lk(g.m);
    for (size_t i = 0; i < list.size();) {
      std::shared_ptr<Arena> x = list[i].lock();
      if (!x) {  // died with its last extent
        list[i] = std::move(list.back());
        list.pop_back();
        continue;
      }
      if (x->take(len, align, off)) {
        a = std::move(x);
        break;
      }
      ++i;
    }
    if (!a) {
      // Sized for many allocations, or for this one alone; an alignment past a page may need slack.
      const size_t need = len + (align > kViewAlign ? align : 0);
      const size_t size = need <= kArenaBytes ? kArenaBytes : (need + ps - 1) / ps * ps;
      auto fresh = std::make_shared<Arena>(c, size);
      if (!fresh->map() || !fresh->take(len, align, off)) return false;
      list.push_back(fresh);
      if (size == kArenaBytes) g.spare[static_cast<int>(c)] = fresh;
      a = std::move(fresh);
    }
    if (!a->warm_.empty()) a->unwarm(off, len);
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return false;
  }
  out.user = a->user_ + off;
  out.shadow = a->shadow_ + off;
  out.offset = off;
  out.len = len;
  out.arena = std::move(a);
  return true;
}

namespace {

void punch(Arena& a, const ArenaExtent& e, size_t off, size_t len) {
  if (len == 0) return;
  // A failure leaves the pages resident but still correct to reuse once cleared.
  if (::fallocate(a.fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                  static_cast<off_t>(len)) != 0)
    zero_bytes(e.shadow + (off - e.offset), len);
}

}  // namespace

void release(const ArenaExtent& e) noexcept {
  Arena& a = *e.arena;
  auto& g = arenas();
  // Zero for whoever gets the extent next. The pages it holds (SEEK_DATA: resident or swapped)
  // are zeroed in place and kept while the warm budget lasts; the rest are punched out. Managed
  // memory and arenas of one allocation (gone with it) are always punched.
  std::vector<std::pair<size_t, size_t>> kept;
  const bool may_keep = a.cls_ != ArenaClass::managed && a.size_ == kArenaBytes;
  size_t budget = 0;
  if (may_keep) {
    size_t w = g_warm.load(std::memory_order_relaxed);
    do {
      budget = std::min(e.len, warm_limit() - std::min(w, warm_limit()));
    } while (budget && !g_warm.compare_exchange_weak(w, w + budget, std::memory_order_relaxed));
  }
  const off_t first = static_cast<off_t>(e.offset), end = first + static_cast<off_t>(e.len);
  size_t used = 0;
  off_t at = first;
  if (budget) {
    try {
      while (at < end && used < budget) {
        const off_t data = ::lseek(a.fd_, at, SEEK_DATA);
        if (data < 0 && errno != ENXIO) break;  // not known: punch from here
        if (data < 0 || data >= end) {
          at = end;  // holes to the end: already zero
          break;
        }
        off_t hole = ::lseek(a.fd_, data, SEEK_HOLE);
        if (hole < 0 || hole > end) hole = end;
        const size_t n = std::min(static_cast<size_t>(hole - data), budget - used);
        zero_bytes(e.shadow + (data - first), n);
        kept.emplace_back(static_cast<size_t>(data), n);
        used += n;
        at = data + static_cast<off_t>(n);
      }
    } catch (const std::bad_alloc&) {
    }
    g_warm.fetch_sub(budget - used, std::memory_order_relaxed);
  }
  punch(a, e, static_cast<size_t>(at), static_cast<size_t>(end - at));
  // Managed memory opens its own user view to the host; the next tenant starts closed again.
  if (a.cls_ == ArenaClass::managed) ::mprotect(e.user, e.len, PROT_NONE);
  std::lock_guard lk(g.m);
  g_warm.fetch_sub(used, std::memory_order_relaxed);  // counted again as each is recorded
  for (auto [off, n] : kept) a.keep_warm(off, n);
  a.give_back(e.offset, e.len);
}

bool remap_home(const ArenaExtent& e) noexcept {
  Arena& a = *e.arena;
  const int flags = MAP_SHARED | MAP_FIXED | MAP_NORESERVE;
  const off_t at = static_cast<off_t>(e.offset);
  if (::mmap(e.user, e.len, user_prot(a.cls_), flags, a.fd_, at) == MAP_FAILED) return false;
  if (e.shadow != e.user && ::mmap(e.shadow, e.len, PROT_READ | PROT_WRITE, flags, a.fd_, at) == MAP_FAILED)
    return false;
  return true;
}

int arena_fd(const ArenaExtent& e) noexcept { return e.arena->fd_; }

size_t live_arenas() noexcept {
  auto& g = arenas();
  std::lock_guard lk(g.m);
  size_t n = 0;
  for (auto& list : g.all)
    for (auto& w : list) n += !w.expired();
  return n;
}

}  // namespace cuda_shim::mem
