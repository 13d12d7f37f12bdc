// Driver entries: memory pools and the stream-ordered allocator. Every rule below was
// measured on NVIDIA's driver 580 (H200 x2; the probe cases tests/probe/cases/pool*.cases); where the real
// driver crashes (garbage handles, NULL attribute values, maxSize = SIZE_MAX hangs) the
// emulator answers with the documented error code instead.
#include <algorithm>
#include <cstring>

#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/context.hpp"
#include "core/device_support.hpp"
#include "core/driver.hpp"
#include "memory/address_space.hpp"
#include "memory/graph_memory.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::api {
namespace {

using mem::AddressSpace;
using mem::Kind;
using mem::Pool;
using mem::PoolPtr;
using mem::pool_arg;
using mem::RangePtr;

int ndev() { return Driver::get().device_count(); }

// Measured: an imported pool answers none of the pool calls but access and destroy.
Errc not_imported(const Pool& p, const char* api) {
  if (!p.imported()) return Errc::success;
  return fail(Errc::invalid_value, "{}: {} was imported from another process: an imported pool takes no attribute, "
              "trim or current-pool calls (only cuMemPoolImportPointer, access and destroy)", api, p.describe());
}


constexpr unsigned kPoolHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;

// ---- what the device profile supports (core/device_support.hpp) ---------------------------
// A pool at (lt, id): a device without stream-ordered pools (MEMORY_POOLS_SUPPORTED 0), a host
// without host pools, or a handle type the device does not offer is CUDA_ERROR_NOT_SUPPORTED,
// as the CUDA docs give for cuMemPoolCreate, cuMemAllocAsync and the default-pool queries on
// such a device. The measured H200 supports every one of them, so nothing changes there.
Errc profile_allows_pool(int lt, int id, unsigned ht, const char* api) {
  int dev = 0;  // whose handle-type attributes decide: the pool's device, else device 0
  switch (lt) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      dev = id;
      TRY(require_device_support(id, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, api,
                                 "a memory pool (the stream-ordered allocator)"));
      break;
    case CU_MEM_LOCATION_TYPE_HOST:
      TRY(require_host_support(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, api,
                               "a pool of host memory (CU_MEM_LOCATION_TYPE_HOST)"));
      break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      TRY(require_host_support(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, api,
                               "a pool of host NUMA memory (CU_MEM_LOCATION_TYPE_HOST_NUMA)"));
      break;
    default:  // a managed pool with no preferred location
      TRY(require_host_support(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, api,
                               "a memory pool (the stream-ordered allocator)"));
  }
  if (ht & CU_MEM_HANDLE_TYPE_FABRIC)
    TRY(require_device_support(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, api,
                               "a pool exporting CU_MEM_HANDLE_TYPE_FABRIC handles"));
  const unsigned offered = static_cast<unsigned>(device_attribute(dev, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES));
  if (unsigned missing = ht & ~offered; missing && dev < ndev())
    return fail(Errc::not_supported, "{}: handleTypes {:#x}: device {} offers pool handle types {:#x} "
                "(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, profile {}), not {:#x}", api, ht, dev, offered,
                Driver::get().config().profile, missing);
  return Errc::success;
}

