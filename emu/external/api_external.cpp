// Driver entries: external memory and semaphores (CUDA's "external resource interoperability").
// What an importable fd is lives in exporters.cpp; the objects in external.hpp. Rules marked
// "measured" were observed on NVIDIA's driver 580.159.04 (H200, CUDA 13.0; the probe
// cases tests/probe/cases/external*.cases).
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "abi/driver_api.hpp"
#include "core/fresh_alloc.hpp"
#include "core/capture.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/registry.hpp"
#include "core/stream.hpp"
#include "external/external.hpp"
#include "memory/address_space.hpp"
#include "memory/array.hpp"
#include "memory/backing.hpp"

namespace cuda_shim::api {
namespace {

using ext::ExportedObject;
using ext::Exporter;
using ext::ExternalMemory;
using ext::ExternalSemaphore;

// CUDA 13's handle type 9: a dma-buf fd (not in every cuda.h; measured: refused).
constexpr int kDmabufFd = 9;

Registry<ExternalMemory>& memories() {
  static auto* r = new Registry<ExternalMemory>();  // leaked: stream workers may outlive main()
  return *r;
}
Registry<ExternalSemaphore>& semaphores() {
  static auto* r = new Registry<ExternalSemaphore>();
  return *r;
}

const char* memory_type_name(int t) {
  switch (t) {
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_KMT: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_KMT";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF: return "CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF";
    default: return "not a CUexternalMemoryHandleType";
  }
}

const char* semaphore_type_name(int t) {
  switch (t) {
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD: return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32: return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_KMT: return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_KMT";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE: return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_FENCE: return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_FENCE";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC: return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX: return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX_KMT:
      return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX_KMT";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD:
      return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32:
      return "CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32";
    default: return "not a CUexternalSemaphoreHandleType";
  }
}

// The imported fd becomes the driver's: the emulator keeps its own descriptor of the object
// and closes the caller's number (measured: closed right after a successful import).
int take_fd(int fd) {
  int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own >= 0) ::close(fd);
  return own;
}

// Measured: once an OPAQUE_FD import got past the descriptor's checks, the driver owns the fd
// even when the import fails (a memfd, a socket, a pool's fd: closed). Not so for semaphores.
void consume(int fd) {
  if (fd >= 0 && ::fcntl(fd, F_GETFD) != -1) ::close(fd);
}

bool all_zero_bytes(const void* p, size_t n) {
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i]) return false;
  return true;
}
// Reserved words, which must all be zero.
template <class T, size_t N>
bool all_zero(const T (&words)[N]) {
  return all_zero_bytes(words, sizeof words);
}

