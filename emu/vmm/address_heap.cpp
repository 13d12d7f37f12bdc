#include "vmm/address_heap.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <iterator>
#include <map>
#include <mutex>
#include <new>

#include "platform/free_ranges.hpp"

namespace cuda_shim::vmm {
namespace {

// Address space only (no memory, no descriptor): 32 GiB chunks, kept for the process's life.
constexpr size_t kChunk = size_t(32) << 30;
constexpr size_t kChunkAlign = size_t(2) << 20;
// Larger ranges are mapped on their own, so one reservation cannot take a chunk away from many.
constexpr size_t kLargest = kChunk / 4;

void* reserve_pages(void* at, size_t len, int extra) {
  return ::mmap(at, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra, -1, 0);
}

// The old way: a mapping of its own, trimmed to the alignment.
void* reserve_aligned(size_t len, size_t align) {
  if (len > SIZE_MAX - align) return nullptr;
  void* p = reserve_pages(nullptr, len + align, 0);
  if (p == MAP_FAILED) return nullptr;
  auto a = reinterpret_cast<uintptr_t>(p);
  uintptr_t b = (a + align - 1) / align * align;
  if (b > a) ::munmap(p, b - a);
  if (uintptr_t end = b + len; end < a + len + align) ::munmap(reinterpret_cast<void*>(end), a + len + align - end);
  return reinterpret_cast<void*>(b);
}

struct Heap {
  std::mutex m;
  std::map<uintptr_t, size_t> free;    // start -> length
  std::map<uintptr_t, size_t> chunks;  // every chunk: start -> length

  bool in_chunk(uintptr_t p, size_t len) const {
    auto it = chunks.upper_bound(p);
    if (it == chunks.begin()) return false;
    --it;
    return p - it->first < it->second && len <= it->second - (p - it->first);
  }

  // Cuts [at, at + len) out of the free range `it` holds.
  void cut(std::map<uintptr_t, size_t>::iterator it, uintptr_t at, size_t len) {
    const uintptr_t start = it->first;
    const size_t flen = it->second;
    free.erase(it);
    if (at > start) free.emplace(start, at - start);
    if (at + len < start + flen) free.emplace(at + len, start + flen - (at + len));
  }

  // Exactly [p, p + len), if all of it is free here.
  bool take_at(uintptr_t p, size_t len) {
    auto it = free.upper_bound(p);
    if (it == free.begin()) return false;
    --it;
    if (p - it->first >= it->second || len > it->second - (p - it->first)) return false;
    cut(it, p, len);
    return true;
  }

  // First fit by address.
  uintptr_t take(size_t len, size_t align) {
    for (auto it = free.begin(); it != free.end(); ++it) {
      const uintptr_t at = (it->first + align - 1) / align * align;
      if (at - it->first > it->second || it->second - (at - it->first) < len) continue;
      cut(it, at, len);
      return at;
    }
    return 0;
  }

  bool grow() {
    void* p = reserve_aligned(kChunk, kChunkAlign);
    if (!p) return false;
    const auto a = reinterpret_cast<uintptr_t>(p);
    chunks.emplace(a, kChunk);
    give(a, kChunk);
    return true;
  }

  void give(uintptr_t p, size_t len) { platform::give_back_range(free, p, len); }
};

Heap& heap(VaUse use) {
  static auto* h = new Heap[2];  // leaked: reservations may outlive static destruction
  return h[use == VaUse::shadow];
}

}  // namespace

VaRange va_take(VaUse use, size_t len, size_t align, uintptr_t hint) noexcept {
  VaRange r;
  r.len = len;
  r.use = use;
  if (len == 0 || len > SIZE_MAX / 2 || align > SIZE_MAX / 2) return r;
  const bool fits = len <= kLargest && align <= kLargest;
  if (hint % align != 0) hint = 0;
  Heap& h = heap(use);
  try {
    bool in_heap = false;
    if (hint && fits) {
      std::lock_guard lk(h.m);
      if (h.take_at(hint, len)) {
        r.base = reinterpret_cast<void*>(hint);
        r.heap = true;
        return r;
      }
      in_heap = h.in_chunk(hint, len);
    }
    if (hint && !in_heap) {  // free address space outside the heap: a mapping of its own there
      void* p = reserve_pages(reinterpret_cast<void*>(hint), len, MAP_FIXED_NOREPLACE);
      if (p != MAP_FAILED && reinterpret_cast<uintptr_t>(p) == hint) {
        r.base = p;
        return r;
      }
      if (p != MAP_FAILED) ::munmap(p, len);  // an old kernel treated it as a plain hint
    }
    if (fits) {
      std::lock_guard lk(h.m);
      uintptr_t at = h.take(len, align);
      if (!at && h.grow()) at = h.take(len, align);
      if (at) {
        r.base = reinterpret_cast<void*>(at);
        r.heap = true;
        return r;
      }
    }
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
    return r;
  }
  r.base = reserve_aligned(len, align);
  return r;
}

void va_give(const VaRange& r, bool reset) noexcept {
  if (!r.base) return;
  if (!r.heap) {
    ::munmap(r.base, r.len);
    return;
  }
  // Should the reset fail, the range stays out of use rather than carry stale pages.
  if (reset && reserve_pages(r.base, r.len, MAP_FIXED) == MAP_FAILED) return;
  Heap& h = heap(r.use);
  try {
    std::lock_guard lk(h.m);
    h.give(reinterpret_cast<uintptr_t>(r.base), r.len);
  } catch (const std::bad_alloc&) {
    // The free list could not grow: the range is lost to the heap, still reserved.
  }
}

}  // namespace cuda_shim::vmm
