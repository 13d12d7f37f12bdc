// Driver entries: device and host allocations, host registration, memory info, and
// pointer attributes. All ranges live in mem::AddressSpace.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/usage.hpp"
#include "memory/address_space.hpp"
#include "memory/device_alloc.hpp"
#include "memory/graph_memory.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::api {
namespace {

using mem::AddressSpace;
using mem::Backing;
using mem::Kind;
using mem::Range;
using mem::RangePtr;

constexpr size_t kAllocAlign = 512;   // cuMemAlloc alignment and the unit we charge in
constexpr size_t kPitchAlign = 512;   // cuMemAllocPitch row alignment

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace
}  // namespace cuda_shim::api

namespace cuda_shim::mem {
Errc device_range(const std::shared_ptr<Context>& ctx, size_t bytes, const char* api, RangePtr& out) {
  Device* dev = ctx->device();
  const uint64_t total = dev->cfg.total_mem;
  if (bytes > total)
    return fail(Errc::out_of_memory, "{}: {} bytes requested, but device {} has only {} bytes", api, bytes,
                dev->ordinal, total);
  size_t acc = api::round_up(bytes, api::kAllocAlign);
  if (!mem::charge(dev->ordinal, acc, total))
    return fail(Errc::out_of_memory, "{}: {} bytes requested, but {} of device {}'s {} bytes are already allocated",
                api, bytes, mem::charged(dev->ordinal), dev->ordinal, total);
  Errc e = Errc::success;
  auto b = Backing::create(bytes, Backing::View::device, api, e);
  if (!b) {
    mem::uncharge(dev->ordinal, acc);
    return e;
  }
  auto r = std::make_shared<Range>();
  r->kind = Kind::device;
  r->ordinal = dev->ordinal;
  r->ctx = ctx;
  r->base = b->user_address();
  r->size = bytes;
  r->accounted = acc;
  r->host = b->shadow();
  r->backing = std::move(b);
  out = std::move(r);
  return Errc::success;
}

Errc alloc_device(const std::shared_ptr<Context>& ctx, size_t bytes, const char* api, CUdeviceptr& out, bool module_owned) {
  if (bytes == 0) return fail(Errc::invalid_value, "{}: bytesize is 0 (the driver refuses empty allocations)", api);
  RangePtr r;
  TRY(device_range(ctx, bytes, api, r));
  r->buffer_id = AddressSpace::get().next_buffer_id();
  r->module_owned = module_owned;
  if (!AddressSpace::get().insert(r)) {
    mem::uncharge(r->ordinal, r->accounted);
    return fail(Errc::out_of_memory, "{}: the new mapping at {:#x} overlaps a range still registered with the "
                "driver (host memory unmapped without cuMemHostUnregister?)", api, r->base);
  }
  out = r->base;
  return Errc::success;
}

// A free waits for the work in flight before the range leaves the address space (cudaFree
// synchronizes): kernels resolve their addresses through the address space when they run, so a
// launch queued before the free must still find the range. Copies hold their ranges themselves.
template <class Pred>
RangePtr remove_when_idle(uintptr_t base, Pred pred) {
  if (RangePtr r = AddressSpace::get().find(base); r && r->base == base && r->ctx && pred(*r)) r->ctx->synchronize();
  return AddressSpace::get().remove_base(base, pred);
}

void free_owned(CUdeviceptr base) noexcept {
  RangePtr r = remove_when_idle(base, [](const Range& x) { return x.module_owned; });
  if (!r) return;
  mem::uncharge(r->ordinal, r->accounted);
}
}  // namespace cuda_shim::mem