// ---- cuMemPoolCreate's props -------------------------------------------------------------
Errc check_props(const CUmemPoolProps& p, const char* api, Pool::Props& out) {
  for (unsigned char b : p.reserved)
    if (b != 0)
      return fail(Errc::invalid_value, "{}: poolProps->reserved must be all zero (a field of a newer CUDA, or "
                  "uninitialized memory: zero the struct before filling it)", api);
  if (p.allocType != CU_MEM_ALLOCATION_TYPE_PINNED && p.allocType != CU_MEM_ALLOCATION_TYPE_MANAGED)
    return fail(Errc::invalid_value, "{}: allocType {} is not CU_MEM_ALLOCATION_TYPE_PINNED (1) or "
                "CU_MEM_ALLOCATION_TYPE_MANAGED (2)", api, static_cast<int>(p.allocType));
  const unsigned ht = static_cast<unsigned>(p.handleTypes);
  if (ht & ~kPoolHandleTypes) {
    if (ht & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT))
      return fail(Errc::invalid_value, "{}: handleTypes {:#x} asks for Windows handles, which do not exist on Linux "
                  "(pools here support CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR and CU_MEM_HANDLE_TYPE_FABRIC: "
                  "CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 9)", api, ht);
    return fail(Errc::invalid_value, "{}: handleTypes {:#x} has bits that are no CUmemAllocationHandleType", api, ht);
  }
  const int lt = static_cast<int>(p.location.type), id = p.location.id;
  out = Pool::Props{};
  out.type = p.allocType;
  out.handle_types = ht;
  out.loc_type = p.location.type;
  out.loc_id = id;
  out.max_size = p.maxSize;
  out.usage = p.usage;  // measured: any usage bits are accepted
  if (p.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) {
    if (ht != 0)
      return fail(Errc::invalid_value, "{}: managed pools cannot be shared between processes: handleTypes must be "
                  "CU_MEM_HANDLE_TYPE_NONE (got {:#x})", api, ht);
    if (p.maxSize != 0)
      return fail(Errc::invalid_value, "{}: managed pools take no maxSize (got {}); leave it 0", api, p.maxSize);
    switch (lt) {
      case CU_MEM_LOCATION_TYPE_NONE: out.loc_id = 0; return Errc::success;
      case CU_MEM_LOCATION_TYPE_HOST: out.loc_id = 0; return Errc::success;
      case CU_MEM_LOCATION_TYPE_DEVICE:
        if (id < 0 || id >= ndev())
          return fail(Errc::invalid_value, "{}: location.id {} is not a device ordinal (this emulator has {} device{})",
                      api, id, ndev(), ndev() == 1 ? "" : "s");
        return Errc::success;
      case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        if (!Driver::get().host_numa_node(id))
          return fail(Errc::invalid_value, "{}: location.id {} is not a NUMA node of this host", api, id);
        return Errc::success;
      default:
        return fail(Errc::invalid_value, "{}: location.type {} ({}) is not allowed for managed pools (use NONE, "
                    "DEVICE, HOST or HOST_NUMA)", api, lt, mem::location_name(lt));
    }
  }
  switch (lt) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (id < 0 || id >= ndev())
        return fail(Errc::invalid_value, "{}: location.id {} is not a device ordinal (this emulator has {} device{})",
                    api, id, ndev(), ndev() == 1 ? "" : "s");
      return Errc::success;
    case CU_MEM_LOCATION_TYPE_HOST:
      if (ht != 0)
        return fail(Errc::invalid_value, "{}: pools with location.type CU_MEM_LOCATION_TYPE_HOST are not IPC capable: "
                    "handleTypes must be 0 (got {:#x}); use CU_MEM_LOCATION_TYPE_HOST_NUMA for a shareable host pool",
                    api, ht);
      out.loc_id = 0;  // ignored for host pools
      return Errc::success;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      if (!Driver::get().host_numa_node(id))
        return fail(Errc::invalid_value, "{}: location.id {} is not a NUMA node of this host (CU_DEVICE_ATTRIBUTE_"
                    "HOST_NUMA_ID names the node next to each device)", api, id);
      return Errc::success;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      return fail(Errc::invalid_value, "{}: location.type CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT is not allowed for "
                  "pools (a pool's memory has one fixed home: use CU_MEM_LOCATION_TYPE_HOST_NUMA with a node id)", api);
    case CU_MEM_LOCATION_TYPE_NONE:
      return fail(Errc::invalid_value, "{}: location.type CU_MEM_LOCATION_TYPE_NONE is only for managed pools "
                  "(allocType CU_MEM_ALLOCATION_TYPE_MANAGED); a pinned pool needs a DEVICE, HOST or HOST_NUMA "
                  "location", api);
    default:
      return fail(Errc::invalid_value, "{}: location.type {} is not a CUmemLocationType", api, lt);
  }
}

