#include "core/fresh_alloc.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define CUDA_SHIM_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(CUDA_SHIM_LSAN)
#define CUDA_SHIM_LSAN 1
#endif

namespace cuda_shim {

#ifdef CUDA_SHIM_LSAN
// Under LeakSanitizer the objects come from the sanitizer's heap instead: it finds pointers in
// heap blocks but never in mappings, so everything an object owns (a stream's queue, a pool's
// books) was reported leaked, and registering each object as a root region made every leak
// check re-read /proc/self/maps once per live object. The heap's quarantine keeps a freed
// address from coming back for hundreds of MiB of frees, and ASan reports any use of a
// destroyed object.
void* fresh_allocate(size_t n, size_t align) {
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  if (align > 4096) throw std::bad_alloc();
  n = (n + align - 1) / align * align;
  void* p = std::aligned_alloc(align, n ? n : align);
  if (!p) throw std::bad_alloc();
  return p;
}

void fresh_deallocate(void* p, size_t) noexcept { std::free(p); }

#else

namespace {

constexpr size_t kChunk = size_t(1) << 30;  // address space reserved at a time (no memory)

struct State {
  std::mutex m;
  uintptr_t next = 0, end = 0;                   // bump range of the current chunk
  std::unordered_map<uintptr_t, uint32_t> live;  // page -> objects still on it
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
};
State& st() {
  static auto* s = new State();  // never destroyed: objects may die after static destruction
  return *s;
}

}  // namespace

void* fresh_allocate(size_t n, size_t align) {
  State& s = st();
  if (n == 0) n = 1;
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  if (align > s.page || n > kChunk) throw std::bad_alloc();
  std::lock_guard lk(s.m);
  uintptr_t at = (s.next + align - 1) / align * align;
  if (s.end == 0 || at + n > s.end) {
    void* p = ::mmap(nullptr, kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    // The rest of the old chunk is never used: its untouched pages cost nothing.
    s.next = reinterpret_cast<uintptr_t>(p);
    s.end = s.next + kChunk;
    at = s.next;
  }
  s.next = at + n;
  for (uintptr_t pg = at / s.page; pg <= (at + n - 1) / s.page; ++pg) ++s.live[pg];
  return reinterpret_cast<void*>(at);
}

void fresh_deallocate(void* p, size_t n) noexcept {
  State& s = st();
  if (n == 0) n = 1;
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lk(s.m);
  for (uintptr_t pg = at / s.page; pg <= (at + n - 1) / s.page; ++pg) {
    auto it = s.live.find(pg);
    if (it == s.live.end() || --it->second > 0) continue;
    s.live.erase(it);
    // Its last object is gone; the page is returned unless the bump pointer still fills it.
    if (pg != s.next / s.page) ::madvise(reinterpret_cast<void*>(pg * s.page), s.page, MADV_DONTNEED);
  }
}

#endif  // CUDA_SHIM_LSAN

}  // namespace cuda_shim