namespace cuda_shim::api {
namespace {
Errc alloc_device(CUdeviceptr* dptr, size_t bytes, const char* api) {
  if (dptr) *dptr = 0;  // measured: the driver clears the out-pointer first, even before cuInit
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(dptr, api, "dptr"));
  TRY(cap::check_unsafe(api));  // measured: refused in a global or this thread's capture
  return mem::alloc_device(ctx, bytes, api, *dptr);
}

// Why p is not something `api` can free: for its explanation.
Errc not_an_allocation(uintptr_t p, Kind want, const char* api, const char* what) {
  RangePtr r = AddressSpace::get().find(p);
  if (!r)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is not a live allocation (never allocated, or already freed)",
                api, what, p);
  if (r->kind != want)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is {}, not {}{}", api, what, p, mem::kind_name(r->kind),
                mem::kind_name(want),
                r->kind == Kind::host_pinned ? " (free it with cuMemFreeHost)"
                : r->kind == Kind::device    ? " (free it with cuMemFree)"
                : r->kind == Kind::host_registered ? " (release it with cuMemHostUnregister)"
                : r->kind == Kind::pool ? " (free it with cuMemFreeAsync, or cuMemFree)"
                : r->kind == Kind::vmm  ? " (unmap it with cuMemUnmap, then cuMemAddressFree and cuMemRelease)" : "");
  return fail(Errc::invalid_value, "{}: {} = {:#x} points {} bytes into the {}-byte allocation at {:#x}; only the "
              "base address returned by the allocation can be freed", api, what, p, p - r->base, r->size, r->base);
}


Errc alloc_host(void** pp, size_t bytes, unsigned flags, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pp, api, "pp"));
  TRY(cap::check_unsafe(api));
  *pp = nullptr;
  if (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
    return fail(Errc::invalid_value, "{}: Flags {:#x} contain unknown bits (valid: PORTABLE 0x1, DEVICEMAP 0x2, "
                "WRITECOMBINED 0x4)", api, flags);
  if (bytes == 0) return Errc::success;  // measured: size 0 succeeds with a NULL pointer
  // Pinned memory is locked in RAM on a real system: more than the machine has cannot be pinned.
  if (bytes > mem::physical_memory())
    return fail(Errc::out_of_memory, "{}: {} bytes of pinned memory requested, more than the host's {} bytes of RAM",
                api, bytes, mem::physical_memory());
  Errc e = Errc::success;
  auto b = Backing::create(bytes, Backing::View::host, api, e);
  if (!b) return e;
  auto r = std::make_shared<Range>();
  r->kind = Kind::host_pinned;
  r->ordinal = ctx->ordinal();
  r->ctx = ctx;
  r->base = b->user_address();
  r->size = bytes;
  r->host = b->shadow();
  // Measured: with unified addressing all pinned memory is mapped (cuMemHostGetFlags of
  // cuMemAllocHost memory reports CU_MEMHOSTALLOC_DEVICEMAP).
  r->flags = flags | CU_MEMHOSTALLOC_DEVICEMAP;
  r->buffer_id = AddressSpace::get().next_buffer_id();
  r->backing = std::move(b);
  if (!AddressSpace::get().insert(r))
    return fail(Errc::out_of_memory, "{}: the new mapping at {:#x} overlaps a range still registered with the driver",
                api, r->base);
  *pp = reinterpret_cast<void*>(r->base);
  return Errc::success;
}

}  // namespace

// ---- device memory -----------------------------------------------------------------------
Errc cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) noexcept { return alloc_device(dptr, bytesize, "cuMemAlloc"); }

Errc cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t width, size_t height, unsigned elem) noexcept {
  const char* api = "cuMemAllocPitch";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(dptr, api, "dptr"));
  TRY(need(pPitch, api, "pPitch"));
  if (elem != 4 && elem != 8 && elem != 16)
    return fail(Errc::invalid_value, "{}: ElementSizeBytes must be 4, 8 or 16 (got {})", api, elem);
  if (width == 0 || height == 0)
    return fail(Errc::invalid_value, "{}: WidthInBytes ({}) and Height ({}) must both be non-zero", api, width, height);
  if (width > SIZE_MAX - kPitchAlign) return fail(Errc::out_of_memory, "{}: WidthInBytes {} is too large", api, width);
  size_t pitch = round_up(width, kPitchAlign);
  if (height > SIZE_MAX / pitch)
    return fail(Errc::out_of_memory, "{}: {} rows of {} bytes do not fit in memory", api, height, pitch);
  TRY(alloc_device(dptr, pitch * height, api));
  *pPitch = pitch;
  return Errc::success;
}