// A fresh device-view mapping of bytes [offset, offset + size) of the imported object, as a
// Range owned by ctx (not yet in the AddressSpace). va_align: see Backing::adopt_range.
Errc map_window(const ExternalMemory& m, const std::shared_ptr<Context>& ctx, uint64_t offset, size_t size,
                size_t va_align, const char* api, mem::RangePtr& out) {
  int fd = ::fcntl(m.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return fail(Errc::out_of_memory, "{}: cannot map the external memory ({})", api, std::strerror(errno));
  Errc err = Errc::success;
  auto b = mem::Backing::adopt_range(fd, m.data_offset + offset, size, mem::Backing::View::device, api, err, va_align,
                                     offset);
  if (!b) return err;
  auto r = std::make_shared<mem::Range>();
  r->kind = mem::Kind::device;
  r->external = true;
  r->ordinal = ctx->ordinal();
  r->ctx = ctx;
  r->base = b->user_address();
  r->size = size;
  r->host = b->shadow();
  r->buffer_id = mem::AddressSpace::get().next_buffer_id();
  r->backing = std::move(b);
  out = std::move(r);
  return Errc::success;
}

// Mappings are reserved as device address space first: larger than this, there is none.
constexpr unsigned long long kAddressSpace = 1ull << 47;

Errc memory_arg(CUexternalMemory h, const char* api, std::shared_ptr<ExternalMemory>& out) {
  if (!h) return fail(Errc::invalid_value, "{}: extMem is NULL", api);  // measured
  out = memories().find(h);
  if (!out)  // the real driver dereferences stale and garbage handles (measured: SIGSEGV)
    return fail(Errc::invalid_handle, "{}: extMem = {} is not a live external memory object (never imported, or "
                "destroyed with cuDestroyExternalMemory)", api, static_cast<void*>(h));
  return Errc::success;
}

Errc semaphore_arg(CUexternalSemaphore h, unsigned i, const char* api, std::shared_ptr<ExternalSemaphore>& out) {
  if (!h) return fail(Errc::invalid_value, "{}: extSemArray[{}] is NULL", api, i);  // measured for waits
  out = semaphores().find(h);
  if (!out)  // measured: SIGSEGV on the real driver
    return fail(Errc::invalid_handle, "{}: extSemArray[{}] = {} is not a live external semaphore (never imported, or "
                "destroyed with cuDestroyExternalSemaphore)", api, i, static_cast<void*>(h));
  return Errc::success;
}

// Handle types that exist only on Windows (or Tegra): measured, NOT_SUPPORTED once a handle is
// given at all, INVALID_VALUE for an all-zero handle; D3D resources: always INVALID_VALUE.
template <class Handle>
Errc foreign_type(int type, bool d3d_resource, const Handle& handle, const char* name, const char* api) {
  if (d3d_resource || all_zero_bytes(&handle, sizeof handle))
    return fail(Errc::invalid_value, "{}: {} handles do not exist on Linux{}", api, name,
                d3d_resource ? "" : " (and the handle given is all zero)");
  return fail(Errc::not_supported, "{}: {} handles do not exist on Linux; a Linux driver imports file descriptors "
              "(OPAQUE_FD)", api, name);
}

// Why an fd cannot be imported as memory, in the real driver's words (measured codes).
Errc refuse_memory_fd(const ExportedObject& o, int fd, const char* api) {
  if (o.exporter == Exporter::shim_pool)  // measured: NOT_SUPPORTED
    return fail(Errc::not_supported, "{}: handle.fd {} is {}; a pool's handle is imported with "
                "cuMemPoolImportFromShareableHandle, not as external memory (the fd is closed: the driver owns it "
                "once the import is attempted)", api, fd, o.describe());
  return fail(Errc::unknown, "{}: handle.fd {} is {}, not memory an exporter shared. Importable opaque fds come from "
              "cuMemExportToShareableHandle (POSIX_FILE_DESCRIPTOR) of a cuMemCreate allocation, or from "
              "vkGetMemoryFdKHR of Vulkan memory allocated with VkExportMemoryAllocateInfo{}", api, fd, o.describe(),
              o.info.what == ipc::FdInfo::What::bad_fd ? "" : " (the fd is closed: the driver owns it once the import "
              "is attempted)");
}

}  // namespace