// ---- locations for the current/default pool queries ---------------------------------------
// Validates (location, type) as cuMemGetDefaultMemPool / cuMemGetMemPool / cuMemSetMemPool do.
Errc check_location(const CUmemLocation* loc, CUmemAllocationType type, const char* api) {
  TRY(need(loc, api, "location"));
  const int lt = static_cast<int>(loc->type);
  if (lt == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return fail(Errc::not_supported, "{}: CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT names no fixed location, so it has "
                "no pool", api);
  if (lt < CU_MEM_LOCATION_TYPE_NONE || lt > CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return fail(Errc::not_supported, "{}: location.type {} is not a CUmemLocationType", api, lt);
  if (type != CU_MEM_ALLOCATION_TYPE_PINNED && type != CU_MEM_ALLOCATION_TYPE_MANAGED)
    return fail(Errc::invalid_value, "{}: type {} is not CU_MEM_ALLOCATION_TYPE_PINNED or _MANAGED", api,
                static_cast<int>(type));
  switch (lt) {
    case CU_MEM_LOCATION_TYPE_NONE:
      if (type != CU_MEM_ALLOCATION_TYPE_MANAGED)
        return fail(Errc::invalid_value, "{}: CU_MEM_LOCATION_TYPE_NONE (no preferred location) exists only for "
                    "managed pools", api);
      return Errc::success;
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (loc->id < 0 || loc->id >= ndev())
        return fail(Errc::invalid_value, "{}: location.id {} is not a device ordinal", api, loc->id);
      return Errc::success;
    case CU_MEM_LOCATION_TYPE_HOST: return Errc::success;
    default:  // HOST_NUMA
      if (!Driver::get().host_numa_node(loc->id))
        return fail(Errc::invalid_value, "{}: location.id {} is not a NUMA node of this host", api, loc->id);
      return Errc::success;
  }
}

// ---- graph memory ----------------------------------------------------------------------------
// A cuMemAllocAsync / cuMemFreeAsync on a capturing stream: allocation and free nodes
// (memory/graph_memory.hpp).
Errc alloc_node(CUdeviceptr* dptr, size_t bytes, Stream& s, cap::Sequence& seq, const char* api) {
  CUDA_MEM_ALLOC_NODE_PARAMS p{};
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, s.ctx()->ordinal()};
  p.bytesize = bytes;
  cap::Spec sp;
  TRY(mem::graph_alloc_spec(p, s.ctx_ptr(), sp, api));
  const CUdeviceptr out = sp.alloc.dptr;
  TRY(seq.add(s, std::move(sp), api));
  *dptr = out;
  return Errc::success;
}

Errc free_node(CUdeviceptr p, Stream& s, cap::Sequence& seq, const char* api) {
  cap::Spec sp;
  TRY(mem::graph_free_spec(p, /*captured=*/true, sp, api));
  return seq.add(s, std::move(sp), api);
}

// ---- allocation and free -------------------------------------------------------------------
Errc alloc_async(CUdeviceptr* dptr, size_t bytes, Pool* from, CUstream h, bool pt, const char* api) {
  TRY(Driver::get().require_init(api));
  TRY(need(dptr, api, "dptr"));
  *dptr = 0;  // measured: cleared on every refusal
  Stream* s = nullptr;
  TRY(resolve_stream(h, pt, api, s));
  if (!s->pools_supported()) [[unlikely]]
    return refuse_unsupported(s->ctx()->ordinal(), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, api,
                              "the stream-ordered allocator");
  if (bytes == 0) return Errc::success;  // measured: success with a NULL pointer
  std::shared_ptr<cap::Sequence> seq;
  TRY(cap::intercept(*s, api, seq));
  if (seq) [[unlikely]]
    return alloc_node(dptr, bytes, *s, *seq, api);
  Pool* p = from ? from : mem::current_device_pool(s->ctx()->ordinal());
  uintptr_t out = 0;
  TRY(p->alloc(bytes, *s, api, out));
  *dptr = out;
  return Errc::success;
}

Errc alloc_from_pool(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream h, bool pt, const char* api) {
  TRY(Driver::get().require_init(api));
  TRY(need(dptr, api, "dptr"));
  *dptr = 0;
  Pool* p = nullptr;
  TRY(pool_arg(pool, api, p));
  return alloc_async(dptr, bytes, p, h, pt, api);
}

Errc free_async_other(CUdeviceptr dptr, const char* api);

Errc free_async(CUdeviceptr dptr, CUstream h, bool pt, const char* api) {
  TRY(Driver::get().require_init(api));
  Stream* s = nullptr;
  TRY(resolve_stream(h, pt, api, s));
  if (!s->pools_supported()) [[unlikely]]
    return refuse_unsupported(s->ctx()->ordinal(), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, api,
                              "the stream-ordered allocator");
  if (dptr == 0) return Errc::success;  // measured
  if (cap::g_open.load(std::memory_order_acquire)) [[unlikely]] {
    std::shared_ptr<cap::Sequence> seq;
    TRY(cap::intercept(*s, api, seq));
    if (seq) return free_node(dptr, *s, *seq, api);
  }
  if (const mem::Range* w = AddressSpace::get().find_cached(dptr); w && w->kind == Kind::pool) [[likely]]
    return w->pool->free_async(dptr, *s, api);
  return free_async_other(dptr, api);
}

// Everything but a pool allocation, out of line: the pair's fast path keeps a small frame.
[[gnu::noinline]] Errc free_async_other(CUdeviceptr dptr, const char* api) {
  if (mem::is_graph_memory(dptr)) {  // an allocation node's memory: freed, the graph keeps the address
    mem::graph_memory_freed(dptr);
    return Errc::success;
  }
  RangePtr r = AddressSpace::get().find(dptr);
  if (r && (r->external || r->kind == Kind::managed))  // measured: NOT_SUPPORTED, and the memory stays
    return fail(Errc::not_supported, "{}: {:#x} is {}; free it with cuMemFree", api, dptr,
                r->external ? "a buffer mapped from external memory" : "managed memory (cuMemAllocManaged)");
  if (r && r->kind == Kind::device && r->base == dptr) {
    // Measured: cuMemFreeAsync also frees cuMemAlloc memory. Work already queued keeps
    // the mapping alive through its own reference.
    if (AddressSpace::get().remove_base(dptr, [&](const mem::Range& x) { return &x == r.get(); }))
      mem::uncharge(r->ordinal, r->accounted);
    return Errc::success;
  }
  if (!r)
    return fail(Errc::invalid_value, "{}: {:#x} is not memory the driver allocated (pageable host memory, freed "
                "already, or never allocated)", api, dptr);
  if (r->kind == Kind::device)
    return fail(Errc::invalid_value, "{}: {:#x} is {} bytes into the cuMemAlloc allocation at {:#x}; free its base "
                "address", api, dptr, dptr - r->base, r->base);
  return fail(Errc::invalid_value, "{}: {:#x} is {}, which stream-ordered frees do not take{}", api, dptr,
              mem::kind_name(r->kind),
              r->kind == Kind::host_pinned       ? " (free it with cuMemFreeHost)"
              : r->kind == Kind::host_registered ? " (release it with cuMemHostUnregister)"
                                                 : "");
}

// ---- access ----------------------------------------------------------------------------------
const char* flags_name(unsigned f) {
  switch (f) {
    case CU_MEM_ACCESS_FLAGS_PROT_NONE: return "CU_MEM_ACCESS_FLAGS_PROT_NONE";
    case CU_MEM_ACCESS_FLAGS_PROT_READ: return "CU_MEM_ACCESS_FLAGS_PROT_READ";
    case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: return "CU_MEM_ACCESS_FLAGS_PROT_READWRITE";
    default: return "an unknown CUmemAccess_flags";
  }
}

Errc check_access_desc(const Pool& pool, const CUmemAccessDesc& d, size_t i, const char* api) {
  const unsigned f = static_cast<unsigned>(d.flags);
  if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    return fail(Errc::invalid_value, "{}: map[{}].flags = {:#x} is {} (NONE 0, READ 1, READWRITE 3)", api, i, f,
                flags_name(f));
  const int lt = static_cast<int>(d.location.type);
  if (lt == CU_MEM_LOCATION_TYPE_DEVICE) {
    // Measured (probe pool.access.set.dev1_read): read-only is refused before the ordinal is checked.
    if (f == CU_MEM_ACCESS_FLAGS_PROT_READ)
      return fail(Errc::not_supported, "{}: map[{}]: read-only access (CU_MEM_ACCESS_FLAGS_PROT_READ) to pool memory "
                  "is not supported; grant READWRITE or NONE", api, i);
    if (d.location.id < 0 || d.location.id >= ndev())
      return fail(Errc::invalid_device, "{}: map[{}].location.id {} is not a device ordinal", api, i, d.location.id);
    if (pool.device_located() && d.location.id == pool.props().loc_id && f == CU_MEM_ACCESS_FLAGS_PROT_NONE)
      return fail(Errc::invalid_device, "{}: map[{}]: device {} owns {}; its own access cannot be revoked", api, i,
                  d.location.id, pool.describe());
    return Errc::success;
  }
  if (lt == CU_MEM_LOCATION_TYPE_HOST || lt == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
    if (pool.device_located())
      return fail(Errc::not_supported, "{}: map[{}]: {} is device memory; the host cannot be given access to it "
                  "(allocate from a HOST or HOST_NUMA pool instead)", api, i, pool.describe());
    if (f == CU_MEM_ACCESS_FLAGS_PROT_READ)
      return fail(Errc::not_supported, "{}: map[{}]: read-only host access is not supported", api, i);
    if (pool.host_located() && f == CU_MEM_ACCESS_FLAGS_PROT_NONE)
      return fail(Errc::not_supported, "{}: map[{}]: {} is host memory; the host's own access cannot be revoked", api,
                  i, pool.describe());
    return Errc::success;
  }
  return fail(Errc::not_supported, "{}: map[{}].location.type {} ({}) cannot be given access to a pool (use DEVICE, "
              "HOST or HOST_NUMA)", api, i, lt, mem::location_name(lt));
}

}  // namespace