Errc cuMemFree_v2(CUdeviceptr dptr) noexcept {
  const char* api = "cuMemFree";
  // Measured: freeing needs no current context (the allocation knows its own).
  TRY(Driver::get().require_init(api));
  if (dptr == 0) return Errc::success;  // measured: cuMemFree(0) is a no-op
  TRY(cap::check_unsafe(api));  // a free waits for the device, which a capture cannot
  if (mem::is_graph_memory(dptr)) [[unlikely]] {  // measured: frees an allocation node's memory
    if (Context* ctx = current_context_raw()) ctx->synchronize();
    mem::graph_memory_freed(dptr);
    return Errc::success;
  }
  RangePtr r = mem::remove_when_idle(
      dptr, [](const Range& x) { return !x.module_owned && ((x.kind == Kind::device && !x.ipc_opened) || x.kind == Kind::managed); });
  if (!r) {
    // Not a cuMemAlloc block: a stream-ordered allocation waits for the device's work, then frees.
    // Looked up only here so that the common free costs one lookup.
    if (RangePtr pr = AddressSpace::get().find(dptr); pr && pr->kind == Kind::pool) {
      if (Context* ctx = current_context_raw()) ctx->synchronize();
      return pr->pool->free_now(dptr, api);
    }
    return not_an_allocation(dptr, Kind::device, api, "dptr");
  }
  mem::uncharge(r->ordinal, r->accounted);
  return Errc::success;
}

Errc cuMemGetInfo_v2(size_t* free, size_t* total) noexcept {
  const char* api = "cuMemGetInfo";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  // Measured: either output may be NULL.
  uint64_t t = ctx->device()->cfg.total_mem;
  // As on a GPU, every process's memory counts (the registry's view); without it, this one's.
  uint64_t used = 0;
  if (!usage::device_used(ctx->ordinal(), used)) used = round_up(mem::charged(ctx->ordinal()), mem::kAllocGranularity);
  if (total) *total = t;
  if (free) *free = used >= t ? 0 : t - used;
  return Errc::success;
}

Errc cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) noexcept {
  const char* api = "cuMemGetAddressRange";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  if (!pbase && !psize) return Errc::success;  // measured: nothing asked, nothing looked up
  // Measured: a failure writes 0 to the outputs given.
  auto not_found = [&](Errc e) {
    if (pbase) *pbase = 0;
    if (psize) *psize = 0;
    return e;
  };
  RangePtr r = AddressSpace::get().find(dptr);
  if (!r)
    return not_found(fail(Errc::not_found, "{}: {:#x} lies in no allocation the driver knows (never allocated, or "
                          "freed)", api, dptr));
  if (r->kind == Kind::vmm && mem::vmm_queries().info(*r->vmm).host_located) {
    // Measured: host-located VMM memory is found once a device was given access, and then
    // reads as base 0 (as host-located pool memory's range start does).
    bool dev = false;
    for (int d = 0; d < kMaxDevices; ++d) dev |= mem::vmm_queries().device_access(*r->vmm, d) != 0;
    if (!dev)
      return not_found(fail(Errc::not_found, "{}: {:#x} is host-located memory mapped with cuMemMap that no device "
                            "was given access to; cuMemGetAddressRange describes device-visible memory only", api,
                            dptr));
    if (pbase) *pbase = 0;
    if (psize) *psize = r->size;
    return Errc::success;
  }
  if (r->kind == Kind::pool) {
    mem::PoolAlloc al;
    if (!r->pool->lookup(dptr, al))
      return not_found(fail(Errc::not_found, "{}: {:#x} lies in {} but in no live allocation (freed, or never "
                            "allocated)", api, dptr, r->pool->describe()));
    if (r->pool->host_located() && !r->pool->imported())  // measured, both ways
      return not_found(fail(Errc::not_found, "{}: {:#x} is host memory from {}; cuMemGetAddressRange describes device "
                            "allocations only", api, dptr, r->pool->describe()));
    if (pbase) *pbase = al.base;
    if (psize) *psize = al.size;
    return Errc::success;
  }
  if (pbase) *pbase = r->base;
  if (psize) *psize = r->size;
  return Errc::success;
}

