// Managed memory (cuMemAllocManaged) and its stream association (cuStreamAttachMemAsync).
//  - An allocation is a memfd mapped twice: the user's view (the pointer host code and the
//    "device" both use) and the emulator's shadow, through which copies run. The user's view is
//    read-write, except under a device profile with CONCURRENT_MANAGED_ACCESS = 0, where it is
//    made inaccessible while the device may be using the memory (see below).
//  - Association: GLOBAL (every stream), HOST (no stream: the host may use it while the device
//    runs) or SINGLE (one stream). It starts as the cuMemAllocManaged flag, changes in stream
//    order (the attach is an operation of the stream), and returns to the allocation's default
//    when its stream is destroyed, once that stream's work has completed.
//  - CONCURRENT_MANAGED_ACCESS = 0 (teaching mode): while a stream runs work, memory the device
//    may touch — attached GLOBAL while any stream of its device is busy, or SINGLE to a busy
//    stream — is PROT_NONE to host code. A host access faults; the fault handler records a
//    violation (which allocation, which rule, which stream), reports it, opens the page and lets
//    the program go on (CUDA_SHIM_MANAGED_FAULT=abort re-raises, as a real GPU kills the
//    process). Host functions (cuLaunchHostFunc) stand in for kernels: they make streams busy and
//    may touch the memory themselves.
#pragma once
#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/errc.hpp"
#include "memory/address_space.hpp"
#include "memory/advice.hpp"

namespace cuda_shim {
class Stream;
}

namespace cuda_shim::mem {

struct ManagedState {
  uintptr_t base = 0;
  size_t bytes = 0;                               // as requested
  size_t view = 0;                                // bytes of the user's view (whole pages)
  int slot = -1;                                  // fault-handler slot (devices without concurrent access)
  unsigned default_flags = CU_MEM_ATTACH_GLOBAL;  // as allocated: GLOBAL or HOST
  // The association now (guarded by the managed lock): CU_MEM_ATTACH_* and, for SINGLE, the stream.
  unsigned flags = CU_MEM_ATTACH_GLOBAL;
  std::weak_ptr<Stream> stream;
  uint64_t stream_id = 0;
  int ordinal = 0;
  // Advice and prefetch state, with its own lock.
  std::mutex advice_m;
  AdviceMap advice;
  explicit ManagedState(size_t bytes) : advice(bytes) {}
};

// Allocates `bytes` of managed memory for ctx; registers the range (Kind::managed).
Errc alloc_managed(const std::shared_ptr<Context>& ctx, size_t bytes, unsigned flags, const char* api,
                   CUdeviceptr& out);

// The managed allocation holding all of [p, p + n): INVALID_VALUE (explained) when p is not in
// managed memory or the range runs past its end.
Errc managed_range(uintptr_t p, size_t n, const char* api, const char* what, RangePtr& out);

// The association in stream order: called from the stream's operation.
void set_attachment(const RangePtr& r, unsigned flags, const std::shared_ptr<Stream>& s);
// Stream `s` is being destroyed: once its work completes, memory attached to it reverts.
void stream_destroyed(const std::shared_ptr<Stream>& s);
// A managed range is gone (Range's destructor).
void forget_managed(const ManagedState& st) noexcept;
// The association as it is now (cuShimGetManagedAttachment).
Errc attachment(uintptr_t p, unsigned& flags, uint64_t& stream_id);
// The same for a managed range already found (the kernel engine's check of each allocation).
void attachment_of(const Range& r, unsigned& flags, uint64_t& stream_id);

// Stream busy/idle transitions (core/stream.cpp): recompute which managed memory host code may
// touch, on devices without concurrent managed access (hooks installed with the first such memory).
void on_stream_busy(const Stream& s);
// Before operation `seq` is published as complete: if it is the stream's last, the stream goes idle.
void on_stream_idle(const Stream& s, uint64_t seq);
// The calling thread runs stream work (host functions): its faults are the device's, not the host's.
void set_stream_worker_thread();

// Puts the emulator's SIGSEGV handler first in line (chaining to the previous one): it serves
// managed memory and strict mode's freed pool pages (strict.hpp). Call it when closing memory.
void ensure_fault_handler();

// Violations recorded by the fault handler (cuShimManagedViolations / ...Explanation).
uint64_t managed_violations() noexcept;
std::string last_managed_violation();

}  // namespace cuda_shim::mem
