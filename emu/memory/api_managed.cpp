// Driver entries: managed memory and its stream association. Rules marked "measured" were
// observed on NVIDIA's driver 580.159.04 (H200, CUDA 13.0; the probe cases
// tests/probe/cases/managed*.cases). Where the real driver crashes (attach flags 0, destroyed or garbage
// streams) the documented error answers instead.
#include <unistd.h>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/stream.hpp"
#include "memory/address_space.hpp"
#include "memory/managed.hpp"

namespace cuda_shim::api {
namespace {

using mem::AddressSpace;
using mem::Kind;
using mem::RangePtr;


bool pageable_access(const Stream& s) {
  auto& d = Driver::get();
  int o = s.ctx() ? s.ctx()->ordinal() : 0;
  return o >= 0 && o < d.device_count() && d.dev(o).attr[88] != 0;  // PAGEABLE_MEMORY_ACCESS
}

Errc attach(CUstream h, CUdeviceptr dptr, size_t length, unsigned flags, bool pt, const char* api) {
  TRY(Driver::get().require_init(api));
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));  // a destroyed or garbage stream: the real driver crashes
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
    return fail(Errc::invalid_value, "{}: flags {:#x}: must be exactly one of CU_MEM_ATTACH_GLOBAL (0x1), "
                "CU_MEM_ATTACH_HOST (0x2) or CU_MEM_ATTACH_SINGLE (0x4){}", api, flags,
                flags == 0 ? " (0 crashes NVIDIA's driver)" : "");
  if (flags == CU_MEM_ATTACH_SINGLE && !h && !pt)  // measured: the legacy and per-thread handles are fine
    return fail(Errc::invalid_value, "{}: CU_MEM_ATTACH_SINGLE needs a stream to attach to; the NULL stream is "
                "not one (use a created stream, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD)", api);
  RangePtr r = AddressSpace::get().find(dptr);
  if (!r) {
    // Documented: with pageable memory access, plain host memory can be attached, with a length.
    if (pageable_access(*s) && dptr != 0) {
      if (length == 0)
        return fail(Errc::invalid_value, "{}: {:#x} is pageable host memory: its length must be given (0 means "
                    "\"the whole allocation\" only for cuMemAllocManaged memory)", api, dptr);
      s->enqueue(nullptr, {}, true);  // stream order, nothing else to record: the device reaches it anyway
      return Errc::success;
    }
    return fail(Errc::invalid_value, "{}: dptr = {:#x} is not managed memory (no allocation contains it{})", api,
                dptr, pageable_access(*s) ? "" : "; pageable host memory qualifies only on devices with "
                "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS");
  }
  if (r->kind != Kind::managed)  // measured for device, pinned and registered memory
    return fail(Errc::invalid_value, "{}: dptr = {:#x} is {}, not managed memory (cuMemAllocManaged)", api, dptr,
                mem::kind_name(r->kind));
  if (dptr != r->base)  // measured
    return fail(Errc::invalid_value, "{}: dptr = {:#x} is {} bytes into the managed allocation at {:#x}; attach "
                "the whole allocation from its base", api, dptr, dptr - r->base, r->base);
  if (length != 0 && length != r->size)  // measured
    return fail(Errc::invalid_value, "{}: length {} must be 0 or the allocation's size, {}: a managed allocation is "
                "attached whole", api, length, r->size);
  // The association changes in stream order: when the stream reaches this point.
  s->enqueue([r, flags, w = std::weak_ptr<Stream>(s)] { mem::set_attachment(r, flags, w.lock()); }, {}, true);
  return Errc::success;
}

}  // namespace

Errc cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) noexcept {
  const char* api = "cuMemAllocManaged";
  if (dptr) *dptr = 0;  // measured: 0 after every failure
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(dptr, api, "dptr"));
  TRY(cap::check_unsafe(api));
  if (bytesize == 0)  // measured
    return fail(Errc::invalid_value, "{}: bytesize is 0 (the driver refuses empty allocations)", api);
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)  // measured: SINGLE too
    return fail(Errc::invalid_value, "{}: flags {:#x}: must be CU_MEM_ATTACH_GLOBAL (0x1) or CU_MEM_ATTACH_HOST "
                "(0x2){}", api, flags, flags == CU_MEM_ATTACH_SINGLE ? "; memory is attached to a single stream "
                "afterwards, with cuStreamAttachMemAsync" : "");
  const uint64_t limit = ctx->device()->cfg.total_mem + mem::physical_memory();
  if (bytesize > limit)  // measured: 1 << 50 bytes
    return fail(Errc::out_of_memory, "{}: {} bytes of managed memory requested; device {} and the host hold {} "
                "bytes together", api, bytesize, ctx->ordinal(), limit);
  // Measured: managed memory does not count against cuMemGetInfo's free memory.
  CUdeviceptr p = 0;
  TRY(mem::alloc_managed(ctx, bytesize, flags, api, p));
  *dptr = p;
  return Errc::success;
}

Errc cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags) noexcept {
  return attach(hStream, dptr, length, flags, false, "cuStreamAttachMemAsync");
}
Errc cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags) noexcept {
  return attach(hStream, dptr, length, flags, true, "cuStreamAttachMemAsync");
}

}  // namespace cuda_shim::api