// ---- pinned / registered host memory ---------------------------------------------------
Errc cuMemAllocHost_v2(void** pp, size_t bytesize) noexcept { return alloc_host(pp, bytesize, 0, "cuMemAllocHost"); }
Errc cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) noexcept {
  return alloc_host(pp, bytesize, Flags, "cuMemHostAlloc");
}

Errc cuMemFreeHost(void* p) noexcept {
  const char* api = "cuMemFreeHost";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  if (!p) return Errc::success;  // measured: cuMemFreeHost(NULL) is a no-op
  TRY(cap::check_unsafe(api));
  auto v = reinterpret_cast<uintptr_t>(p);
  // Measured (H100, driver 580, difftest): a cuMemAlloc block handed to cuMemFreeHost is refused
  // with INVALID_VALUE and stays allocated (cuMemFree frees it afterwards); so is every other kind.
  RangePtr r = mem::remove_when_idle(v, [](const Range& x) { return x.kind == Kind::host_pinned; });
  if (!r) return not_an_allocation(v, Kind::host_pinned, api, "p");
  return Errc::success;
}

Errc cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) noexcept {
  const char* api = "cuMemHostGetDevicePointer";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pdptr, api, "pdptr"));
  if (Flags != 0) return fail(Errc::invalid_value, "{}: Flags must be 0 (got {:#x})", api, Flags);
  auto v = reinterpret_cast<uintptr_t>(p);
  RangePtr r = AddressSpace::get().find(v);
  if (r && r->kind == Kind::managed) *pdptr = 0;  // measured: written before the refusal
  if (!r || !r->host_kind())
    return fail(Errc::invalid_value, "{}: p = {} is {}; only pinned (cuMemHostAlloc) or registered "
                "(cuMemHostRegister) host memory has a device pointer", api, p,
                r ? mem::kind_name(r->kind) : "not memory the driver knows");
  *pdptr = v;  // unified addressing: the device sees host memory at the same address
  return Errc::success;
}

Errc cuMemHostGetFlags(unsigned int* pFlags, void* p) noexcept {
  const char* api = "cuMemHostGetFlags";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pFlags, api, "pFlags"));
  RangePtr r = AddressSpace::get().find(reinterpret_cast<uintptr_t>(p));
  if (r && r->kind == Kind::managed) {  // measured: managed memory reads as mapped host memory
    *pFlags = CU_MEMHOSTALLOC_DEVICEMAP;
    return Errc::success;
  }
  if (!r || !r->host_kind())
    return fail(Errc::invalid_value, "{}: p = {} is {}, not pinned host memory", api, p,
                r ? mem::kind_name(r->kind) : "not memory the driver knows");
  *pFlags = r->flags;
  return Errc::success;
}

