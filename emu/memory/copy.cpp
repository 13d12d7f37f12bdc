#include "memory/copy.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>

#include "core/context.hpp"
#include "memory/array.hpp"
#include "memory/pool.hpp"
#include "memory/strict.hpp"

namespace cuda_shim::mem {

Errc check_writable(const Side& s, const char* api, const char* what) {
  if (s.r && s.r->kind == Kind::host_registered && (s.r->flags & CU_MEMHOSTREGISTER_READ_ONLY))
    return fail(Errc::invalid_value, "{}: {} lies in host memory registered with CU_MEMHOSTREGISTER_READ_ONLY at {:#x}; "
                "the device may not write it", api, what, s.r->base);
  if (s.r && s.r->kind == Kind::vmm) {
    const VmmQueries& q = vmm_queries();
    TRY(q.check_copy_access(*s.r->vmm, s.r->base, true, api, what));
    if (s.more)
      for (const RangePtr& r : *s.more) TRY(q.check_copy_access(*r->vmm, r->base, true, api, what));
  }
  return Errc::success;
}

// Refuses a fill's destination that its stream's device (exec) may not write: host-located VMM
// memory without that device's access, another device's memory without peer access.
static Errc check_fill_access(const Side& s, const Context* exec, const char* api, const char* what) {
  auto one = [&](const RangePtr& r) {
    if (!r || !exec) return Errc::success;
    // Measured (two H100s): a fill runs on its stream's device, which reaches another
    // device's cuMemAlloc memory only with peer access to the context that allocated it
    // (copies need none).
    if (r->kind == Kind::device && r->ordinal != exec->ordinal() && r->ctx && !exec->peer_enabled(r->ctx->id()))
      return fail(Errc::invalid_value, "{}: {} = {:#x} is device {}'s memory; a fill runs on device {} (its stream's), "
                  "which reaches another device's memory only with peer access (cuCtxEnablePeerAccess / "
                  "cudaDeviceEnablePeerAccess), or fill it on a stream of device {}", api, what, r->base, r->ordinal,
                  exec->ordinal(), r->ordinal);
    // Measured (H100, difftest): a fill of host-located cuMemMap memory needs the device's own
    // read-write access; the host's access, which lets copies through, is not enough.
    if (r->kind != Kind::vmm || !vmm_queries().info(*r->vmm).host_located) return Errc::success;
    if (vmm_queries().device_access(*r->vmm, exec->ordinal()) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return Errc::success;
    return fail(Errc::invalid_value, "{}: {} = {:#x} lies in host-located memory mapped with cuMemMap that the "
                "current device may not write; a fill runs on the device (grant it with cuMemSetAccess)", api, what,
                r->base);
  };
  TRY(one(s.r));
  if (s.more)
    for (const RangePtr& r : *s.more) TRY(one(r));
  return Errc::success;
}

namespace {

// getpid() is a system call; the pid changes only in a forked child.
std::atomic<pid_t> g_pid{0};
pid_t own_pid() {
  pid_t p = g_pid.load(std::memory_order_relaxed);
  if (p != 0) return p;
  static std::once_flag hook;
  std::call_once(hook, [] { pthread_atfork(nullptr, nullptr, [] { g_pid.store(0, std::memory_order_relaxed); }); });
  p = ::getpid();
  g_pid.store(p, std::memory_order_relaxed);
  return p;
}

// Pageable memory the copy may touch: never the first 64 KiB (a failed allocation's NULL plus
// an offset), never address space reserved with cuMemAddressReserve and not mapped, and only
// pages that are mapped and readable.
Errc check_pageable(uintptr_t p, size_t span, const char* api, const char* what) {
  if (p < 65536)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is no memory at all (a NULL pointer plus an offset?)", api, what, p);
  if (span > UINTPTR_MAX - p)
    return fail(Errc::invalid_value, "{}: {} = {:#x} + {} bytes wraps around the address space", api, what, p, span);
  uintptr_t rb = 0;
  size_t rs = 0;
  if (vmm_queries().reservation_at(p, rb, rs))
    return fail(Errc::invalid_value, "{}: {} = {:#x} lies in the range [{:#x}, +{:#x}) reserved with "
                "cuMemAddressReserve, where nothing is mapped", api, what, p, rb, rs);
  static const size_t ps = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Holes: msync(MS_ASYNC) only walks the mappings (no page is touched or flushed) and says
  // ENOMEM where part of the range is unmapped. Two pages or fewer: the reads below see it.
  const uintptr_t lo = p / ps * ps, hi = (p + span + ps - 1) / ps * ps;
  if (hi - lo > 2 * ps && ::msync(reinterpret_cast<void*>(lo), hi - lo, MS_ASYNC) != 0 && errno == ENOMEM)
    return fail(Errc::invalid_value, "{}: {} = {:#x}: the {} bytes from there are not all mapped in this process "
                "(not host memory, not memory the driver knows)", api, what, p, span);
  // Mapped but unreadable (PROT_NONE: freed device memory, guard pages), or unmapped: the kernel
  // reads the first and last byte for us (one call) and says EFAULT, or a short count, instead
  // of a signal. ENOSYS/EPERM: not checked.
  char b[2];
  iovec local{b, 2};
  iovec remote[2] = {{reinterpret_cast<void*>(p), 1}, {reinterpret_cast<void*>(p + span - 1), 1}};
  const ssize_t got = ::process_vm_readv(own_pid(), &local, 1, remote, 2, 0);
  if ((got < 0 && errno == EFAULT) || got == 1) {
    const uintptr_t at = got == 1 ? p + span - 1 : p;
    if (hi - lo <= 2 * ps && ::msync(reinterpret_cast<void*>(lo), hi - lo, MS_ASYNC) != 0 && errno == ENOMEM)
      return fail(Errc::invalid_value, "{}: {} = {:#x}: the {} bytes from there are not all mapped in this process "
                  "(not host memory, not memory the driver knows)", api, what, p, span);
    return fail(Errc::invalid_value, "{}: {} = {:#x}: byte {:#x} cannot be read (memory no allocation holds any "
                "more, or a guard page)", api, what, p, at);
  }
  return Errc::success;
}

// p lies in a pool's window: it must lie in a live allocation, and the copy must stay
// inside that allocation (measured: the bytes between allocations are refused too).
Errc resolve_pool(uintptr_t p, Space space, size_t span, RangePtr r, const char* api, const char* what, Side& out) {
  const Pool& pool = *r->pool;
  PoolAlloc a;
  if (!pool.lookup(p, a)) {
    if (strict::maybe()) [[unlikely]]
      strict::on_dead_access(pool, p, what);  // a free in stream order names itself
    return fail(Errc::invalid_value, "{}: {} = {:#x} lies in {} but in no live allocation (freed, or never "
                "allocated)", api, what, p, pool.describe());
  }
  // Measured: host-located pool memory is host memory; the device-side forms
  // (cuMemcpyDtoH/HtoD/DtoD, cuMemset*) refuse it even when a device was given access.
  if (space == Space::device && pool.host_located())
    return fail(Errc::invalid_value, "{}: {} = {:#x} is host memory from {}; this copy needs device memory (copy it "
                "with cuMemcpy / cudaMemcpyDefault, or as host memory)", api, what, p, pool.describe());
  if (pool.device_located()) {
    // Another device's pool memory is reachable only once cuMemPoolSetAccess granted it.
    if (Context* ctx = current_context_raw(); ctx && !(pool.access(ctx->ordinal()) & CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
      return fail(Errc::invalid_value, "{}: {} = {:#x} belongs to {}, which device {} (the current context's) has "
                  "no access to; grant it with cuMemPoolSetAccess", api, what, p, pool.describe(), ctx->ordinal());
  }
  size_t off = p - a.base;
  if (span > a.size - off)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is {} bytes into an allocation of {} bytes at {:#x} from {}; the "
                "copy touches {} bytes from there, {} past its end", api, what, p, off, a.size, a.base,
                pool.describe(), span, off + span - a.size);
  out.p = a.host + off;
  out.r = std::move(r);
  return Errc::success;
}

// p lies in a cuMemMap mapping. The bytes may run on into the next mappings of the same
// reservation, as on a GPU, where the range is contiguous virtual memory: the shadow is
// contiguous too, and every mapping touched must be accessible.
Errc resolve_vmm(uintptr_t p, size_t span, RangePtr r, const char* api, const char* what, Side& out) {
  const VmmQueries& q = vmm_queries();
  TRY(q.check_copy_access(*r->vmm, p, false, api, what));
  out.p = r->translate(p);
  if (!r->contains(p, span)) {
    if (span > UINTPTR_MAX - p)
      return fail(Errc::invalid_value, "{}: {} = {:#x} + {} bytes wraps around the address space", api, what, p, span);
    auto more = std::make_shared<std::vector<RangePtr>>();
    const uintptr_t end = p + span;
    uintptr_t at = r->base + r->size;
    while (at < end) {
      RangePtr n = AddressSpace::get().find(at);
      if (!n || n->kind != Kind::vmm || n->base != at || q.info(*n->vmm).res_base != q.info(*r->vmm).res_base)
        return fail(Errc::invalid_value, "{}: {} = {:#x}: the copy touches {} bytes from there, but {:#x} ({} bytes "
                    "past the start) is not mapped in the same reservation (cuMemMap)", api, what, p, span, at,
                    at - p);
      TRY(q.check_copy_access(*n->vmm, at, false, api, what));
      at = n->base + n->size;
      more->push_back(std::move(n));
    }
    out.more = std::move(more);
  }
  out.r = std::move(r);
  return Errc::success;
}

}  // namespace

Errc resolve(uintptr_t p, Space space, const Extent& e, const char* api, const char* what, Side& out) {
  out.pitch = e.pitch;
  out.slice = e.slice;
  if (p == 0) return fail(Errc::invalid_value, "{}: {} is NULL", api, what);
  RangePtr r = AddressSpace::get().find(p);
  if (!r) {
    if (space == Space::device)
      return fail(Errc::invalid_value,
                  "{}: {} = {:#x} is not device memory: no allocation contains it (never allocated, already "
                  "freed, or a plain host pointer)", api, what, p);
    // Pageable host memory: the user's own pages, copied through directly, once they are known
    // to exist. NVIDIA's driver dies of SIGSEGV on the addresses refused here (difftest).
    TRY(check_pageable(p, e.span() ? e.span() : 1, api, what));
    out.p = reinterpret_cast<char*>(p);
    out.r = nullptr;
    return Errc::success;
  }
  size_t span = e.span();
  if (r->kind == Kind::pool) return resolve_pool(p, space, span ? span : 1, std::move(r), api, what, out);
  // Measured: a mapping nobody was given access to (cuMemSetAccess) is refused, both ways.
  if (r->kind == Kind::vmm) return resolve_vmm(p, span ? span : 1, std::move(r), api, what, out);
  if (!r->contains(p, span ? span : 1)) {
    size_t off = p - r->base;
    return fail(Errc::invalid_value,
                "{}: {} = {:#x} is {} bytes into {} of {} bytes at {:#x}; the copy touches {} bytes from there, "
                "which runs {} bytes past the end of the allocation",
                api, what, p, off, kind_name(r->kind), r->size, r->base, span, off + span - r->size);
  }
  out.p = r->translate(p);
  out.r = std::move(r);
  return Errc::success;
}

namespace {

Errc stream_for(const Submit& how, const char* api, std::shared_ptr<Stream>& s) {
  // Synchronous forms run on the default stream of the current context.
  return resolve_stream(how.async ? how.stream : nullptr, how.per_thread, api, s);
}

}  // namespace

namespace {

// An async copy from pageable memory: the caller may reuse its source as soon as the call
// returns. Run inline (idle stream), the copy reads the source directly; queued behind other
// work, it waits for the caller to stage the source and then copies from the staging.
struct StagedCopy {
  CopyOp op;
  std::thread::id caller = std::this_thread::get_id();
  bool submitting = true;   // read only on the caller's thread
  bool ran_inline = false;  // likewise
  std::unique_ptr<char[]> staging;
  std::atomic<uint32_t> ready{0};  // 1: op.src is the staging; 2: no staging, the caller waits

  void run() {
    if (std::this_thread::get_id() == caller && submitting) {
      op.run();
      ran_inline = true;
      return;
    }
    while (ready.load(std::memory_order_acquire) == 0) ready.wait(0, std::memory_order_acquire);
    op.run();
  }
};

Errc submit_staged(CopyOp op, Stream& s) {
  auto st = std::make_shared<StagedCopy>();
  st->op = std::move(op);
  uint64_t seq = s.enqueue([st] { st->run(); }, {}, /*inline_ok=*/true);
  if (strict::maybe()) [[unlikely]]
    strict::on_copy(st->op, s);
  st->submitting = false;
  if (st->ran_inline) return Errc::success;
  const size_t n = st->op.width * st->op.height * st->op.depth;
  st->staging.reset(new (std::nothrow) char[n]);
  if (!st->staging) {
    // No memory to stage in: the copy reads the source in place and the call waits for it.
    st->ready.store(2, std::memory_order_release);
    st->ready.notify_all();
    s.wait_for(seq);
    return Errc::success;
  }
  CopyOp gather = st->op;
  gather.dst = Side{st->staging.get(), nullptr, st->op.width, st->op.width * st->op.height};
  gather.run();
  st->op.src = Side{st->staging.get(), nullptr, st->op.width, st->op.width * st->op.height};
  st->ready.store(1, std::memory_order_release);
  st->ready.notify_all();
  return Errc::success;
}

}  // namespace

Errc submit_copy(CopyOp op, const Submit& how, const char* api) {
  std::shared_ptr<Stream> s;
  if (Errc e = stream_for(how, api, s); e != Errc::success) return e;
  if (op.width == 0 || op.height == 0 || op.depth == 0 || how.dry) return Errc::success;
  // Synchronous, or into pageable memory (complete before the call returns): the caller waits,
  // so the operation stays on its stack.
  if (!how.async || op.dst.pageable()) {
    const CopyOp* p = &op;
    s->wait_for(s->enqueue([p] { p->run(); }, {}, /*inline_ok=*/true));
    // A kernel before the copy faulted: the copy's answer is the fault, as the GPU's would be.
    if (s->ctx()->faulted()) [[unlikely]]
      return s->ctx()->fault_error(api);
    return Errc::success;
  }
  if (op.src.pageable() || how.stage) return submit_staged(std::move(op), *s);
  if (strict::maybe()) [[unlikely]] {
    s->enqueue([op] { op.run(); }, {}, /*inline_ok=*/true);
    strict::on_copy(op, *s);  // the pool allocations it touches were last used here
    return Errc::success;
  }
  s->enqueue([op = std::move(op)] { op.run(); }, {}, /*inline_ok=*/true);
  return Errc::success;
}

Errc submit_fill(FillOp op, const Submit& how, const char* api) {
  std::shared_ptr<Stream> s;
  if (Errc e = stream_for(how, api, s); e != Errc::success) return e;
  // The fill runs on its stream's device (the current context's for the synchronous forms).
  TRY(check_fill_access(op.dst, s->ctx(), api, "dstDevice"));
  if (op.width == 0 || op.height == 0 || how.dry) return Errc::success;
  if (!how.async) {
    const FillOp* p = &op;
    s->wait_for(s->enqueue([p] { p->run(); }, {}, true));
    return Errc::success;
  }
  if (strict::maybe()) [[unlikely]] {
    s->enqueue([op] { op.run(); }, {}, true);
    strict::on_fill(op, *s);
    return Errc::success;
  }
  s->enqueue([op = std::move(op)] { op.run(); }, {}, true);
  return Errc::success;
}

namespace {

// One end of a 2D/3D copy that is an array level: x counts bytes, y rows, z slices.
Errc side_array(CUarray h, size_t x, size_t y, size_t z, const Copy3DArgs& a, bool is_src, const char* api, Side& out) {
  const char* pre = is_src ? "src" : "dst";
  if (!h) return fail(Errc::invalid_value, "{}: {}MemoryType is CU_MEMORYTYPE_ARRAY but {}Array is NULL", api, pre, pre);
  ArrayPtr arr;
  TRY(array_arg(h, api, is_src ? "srcArray" : "dstArray", arr));
  // Measured on an H200: XInBytes and WidthInBytes need not be multiples of the element size.
  if (x > arr->pitch || a.width > arr->pitch - x || y > arr->rows || a.height > arr->rows - y || z > arr->slices ||
      a.depth > arr->slices - z)
    return fail(Errc::invalid_value, "{}: the copy's {} box ({}+{} bytes, {}+{} rows, {}+{} slices) does not fit the "
                "{}x{}x{} array level ({} bytes per row)", api, pre, x, a.width, y, a.height, z, a.depth,
                arr->desc.Width, arr->rows, arr->slices, arr->pitch);
  out.pitch = arr->pitch;
  out.slice = arr->pitch * arr->rows;
  out.p = arr->host + z * out.slice + y * out.pitch + x;
  out.r = arr->memory;
  out.more = nullptr;
  return Errc::success;
}

Errc side_3d(CUmemorytype type, const void* host, CUdeviceptr dev, CUarray arr, size_t x, size_t y, size_t z,
             size_t pitch, size_t height, const Copy3DArgs& a, bool is_src, const char* api, Side& out) {
  const char* pre = is_src ? "src" : "dst";
  Space space;
  uintptr_t base;
  switch (type) {
    case CU_MEMORYTYPE_HOST: space = Space::host; base = reinterpret_cast<uintptr_t>(host); break;
    case CU_MEMORYTYPE_DEVICE: space = Space::device; base = dev; break;
    case CU_MEMORYTYPE_UNIFIED: space = Space::unified; base = dev; break;
    case CU_MEMORYTYPE_ARRAY: return side_array(arr, x, y, z, a, is_src, api, out);
    default:
      return fail(Errc::invalid_value, "{}: {}MemoryType = {} is not a CUmemorytype (HOST 1, DEVICE 2, ARRAY 3, "
                  "UNIFIED 4)", api, pre, static_cast<int>(type));
  }
  // Measured: a pitch below XInBytes + WidthInBytes is refused even for one row; pitch 0
  // passes for a single row (rows are then never stepped). Likewise for slice heights.
  if ((pitch != 0 || a.height > 1) && pitch < x + a.width)
    return fail(Errc::invalid_value, "{}: {}Pitch {} is smaller than {}XInBytes + WidthInBytes = {}", api, pre, pitch,
                pre, x + a.width);
  if ((height != 0 || a.depth > 1) && height < a.height)
    return fail(Errc::invalid_value, "{}: {}Height {} is smaller than the copy's Height {}", api, pre, height,
                a.height);
  Extent e{a.width, a.height, a.depth, pitch, pitch * height};
  size_t off = (z * height + y) * pitch + x;
  const char* what = is_src ? (space == Space::host ? "srcHost (+ offsets)" : "srcDevice (+ offsets)")
                            : (space == Space::host ? "dstHost (+ offsets)" : "dstDevice (+ offsets)");
  if (base == 0) return fail(Errc::invalid_value, "{}: {} is NULL", api, what);
  // UNIFIED classifies the address the program gave: offsets that take memory the driver knows
  // past its end reach no memory of the program's, and must not be read as its pageable pages.
  if (space == Space::unified && off != 0)
    if (RangePtr r = AddressSpace::get().find(base); r && !AddressSpace::get().find(base + off))
      return fail(Errc::invalid_value, "{}: {} = {:#x} lies in {} of {} bytes at {:#x}; the offsets ({} bytes) take the "
                  "copy past its end", api, is_src ? "srcDevice" : "dstDevice", base, kind_name(r->kind), r->size,
                  r->base, off);
  TRY(resolve(base + off, space, e, api, what, out));
  return is_src ? Errc::success : check_writable(out, api, what);
}

}  // namespace

Errc copy_3d(const Copy3DArgs& a, const Submit& how, const char* api) {
  CopyOp op;
  op.width = a.width;
  op.height = a.height;
  op.depth = a.depth;
  {
    // The context check comes first, as for every other copy.
    std::shared_ptr<Context> ctx;
    if (Errc e = require_context(api, ctx); e != Errc::success) return e;
  }
  if (a.width == 0 || a.height == 0 || a.depth == 0) return Errc::success;  // nothing to touch
  if (Errc e = side_3d(a.srcType, a.srcHost, a.srcDevice, a.srcArray, a.srcX, a.srcY, a.srcZ, a.srcPitch,
                       a.srcHeight, a, true, api, op.src);
      e != Errc::success)
    return e;
  if (Errc e = side_3d(a.dstType, a.dstHost, a.dstDevice, a.dstArray, a.dstX, a.dstY, a.dstZ, a.dstPitch,
                       a.dstHeight, a, false, api, op.dst);
      e != Errc::success)
    return e;
  return submit_copy(std::move(op), how, api);
}

}  // namespace cuda_shim::mem