// ---- pools ----------------------------------------------------------------------------------
Errc cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) noexcept {
  const char* api = "cuMemPoolCreate";
  TRY(Driver::get().require_init(api));
  TRY(need(pool, api, "pool"));
  TRY(need(poolProps, api, "poolProps"));
  Pool::Props props;
  TRY(check_props(*poolProps, api, props));
  TRY(profile_allows_pool(props.loc_type, props.loc_id, props.handle_types, api));
  PoolPtr p;
  TRY(mem::create_pool(props, api, p));
  *pool = reinterpret_cast<CUmemoryPool>(p->handle());
  return Errc::success;
}

Errc cuMemPoolDestroy(CUmemoryPool pool) noexcept {
  const char* api = "cuMemPoolDestroy";
  TRY(Driver::get().require_init(api));
  if (!pool) return fail(Errc::invalid_value, "{}: the pool handle is NULL", api);
  return mem::destroy_pool(pool, api);
}

Errc cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) noexcept {
  const char* api = "cuMemPoolTrimTo";
  TRY(Driver::get().require_init(api));
  PoolPtr p;
  TRY(pool_arg(pool, api, p));
  TRY(not_imported(*p, api));
  p->trim_to(minBytesToKeep);
  return Errc::success;
}

Errc cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) noexcept {
  const char* api = "cuMemPoolSetAttribute";
  TRY(Driver::get().require_init(api));
  PoolPtr p;
  TRY(pool_arg(pool, api, p));
  TRY(not_imported(*p, api));
  TRY(need(value, api, "value"));  // the real driver crashes here
  uint64_t v64 = 0;
  int vi = 0;
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      std::memcpy(&vi, value, sizeof vi);
      p->set_reuse_follow(vi != 0);
      return Errc::success;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      std::memcpy(&vi, value, sizeof vi);
      p->set_reuse_opportunistic(vi != 0);
      return Errc::success;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      std::memcpy(&vi, value, sizeof vi);
      p->set_reuse_internal(vi != 0);
      return Errc::success;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      std::memcpy(&v64, value, sizeof v64);
      p->set_release_threshold(v64);
      return Errc::success;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      std::memcpy(&v64, value, sizeof v64);
      if (v64 != 0)
        return fail(Errc::invalid_value, "{}: a high-water mark can only be reset, by setting it to 0 (got {}) on {}",
                    api, v64, p->describe());
      if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) p->reset_reserved_high();
      else p->reset_used_high();
      return Errc::success;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      return fail(Errc::invalid_value, "{}: {} is read-only (it counts the pool's memory)", api,
                  attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ? "CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT"
                                                               : "CU_MEMPOOL_ATTR_USED_MEM_CURRENT");
    default:
      return fail(Errc::invalid_value, "{}: {} is not a CUmemPool_attribute (1..8)", api, static_cast<int>(attr));
  }
}