Errc cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) noexcept {
  const char* api = "cuMemHostRegister";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(p, api, "p"));
  if (bytesize == 0) return fail(Errc::invalid_value, "{}: bytesize is 0", api);
  constexpr unsigned kKnown = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                              CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
  if (Flags & ~kKnown)
    return fail(Errc::invalid_value, "{}: Flags {:#x} contain unknown bits (valid: PORTABLE 0x1, DEVICEMAP 0x2, "
                "IOMEMORY 0x4, READ_ONLY 0x8)", api, Flags);
  if (Flags & CU_MEMHOSTREGISTER_IOMEMORY)  // measured: INVALID_VALUE for ordinary memory
    return fail(Errc::invalid_value, "{}: CU_MEMHOSTREGISTER_IOMEMORY is for a device's I/O memory (a PCI BAR); {} is "
                "ordinary host memory", api, p);
  auto v = reinterpret_cast<uintptr_t>(p);
  if (bytesize > UINTPTR_MAX - v) return fail(Errc::invalid_value, "{}: p + bytesize wraps around", api);
  if (RangePtr o = AddressSpace::get().find_overlap(v, bytesize); o && o->kind == Kind::managed)
    return fail(Errc::invalid_value, "{}: [{}, +{}) overlaps managed memory at {:#x}, which the host and the device "
                "share already; it needs no registration", api, p, bytesize, o->base);  // measured
  if (RangePtr o = AddressSpace::get().find_overlap(v, bytesize); o && o->kind != Kind::host_registered)
    return fail(Errc::invalid_value, "{}: [{}, +{}) overlaps {} at {:#x}, memory the driver allocated itself; only "
                "plain host memory can be registered", api, p, bytesize, mem::kind_name(o->kind), o->base);  // measured
  if (RangePtr o = AddressSpace::get().find_overlap(v, bytesize))
    return fail(Errc::host_memory_already_registered, "{}: [{}, +{}) overlaps {} at {:#x} (+{} bytes), which the "
                "driver already knows", api, p, bytesize, mem::kind_name(o->kind), o->base, o->size);
  // Pinning faults in the pages: memory that is not mapped cannot be registered.
  const size_t ps = mem::page_size();
  uintptr_t lo = v / ps * ps, hi = round_up(v + bytesize, ps);
  if (::msync(reinterpret_cast<void*>(lo), hi - lo, MS_ASYNC) != 0)
    return fail(Errc::invalid_value, "{}: [{}, +{}) is not entirely mapped memory of this process", api, p, bytesize);
  auto r = std::make_shared<Range>();
  r->kind = Kind::host_registered;
  r->ordinal = ctx->ordinal();
  r->ctx = ctx;
  r->base = v;
  r->size = bytesize;
  r->host = static_cast<char*>(p);
  r->flags = Flags | CU_MEMHOSTREGISTER_DEVICEMAP;  // measured: registered with 0, reported as DEVICEMAP
  r->buffer_id = AddressSpace::get().next_buffer_id();
  if (!AddressSpace::get().insert(r))  // lost a race with another registration
    return fail(Errc::host_memory_already_registered, "{}: [{}, +{}) was registered concurrently", api, p, bytesize);
  return Errc::success;
}

Errc cuMemHostUnregister(void* p) noexcept {
  const char* api = "cuMemHostUnregister";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  if (!p) return fail(Errc::invalid_value, "{}: p is NULL", api);  // measured
  auto v = reinterpret_cast<uintptr_t>(p);
  RangePtr r = mem::remove_when_idle(v, [](const Range& x) { return x.kind == Kind::host_registered; });
  if (!r) {
    RangePtr o = AddressSpace::get().find(v);
    if (o && o->kind == Kind::host_registered)  // measured: an interior pointer is INVALID_VALUE
      return fail(Errc::invalid_value, "{}: p = {} is {} bytes into the registration at {:#x}; pass the "
                  "address given to cuMemHostRegister", api, p, v - o->base, o->base);
    if (o && o->kind == Kind::managed)  // measured
      return fail(Errc::invalid_value, "{}: p = {} is managed memory, which is never registered", api, p);
    return fail(Errc::host_memory_not_registered, "{}: p = {} is {}", api, p,
                o ? mem::kind_name(o->kind) : "not registered host memory");
  }
  return Errc::success;
}

}  // namespace cuda_shim::api