// ---- external memory -----------------------------------------------------------------------
Errc cuImportExternalMemory(CUexternalMemory* extMem_out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* desc) noexcept {
  const char* api = "cuImportExternalMemory";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(extMem_out, api, "extMem_out"));  // measured: the fd stays open
  TRY(need(desc, api, "memHandleDesc"));
  const int type = static_cast<int>(desc->type);
  if (type < CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD || type > kDmabufFd)  // measured: 0, 100, -1
    return fail(Errc::invalid_value, "{}: memHandleDesc->type {} is not a CUexternalMemoryHandleType", api, type);
  if (desc->size == 0)  // measured
    return fail(Errc::invalid_value, "{}: memHandleDesc->size is 0; give the exported allocation's size", api);
  if (desc->flags & ~CUDA_EXTERNAL_MEMORY_DEDICATED)  // measured
    return fail(Errc::invalid_value, "{}: memHandleDesc->flags {:#x}: must be 0 or CUDA_EXTERNAL_MEMORY_DEDICATED "
                "(0x1)", api, desc->flags);
  if (!all_zero(desc->reserved))  // measured
    return fail(Errc::invalid_value, "{}: memHandleDesc->reserved must be all zero (zero the struct before filling "
                "it)", api);
  switch (type) {
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD: break;
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE:
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE:
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT:
      return foreign_type(type, true, desc->handle, memory_type_name(type), api);
    case kDmabufFd:  // measured: refused even for a real dma-buf
      if (desc->handle.fd < 0) return fail(Errc::invalid_value, "{}: handle.fd {} is not a descriptor", api, desc->handle.fd);
      return fail(Errc::not_supported, "{}: dma-buf file descriptors (type 9) cannot be imported as external memory on "
                  "this device", api);
    default: return foreign_type(type, false, desc->handle, memory_type_name(type), api);
  }
  const int fd = desc->handle.fd;
  ExportedObject o = ext::identify(fd);
  // Measured: the driver does not check the size or the dedicated flag against the object here
  // (mapping past the object's end fails later), and takes any object its exporters made.
  if (o.exporter != Exporter::shim_vmm && o.exporter != Exporter::lavapipe && o.exporter != Exporter::shim_semaphore) {
    Errc e = refuse_memory_fd(o, fd, api);
    consume(fd);
    return e;
  }
  auto m = make_fresh<ExternalMemory>();
  m->type = desc->type;
  m->size = desc->size;
  m->object_size = o.exporter == Exporter::shim_semaphore ? o.info.size : o.data_size;
  m->dedicated = desc->flags & CUDA_EXTERNAL_MEMORY_DEDICATED;
  m->data_offset = o.data_offset;
  m->source = o.describe();
  m->ordinal = ctx->ordinal();
  m->ctx = ctx;
  m->fd = take_fd(fd);
  if (m->fd < 0) {
    Errc e = fail(Errc::out_of_memory, "{}: cannot keep a descriptor of handle.fd {} ({})", api, fd,
                  std::strerror(errno));
    consume(fd);  // past the descriptor checks the fd is the driver's, refused or not: closed once
    return e;
  }
  *extMem_out = static_cast<CUexternalMemory>(memories().add(std::move(m)));
  return Errc::success;
}

Errc cuExternalMemoryGetMappedBuffer(CUdeviceptr* devPtr, CUexternalMemory extMem,
                                     const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* desc) noexcept {
  const char* api = "cuExternalMemoryGetMappedBuffer";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(devPtr, api, "devPtr"));
  TRY(need(desc, api, "bufferDesc"));
  std::shared_ptr<ExternalMemory> m;
  TRY(memory_arg(extMem, api, m));
  if (desc->flags != 0)
    return fail(Errc::invalid_value, "{}: bufferDesc->flags {:#x}: must be 0", api, desc->flags);
  if (!all_zero(desc->reserved))
    return fail(Errc::invalid_value, "{}: bufferDesc->reserved must be all zero", api);
  if (desc->size == 0)
    return fail(Errc::invalid_value, "{}: bufferDesc->size is 0", api);
  if (desc->offset > m->size || desc->size > m->size - desc->offset)  // measured
    return fail(Errc::invalid_value, "{}: bufferDesc [offset {}, +{}) runs past the {} bytes memHandleDesc->size "
                "imported ({})", api, desc->offset, desc->size, m->size, m->source);
  if (desc->size > kAddressSpace)  // measured: 1 << 50 bytes
    return fail(Errc::out_of_memory, "{}: bufferDesc->size {} is more device address space than exists", api,
                desc->size);
  if (desc->offset > m->object_size || desc->size > m->object_size - desc->offset)  // measured
    return fail(Errc::invalid_value, "{}: bufferDesc [offset {}, +{}) runs past the end of the memory behind the "
                "import, {} ({} bytes; memHandleDesc->size said {})", api, desc->offset, desc->size, m->source,
                m->object_size, m->size);
  // Measured: each buffer gets a range of its own whose 2 MiB-aligned start is offset's place in
  // its 2 MiB page, so buffers are as aligned as the offsets asked for.
  mem::RangePtr r;
  TRY(map_window(*m, ctx, desc->offset, desc->size, mem::kAllocGranularity, api, r));
  if (!mem::AddressSpace::get().insert(r))
    return fail(Errc::out_of_memory, "{}: the new mapping at {:#x} overlaps a range the driver already knows", api,
                r->base);
  *devPtr = r->base;
  return Errc::success;
}