Errc cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) noexcept {
  const char* api = "cuMemPoolGetAttribute";
  TRY(Driver::get().require_init(api));
  PoolPtr p;
  TRY(pool_arg(pool, api, p));
  TRY(not_imported(*p, api));
  TRY(need(value, api, "value"));
  auto put_int = [&](bool b) {  // measured: the reuse attributes write a 4-byte int, 0 or 1
    int v = b ? 1 : 0;
    std::memcpy(value, &v, sizeof v);
  };
  auto put_u64 = [&](uint64_t v) { std::memcpy(value, &v, sizeof v); };
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: put_int(p->reuse_follow()); return Errc::success;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: put_int(p->reuse_opportunistic()); return Errc::success;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: put_int(p->reuse_internal()); return Errc::success;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: put_u64(p->release_threshold()); return Errc::success;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: put_u64(p->reserved_current()); return Errc::success;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: put_u64(p->reserved_high()); return Errc::success;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: put_u64(p->used_current()); return Errc::success;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: put_u64(p->used_high()); return Errc::success;
    default:
      return fail(Errc::invalid_value, "{}: {} is not a CUmemPool_attribute (1..8)", api, static_cast<int>(attr));
  }
}

Errc cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) noexcept {
  const char* api = "cuMemPoolSetAccess";
  TRY(Driver::get().require_init(api));
  PoolPtr p;
  TRY(pool_arg(pool, api, p));
  TRY(need(map, api, "map"));
  // All or nothing: every descriptor is checked before any takes effect.
  for (size_t i = 0; i < count; ++i) TRY(check_access_desc(*p, map[i], i, api));
  for (size_t i = 0; i < count; ++i) {
    const int lt = static_cast<int>(map[i].location.type);
    p->set_access(lt == CU_MEM_LOCATION_TYPE_DEVICE ? map[i].location.id : -1, static_cast<unsigned>(map[i].flags));
  }
  return Errc::success;
}

