// Strict mode (CUDA_SHIM_STRICT=1 or abort; docs/strict.md): reports what NVIDIA's driver
// accepts silently or crashes on, naming the calls involved by the numbers the call door gives
// them (core/call_info.hpp). It never changes a result, an error code or any state a program can
// query: it watches, prints "cuda-shim strict: ..." findings to stderr and, in abort mode,
// aborts at the first.
//  - Stream-ordered use after free: the ranges freed by cuMemFreeAsync stay on record until the
//    allocator hands them out again; a copy or memset refused because it touches one is named
//    with the free. Freed bytes are poisoned (0xDD) once the free completes in stream order, and
//    whole pages of host-accessible pools (host, host-NUMA, managed) are made inaccessible in
//    this process's mapping, so a host access faults with a report (strict_fault.cpp).
//  - A free with no ordering after the last use of the allocation on another stream.
//  - Pool allocations, exported pools and imported pointers still live at exit.
//  - Host access to managed memory while a stream owns it (managed.cpp's fault handler).
// Every hook site pays one relaxed load and one predictable branch while strict mode is off.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace cuda_shim {
class Stream;
}

namespace cuda_shim::mem {
class Pool;
struct CopyOp;
struct FillOp;

namespace strict {

// Nonzero while strict mode is on, and before the setting has been read (the first hook reads
// it and clears this when strict mode is off).
extern std::atomic<uint8_t> g_maybe;
inline bool maybe() noexcept { return g_maybe.load(std::memory_order_relaxed) != 0; }
// Whether strict mode is on (reads the setting once); abort_mode(): CUDA_SHIM_STRICT=abort.
bool on() noexcept;
bool abort_mode() noexcept;

// One finding: printed as "cuda-shim strict: <text>"; abort mode aborts after it.
void finding(const std::string& text) noexcept;
uint64_t findings() noexcept;

// ---- the allocator (pool*.cpp); on_alloc outside the pool's lock, the others under it ----
// A stream-ordered allocation of `bytes` at p; `span`: the bytes the allocator set aside.
void on_alloc(const Pool& pool, uintptr_t p, size_t bytes, size_t span, Stream& s) noexcept;
// A stream-ordered free of the allocation at p, at position `seq` of stream s.
// `shadow`: the emulator's view of p. Called under the pool's lock.
void on_free(const Pool& pool, uintptr_t p, char* shadow, size_t span, Stream& s, uint64_t seq) noexcept;
// cuMemFree of a pool allocation, or an imported pointer's free: it is gone, nothing to check.
void on_free_now(uintptr_t p) noexcept;
void on_import(const Pool& pool, uintptr_t p, size_t bytes) noexcept;
void on_export(const Pool& pool) noexcept;
void on_destroy(const Pool& pool) noexcept;  // cuMemPoolDestroy
void on_pool_gone(const Pool& pool) noexcept;  // ~Pool: its addresses mean nothing any more
// Host-accessible pools keep their user mapping apart from the emulator's (the copy engine's
// shadow), so that freed pages can be closed to host code without closing them to copies.
bool separate_shadow() noexcept;

// ---- the copy engine (copy.cpp) ----
// A copy or memset was refused because p (argument `what`) lies in no live allocation of pool.
void on_dead_access(const Pool& pool, uintptr_t p, const char* what) noexcept;
// A copy or fill just queued on s (asynchronous: a synchronous one completes before its call
// returns): the pool allocations it touches were last used there.
void on_copy(const CopyOp& op, Stream& s) noexcept;
void on_fill(const FillOp& op, Stream& s) noexcept;

// ---- faults (managed.cpp's SIGSEGV handler; async-signal-safe) ----
// A host access faulted at addr: true when it lies in a freed range strict mode closed (the
// report is printed and the fault made fatal: the access runs again under SIG_DFL).
bool on_host_fault(uintptr_t addr) noexcept;
// A finding made in the signal handler (counted; printed by the caller).
void count_signal_finding() noexcept;
// The mode (0, 1, 2) once the setting has been read, else 0: a plain load, for the handler.
int signal_mode() noexcept;

// strict_fault.cpp, for strict.cpp: poison and close freed bytes, open them again.
struct Closed {
  int slot = -1;  // the fault handler's record (-1: nothing closed)
  uintptr_t lo = 0, hi = 0;
};
struct FreedInfo {
  uintptr_t base = 0;
  size_t bytes = 0;
  uint64_t pool = 0;  // the pool's handle value
  const char* alloc_api = nullptr;
  uint64_t alloc_id = 0;
  const char* free_api = nullptr;
  uint64_t free_id = 0;
};
// Fills [p, p + n) of the emulator's view with 0xDD (at most a bounded prefix) and closes the
// whole pages of [p, p + n) when `close_pages`; the caller holds strict's lock.
Closed poison_and_close(char* shadow, uintptr_t p, size_t n, bool close_pages, const FreedInfo& info) noexcept;
void reopen(const Closed& c) noexcept;

}  // namespace strict
}  // namespace cuda_shim::mem