Errc cuExternalMemoryGetMappedMipmappedArray(CUmipmappedArray* mipmap, CUexternalMemory extMem,
                                             const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC* desc) noexcept {
  const char* api = "cuExternalMemoryGetMappedMipmappedArray";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(mipmap, api, "mipmap"));
  TRY(need(desc, api, "mipmapDesc"));
  std::shared_ptr<ExternalMemory> m;
  TRY(memory_arg(extMem, api, m));
  if (!all_zero(desc->reserved))
    return fail(Errc::invalid_value, "{}: mipmapDesc->reserved must be all zero", api);
  std::vector<size_t> offsets;
  size_t total = 0;
  TRY(mem::plan_mipmap(desc->arrayDesc, desc->numLevels, api, "mipmapDesc->arrayDesc", offsets, total));
  const uint64_t have = std::min<uint64_t>(m->size, m->object_size);
  if (desc->offset > have || total > have - desc->offset)  // measured
    return fail(Errc::invalid_value, "{}: the array needs {} bytes from offset {}, but the external memory holds {} "
                "bytes ({})", api, total, desc->offset, have, m->source);
  // The array's bytes: a range of its own, never in the AddressSpace (arrays have no address).
  mem::RangePtr r;
  TRY(map_window(*m, ctx, desc->offset, total, 0, api, r));
  auto mm = mem::make_mipmap(desc->arrayDesc, desc->numLevels, offsets, std::move(r), 0);
  for (auto& a : mm->level) mem::arrays().add(a);
  *mipmap = static_cast<CUmipmappedArray>(mem::mipmapped_arrays().add(std::move(mm)));
  return Errc::success;
}

Errc cuDestroyExternalMemory(CUexternalMemory extMem) noexcept {
  const char* api = "cuDestroyExternalMemory";
  TRY(Driver::get().require_init(api));
  if (!extMem) return fail(Errc::invalid_value, "{}: extMem is NULL", api);  // measured
  if (!memories().remove(extMem))  // measured: SIGSEGV on the real driver
    return fail(Errc::invalid_handle, "{}: extMem = {} is not a live external memory object (never imported, or "
                "destroyed already)", api, static_cast<void*>(extMem));
  // Measured: buffers and arrays mapped from it stay usable until freed; they hold their own mappings.
  return Errc::success;
}

// ---- external semaphores -------------------------------------------------------------------
Errc cuImportExternalSemaphore(CUexternalSemaphore* extSem_out,
                               const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC* desc) noexcept {
  const char* api = "cuImportExternalSemaphore";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(extSem_out, api, "extSem_out"));  // measured
  TRY(need(desc, api, "semHandleDesc"));
  const int type = static_cast<int>(desc->type);
  const bool timeline = type == CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  if (type < CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD || type > CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32)
    return fail(Errc::invalid_value, "{}: semHandleDesc->type {} is not a CUexternalSemaphoreHandleType", api, type);
  if (desc->flags != 0)  // measured
    return fail(Errc::invalid_value, "{}: semHandleDesc->flags {:#x}: must be 0", api, desc->flags);
  if (!all_zero(desc->reserved))  // measured
    return fail(Errc::invalid_value, "{}: semHandleDesc->reserved must be all zero", api);
  if (type != CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD && !timeline)  // measured: 2..8 and 10
    return foreign_type(type, false, desc->handle, semaphore_type_name(type), api);
  const int fd = desc->handle.fd;
  if (timeline && fd < 0)  // measured: INVALID_VALUE here, UNKNOWN for OPAQUE_FD
    return fail(Errc::invalid_value, "{}: handle.fd {} is not a descriptor", api, fd);
  ExportedObject o = ext::identify(fd);
  auto s = make_fresh<ExternalSemaphore>();
  s->type = desc->type;
  s->timeline = timeline;
  s->source = o.describe();
  if (o.exporter == Exporter::shim_semaphore && o.info.size >= 4096) {
    // Measured with Vulkan: a binary semaphore imports as TIMELINE_SEMAPHORE_FD and a timeline one
    // as OPAQUE_FD; the import type decides how CUDA signals and waits.
    s->sem = ext::SharedSemaphore::map(fd);
  } else if (o.exporter == Exporter::shim_vmm) {
    // Measured: an exported cuMemCreate allocation imports as a semaphore too. What its signals
    // mean is not documented; here they reach no one else.
    s->sem = ext::SharedSemaphore::make_private();
  } else {  // measured: UNKNOWN, and unlike memory imports the fd stays the caller's
    return fail(Errc::unknown, "{}: handle.fd {} is {}, not an exported semaphore. Importable semaphore fds come from "
                "vkGetSemaphoreFdKHR (VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT) on a driver that exports them, "
                "or from cuShimExportableSemaphoreCreate under cuda-shim", api, fd, o.describe());
  }
  if (!s->sem) return fail(Errc::out_of_memory, "{}: handle.fd {} ({}) cannot be mapped", api, fd, s->source);
  s->fd = take_fd(fd);  // measured: closed on success
  if (s->fd < 0)
    return fail(Errc::out_of_memory, "{}: cannot keep a descriptor of handle.fd {} ({})", api, fd,
                std::strerror(errno));
  *extSem_out = static_cast<CUexternalSemaphore>(semaphores().add(std::move(s)));
  return Errc::success;
}