Errc cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool, CUmemLocation* location) noexcept {
  const char* api = "cuMemPoolGetAccess";
  TRY(Driver::get().require_init(api));
  TRY(need(flags, api, "flags"));
  TRY(need(location, api, "location"));
  PoolPtr p;
  TRY(pool_arg(memPool, api, p));
  const int lt = static_cast<int>(location->type);
  if (lt == CU_MEM_LOCATION_TYPE_DEVICE) {
    if (location->id < 0 || location->id >= ndev())
      return fail(Errc::invalid_value, "{}: location.id {} is not a device ordinal", api, location->id);
    *flags = static_cast<CUmemAccess_flags>(p->access(location->id));
    return Errc::success;
  }
  if (lt == CU_MEM_LOCATION_TYPE_HOST || lt == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
    if (lt == CU_MEM_LOCATION_TYPE_HOST_NUMA && !Driver::get().host_numa_node(location->id))
      return fail(Errc::invalid_value, "{}: location.id {} is not a NUMA node of this host", api, location->id);
    *flags = static_cast<CUmemAccess_flags>(p->access(-1));
    return Errc::success;
  }
  return fail(Errc::invalid_value, "{}: location.type {} ({}) does not access memory (ask for DEVICE, HOST or "
              "HOST_NUMA)", api, lt, mem::location_name(lt));
}

// ---- default and current pools ----------------------------------------------------------------
Errc cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) noexcept {
  const char* api = "cuDeviceGetDefaultMemPool";
  Device* d = nullptr;
  TRY(Driver::get().device(dev, d, api));
  TRY(need(pool_out, api, "pool_out"));
  TRY(require_device_support(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, api, "a default memory pool"));
  *pool_out = reinterpret_cast<CUmemoryPool>(
      mem::default_pool(CU_MEM_LOCATION_TYPE_DEVICE, dev, CU_MEM_ALLOCATION_TYPE_PINNED)->handle());
  return Errc::success;
}

Errc cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) noexcept {
  const char* api = "cuDeviceGetMemPool";
  TRY(Driver::get().require_init(api));
  TRY(need(pool, api, "pool"));
  if (dev < 0 || dev >= ndev())  // measured: INVALID_VALUE here, not INVALID_DEVICE
    return fail(Errc::invalid_value, "{}: {} is not a device ordinal", api, dev);
  TRY(require_device_support(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, api, "a current memory pool"));
  *pool = reinterpret_cast<CUmemoryPool>(
      mem::current_pool(CU_MEM_LOCATION_TYPE_DEVICE, dev, CU_MEM_ALLOCATION_TYPE_PINNED)->handle());
  return Errc::success;
}

