// Strict mode's freed memory (strict.hpp): poisoned with 0xDD through the emulator's view, and
// in host-accessible pools its whole pages closed (PROT_NONE) in the user's mapping, which strict
// mode keeps apart from the emulator's (pool_window.cpp), so copies never trip on them. A host
// access faults; managed.cpp's SIGSEGV handler asks on_host_fault, which reports the allocation
// and the free and lets the access run again under the default action (the process dies of
// SIGSEGV, as a use after free should stop it). Other processes that imported the pool map it
// themselves and are never closed.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "platform/signal_msg.hpp"
#include "memory/backing.hpp"
#include "memory/managed.hpp"
#include "memory/strict.hpp"

namespace cuda_shim::mem::strict {

namespace {

constexpr int kSlots = 4096;  // closed ranges at once; beyond, freed pages stay open (documented)
constexpr size_t kPoisonMax = size_t(16) << 20;  // bytes poisoned per free: a huge free stays cheap

// What the fault handler reads, lock-free. Written under strict's lock while lo == 0, then
// published by lo (release).
struct Slot {
  std::atomic<uintptr_t> lo{0}, hi{0};
  std::atomic<uintptr_t> base{0};
  std::atomic<size_t> bytes{0};
  std::atomic<uint64_t> pool{0};
  std::atomic<const char*> alloc_api{nullptr}, free_api{nullptr};
  std::atomic<uint64_t> alloc_id{0}, free_id{0};
};
Slot g_slots[kSlots];

// Async-signal-safe message building (names calls as the trace does).
using Msg = platform::SignalMsg<1024>;

}  // namespace

Closed poison_and_close(char* shadow, uintptr_t p, size_t n, bool close_pages, const FreedInfo& info) noexcept {
  if (shadow && n) std::memset(shadow, 0xDD, std::min(n, kPoisonMax));
  Closed c;
  if (!close_pages) return c;
  const size_t ps = page_size();
  const uintptr_t lo = (p + ps - 1) / ps * ps, hi = (p + n) / ps * ps;
  if (lo >= hi) return c;  // no whole page: neighbours may be live
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    if (s.lo.load(std::memory_order_relaxed) != 0) continue;
    s.hi.store(hi, std::memory_order_relaxed);
    s.base.store(info.base, std::memory_order_relaxed);
    s.bytes.store(info.bytes, std::memory_order_relaxed);
    s.pool.store(info.pool, std::memory_order_relaxed);
    s.alloc_api.store(info.alloc_api, std::memory_order_relaxed);
    s.alloc_id.store(info.alloc_id, std::memory_order_relaxed);
    s.free_api.store(info.free_api, std::memory_order_relaxed);
    s.free_id.store(info.free_id, std::memory_order_relaxed);
    s.lo.store(lo, std::memory_order_release);  // before the pages close: a fault finds it
    ensure_fault_handler();
    if (::mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_NONE) != 0) {
      s.lo.store(0, std::memory_order_release);
      return c;
    }
    c.slot = i;
    c.lo = lo;
    c.hi = hi;
    return c;
  }
  return c;
}

void reopen(const Closed& c) noexcept {
  if (c.slot < 0) return;
  ::mprotect(reinterpret_cast<void*>(c.lo), c.hi - c.lo, PROT_READ | PROT_WRITE);
  g_slots[c.slot].lo.store(0, std::memory_order_release);
}

bool on_host_fault(uintptr_t a) noexcept {
  for (Slot& s : g_slots) {
    const uintptr_t lo = s.lo.load(std::memory_order_acquire);
    if (!lo || a < lo || a >= s.hi.load(std::memory_order_relaxed)) continue;
    count_signal_finding();
    Msg m;
    m.s("cuda-shim strict: host code touched ");
    m.x(a);
    m.s(", ");
    m.d(a - s.base.load(std::memory_order_relaxed));
    m.s(" bytes into the ");
    m.d(s.bytes.load(std::memory_order_relaxed));
    m.s("-byte allocation at ");
    m.x(s.base.load(std::memory_order_relaxed));
    m.s(" of pool ");
    m.x(s.pool.load(std::memory_order_relaxed));
    m.s(" (allocated by ");
    m.call(s.alloc_api.load(std::memory_order_relaxed), s.alloc_id.load(std::memory_order_relaxed));
    m.s("), which ");
    m.call(s.free_api.load(std::memory_order_relaxed), s.free_id.load(std::memory_order_relaxed));
    m.s(" freed in stream order; the range has not been allocated again. Host code must not touch pool memory "
        "after its free takes effect: the pool may hand it to the next allocation. The process stops here "
        "(SIGSEGV).\n");
    ssize_t w = ::write(2, m.b, m.n);
    (void)w;
    ::signal(SIGSEGV, SIG_DFL);  // the access runs again and the process dies of it
    return true;
  }
  return false;
}

}  // namespace cuda_shim::mem::strict