namespace {

template <class Params>
Errc semaphore_ops(const CUexternalSemaphore* sems, const Params* params, unsigned n, CUstream hs, bool pt, bool signal,
                   const char* api);

// A signal or wait of n semaphores as a graph node: the arrays copied (the node owns them), the
// handles checked as the stream call checks them; at launch, the stream call again. A node of no
// semaphores does nothing (measured: cuGraphAddNode takes one).
template <class Params>
Errc node_of(const CUexternalSemaphore* sems, const Params* params, unsigned n, bool signal, cap::Spec& out,
             const char* api) {
  struct Arrays {
    std::vector<CUexternalSemaphore> sems;
    std::vector<Params> params;
  };
  auto a = std::make_shared<Arrays>();
  if (n) {
    TRY(need(sems, api, "extSemArray"));
    TRY(need(params, api, "paramsArray"));
    for (unsigned i = 0; i < n; ++i) {
      std::shared_ptr<ExternalSemaphore> e;
      TRY(semaphore_arg(sems[i], i, api, e));
    }
    a->sems.assign(sems, sems + n);
    a->params.assign(params, params + n);
  }
  out.kind = signal ? cap::Kind::ext_sem_signal : cap::Kind::ext_sem_wait;
  out.sems = a->sems.data();
  out.sem_params = a->params.data();
  out.sem_count = n;
  out.keep = a;
  out.issue = [a, signal, n](CUstream s) {
    if (n == 0) return Errc::success;
    return semaphore_ops(a->sems.data(), a->params.data(), n, s, false, signal, "cuGraphLaunch");
  };
  return Errc::success;
}

template <class Params>
Errc semaphore_ops(const CUexternalSemaphore* sems, const Params* params, unsigned n, CUstream hs, bool pt, bool signal,
                   const char* api) {
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(hs, pt, api, s));
  if (n == 0)  // measured: refused, even with valid arrays
    return fail(Errc::invalid_value, "{}: numExtSems is 0", api);
  TRY(need(sems, api, "extSemArray"));
  TRY(need(params, api, "paramsArray"));
  struct Op {
    std::shared_ptr<ext::SharedSemaphore> sem;
    uint64_t value;
    bool timeline;
  };
  std::vector<Op> ops;
  ops.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    std::shared_ptr<ExternalSemaphore> e;
    TRY(semaphore_arg(sems[i], i, api, e));
    if (params[i].flags)  // measured: 1, 2, 0x80000000 (the NvSciBuf flag too, for these types)
      return fail(Errc::invalid_value, "{}: paramsArray[{}].flags {:#x}: must be 0 for {} (the SKIP_NVSCIBUF_MEMSYNC "
                  "flags apply to NvSciSync semaphores only)", api, i, params[i].flags, e->source);
    if (!all_zero(params[i].reserved) || !all_zero(params[i].params.reserved))
      return fail(Errc::invalid_value, "{}: paramsArray[{}]'s reserved words must be all zero", api, i);  // measured
    // Measured: keyedMutex fields are ignored; a binary semaphore ignores the fence value.
    ops.push_back(Op{e->sem, params[i].params.fence.value, e->timeline});
  }
  std::shared_ptr<cap::Sequence> seq;
  TRY(cap::intercept(*s, api, seq));
  if (seq) [[unlikely]] {  // a capturing stream: the signal or wait becomes a node
    cap::Spec sp;
    TRY(node_of(sems, params, n, signal, sp, api));
    return seq->add(*s, std::move(sp), api);
  }
  if (signal) {
    s->enqueue([ops = std::move(ops)] {
      for (auto& o : ops) o.sem->signal(o.value, o.timeline);
    }, {}, true);
  } else {
    // Waits block the stream's worker until the other side signals, as the GPU would.
    s->enqueue([ops = std::move(ops)] {
      for (auto& o : ops) o.sem->wait(o.value, o.timeline, -1);
    }, {}, false);
  }
  return Errc::success;
}

}  // namespace