Errc cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) noexcept {
  const char* api = "cuDeviceSetMemPool";
  TRY(Driver::get().require_init(api));
  if (dev < 0 || dev >= ndev()) return fail(Errc::invalid_value, "{}: {} is not a device ordinal", api, dev);
  TRY(require_device_support(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, api, "a current memory pool"));
  PoolPtr p;
  TRY(pool_arg(pool, api, p));
  TRY(not_imported(*p, api));
  // Measured: a managed pool located on the device becomes its current managed pool.
  if (p->props().loc_type != CU_MEM_LOCATION_TYPE_DEVICE || p->props().loc_id != dev)
    return fail(Errc::invalid_value, "{}: {} is not local to device {}; a device's current pool must hold that "
                "device's memory (allocate from other pools with cuMemAllocFromPoolAsync)", api, p->describe(), dev);
  mem::set_current_pool(CU_MEM_LOCATION_TYPE_DEVICE, dev, p->props().type, p);
  return Errc::success;
}

Errc cuMemGetDefaultMemPool(CUmemoryPool* pool_out, CUmemLocation* location, CUmemAllocationType type) noexcept {
  const char* api = "cuMemGetDefaultMemPool";
  TRY(Driver::get().require_init(api));
  TRY(need(pool_out, api, "pool_out"));
  TRY(check_location(location, type, api));
  TRY(profile_allows_pool(location->type, location->id, 0, api));
  *pool_out = reinterpret_cast<CUmemoryPool>(mem::default_pool(location->type, location->id, type)->handle());
  return Errc::success;
}

Errc cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type) noexcept {
  const char* api = "cuMemGetMemPool";
  TRY(Driver::get().require_init(api));
  TRY(need(pool, api, "pool"));
  TRY(check_location(location, type, api));
  TRY(profile_allows_pool(location->type, location->id, 0, api));
  *pool = reinterpret_cast<CUmemoryPool>(mem::current_pool(location->type, location->id, type)->handle());
  return Errc::success;
}

Errc cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool) noexcept {
  const char* api = "cuMemSetMemPool";
  TRY(Driver::get().require_init(api));
  if (!pool) return fail(Errc::invalid_value, "{}: pool is NULL", api);  // measured (difftest): before the location
  TRY(check_location(location, type, api));
  TRY(profile_allows_pool(location->type, location->id, 0, api));
  PoolPtr p;
  TRY(pool_arg(pool, api, p));
  TRY(not_imported(*p, api));
  const auto& pp = p->props();
  bool same_loc = pp.loc_type == location->type &&
                  (location->type == CU_MEM_LOCATION_TYPE_HOST || location->type == CU_MEM_LOCATION_TYPE_NONE ||
                   pp.loc_id == location->id);
  if (pp.type != type || !same_loc)
    return fail(Errc::invalid_value, "{}: {} does not match the location ({}, id {}) and allocation type {} it is "
                "set for; a location's current pool must have that location and type", api, p->describe(),
                mem::location_name(location->type), location->id, static_cast<int>(type));
  mem::set_current_pool(location->type, location->id, type, p);
  return Errc::success;
}

// ---- stream-ordered allocation ------------------------------------------------------------
Errc cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) noexcept {
  return alloc_async(dptr, bytesize, nullptr, hStream, false, "cuMemAllocAsync");
}
Errc cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) noexcept {
  return alloc_async(dptr, bytesize, nullptr, hStream, true, "cuMemAllocAsync");
}
Errc cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) noexcept {
  return alloc_from_pool(dptr, bytesize, pool, hStream, false, "cuMemAllocFromPoolAsync");
}
Errc cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) noexcept {
  return alloc_from_pool(dptr, bytesize, pool, hStream, true, "cuMemAllocFromPoolAsync");
}
Errc cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) noexcept {
  return free_async(dptr, hStream, false, "cuMemFreeAsync");
}
Errc cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) noexcept {
  return free_async(dptr, hStream, true, "cuMemFreeAsync");
}

}  // namespace cuda_shim::api