Errc cuSignalExternalSemaphoresAsync(const CUexternalSemaphore* extSemArray,
                                     const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* paramsArray, unsigned int numExtSems,
                                     CUstream stream) noexcept {
  return semaphore_ops(extSemArray, paramsArray, numExtSems, stream, false, true, "cuSignalExternalSemaphoresAsync");
}
Errc cuSignalExternalSemaphoresAsync_ptsz(const CUexternalSemaphore* extSemArray,
                                          const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* paramsArray,
                                          unsigned int numExtSems, CUstream stream) noexcept {
  return semaphore_ops(extSemArray, paramsArray, numExtSems, stream, true, true, "cuSignalExternalSemaphoresAsync");
}
Errc cuWaitExternalSemaphoresAsync(const CUexternalSemaphore* extSemArray,
                                   const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* paramsArray, unsigned int numExtSems,
                                   CUstream stream) noexcept {
  return semaphore_ops(extSemArray, paramsArray, numExtSems, stream, false, false, "cuWaitExternalSemaphoresAsync");
}
Errc cuWaitExternalSemaphoresAsync_ptsz(const CUexternalSemaphore* extSemArray,
                                        const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* paramsArray,
                                        unsigned int numExtSems, CUstream stream) noexcept {
  return semaphore_ops(extSemArray, paramsArray, numExtSems, stream, true, false, "cuWaitExternalSemaphoresAsync");
}

Errc cuDestroyExternalSemaphore(CUexternalSemaphore extSem) noexcept {
  const char* api = "cuDestroyExternalSemaphore";
  TRY(Driver::get().require_init(api));
  if (!extSem) return fail(Errc::invalid_value, "{}: extSem is NULL", api);  // measured
  if (!semaphores().remove(extSem))  // measured: a double free / SIGSEGV on the real driver
    return fail(Errc::invalid_handle, "{}: extSem = {} is not a live external semaphore (never imported, or destroyed "
                "already)", api, static_cast<void*>(extSem));
  return Errc::success;  // signals and waits already queued keep the semaphore object mapped
}

}  // namespace cuda_shim::api

namespace cuda_shim::ext {
Errc signal_node(const CUexternalSemaphore* sems, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* params, unsigned n,
                 cap::Spec& out, const char* api) {
  return api::node_of(sems, params, n, true, out, api);
}
Errc wait_node(const CUexternalSemaphore* sems, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* params, unsigned n,
               cap::Spec& out, const char* api) {
  return api::node_of(sems, params, n, false, out, api);
}
size_t live_memory_count() { return api::memories().size(); }
size_t live_semaphore_count() { return api::semaphores().size(); }
}  // namespace cuda_shim::ext
