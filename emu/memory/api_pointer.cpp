// Driver entries: cuPointerGetAttribute(s) and cuPointerSetAttribute.
#include <cstring>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "memory/address_space.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::api {
namespace {

using mem::AddressSpace;
using mem::Kind;
using mem::RangePtr;

template <class T>
void put(void* data, T v) {
  std::memcpy(data, &v, sizeof v);
}
// "Boolean" attributes are written as a 32-bit int: measured, the driver clears all four
// low bytes of a 0xdeadbeef-filled slot (and callers such as NCCL pass an int).
void put_bool(void* data, bool b) { put<int>(data, b ? 1 : 0); }

// Measured (H100, difftest): the driver writes the two fields of the tokens (12 bytes, not the
// struct's padding), zero here (no RDMA peer), and then refuses host memory of every kind.
Errc put_p2p(void* data, bool host, CUdeviceptr p, const char* api) {
  std::memset(data, 0, sizeof(unsigned long long) + sizeof(unsigned));
  if (host)
    return fail(Errc::invalid_value, "{}: CU_POINTER_ATTRIBUTE_P2P_TOKENS: {:#x} is host memory, which has no "
                "peer-to-peer tokens", api, p);
  return Errc::success;
}

// One attribute of a known range; a refusal is recorded with fail() (cuPointerGetAttributes
// turns it into a default value for that slot instead).
Errc get_one(void* data, CUpointer_attribute a, CUdeviceptr p, const RangePtr& r, const char* api) {
  const bool dev = r->kind == Kind::device;
  const bool managed = r->kind == Kind::managed;
  switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: put(data, reinterpret_cast<CUcontext>(r->ctx.get())); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:  // measured: managed memory is device memory with a host address
      put<unsigned>(data, dev || managed ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: put<CUdeviceptr>(data, p); return Errc::success;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (dev) {
        put<void*>(data, nullptr);  // measured: NULL is written before the refusal
        return fail(Errc::invalid_value, "{}: CU_POINTER_ATTRIBUTE_HOST_POINTER: {:#x} is device memory, which has no "
                    "host address", api, p);
      }
      put(data, reinterpret_cast<void*>(p));
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put_bool(data, r->sync_memops.load()); return Errc::success;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: put<unsigned long long>(data, r->buffer_id); return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put_bool(data, r->kind == Kind::managed); return Errc::success;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: put<int>(data, r->ordinal); return Errc::success;
    // Measured: memory opened from an IPC handle, or mapped from external memory, is not itself exportable.
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      put_bool(data, dev && !r->ipc_opened && !r->external);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: put<CUdeviceptr>(data, r->base); return Errc::success;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: put<size_t>(data, r->size); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MAPPED: put_bool(data, true); return Errc::success;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: put<unsigned long long>(data, 0); return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: put_bool(data, dev && !r->external); return Errc::success;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      put<unsigned>(data, CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: put<CUmemoryPool>(data, nullptr); return Errc::success;
    // Measured: a small allocation reports the 2 MiB chunk it was carved from; registered
    // memory its registration (difftest).
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      put<size_t>(data, r->kind == Kind::host_registered
                            ? r->size
                            : (r->size + mem::kAllocGranularity - 1) / mem::kAllocGranularity * mem::kAllocGranularity);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put(data, reinterpret_cast<void*>(r->base)); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      put<unsigned long long>(data, r->block_id ? r->block_id : r->buffer_id);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put_bool(data, dev); return Errc::success;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return put_p2p(data, r->host_kind(), p, api);
    default:
      return fail(Errc::invalid_value, "{}: {} is not a CUpointer_attribute", api, static_cast<int>(a));
  }
}

// One attribute of a live pool allocation (all measured on the H200, per pool kind).
Errc get_pool_one(void* data, CUpointer_attribute a, CUdeviceptr p, const mem::Pool& pool, const mem::PoolAlloc& al,
                  const char* api) {
  const bool host = pool.host_located(), managed = pool.managed();
  switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: put<CUcontext>(data, nullptr); return Errc::success;  // pools have no context
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      put<unsigned>(data, host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      if (host) {
        put<CUdeviceptr>(data, 0);
        return fail(Errc::invalid_value, "{}: CU_POINTER_ATTRIBUTE_DEVICE_POINTER: {:#x} is host memory from {}, which "
                    "has no device address", api, p, pool.describe());
      }
      put<CUdeviceptr>(data, p);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (!host && !managed) {
        put<void*>(data, nullptr);
        return fail(Errc::invalid_value, "{}: CU_POINTER_ATTRIBUTE_HOST_POINTER: {:#x} is device memory from {}, which "
                    "has no host address", api, p, pool.describe());
      }
      put(data, reinterpret_cast<void*>(p));
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put_bool(data, managed); return Errc::success;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: put<unsigned long long>(data, al.buffer_id); return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put_bool(data, managed); return Errc::success;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
      int d = pool.device();
      if (d < 0) {
        auto ctx = current_context();
        d = ctx ? ctx->ordinal() : 0;
      }
      put<int>(data, d);
      return Errc::success;
    }
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: put_bool(data, false); return Errc::success;
    // Measured: host-located pool memory reports a range start of 0 (and a correct size).
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: put<CUdeviceptr>(data, host ? 0 : al.base); return Errc::success;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: put<size_t>(data, al.size); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MAPPED: put_bool(data, true); return Errc::success;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      // Measured: an imported pointer reports none (only the owner exports it).
      put<unsigned long long>(data, pool.imported() ? 0 : pool.props().handle_types);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: put_bool(data, false); return Errc::success;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      put<unsigned>(data, CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      put<CUmemoryPool>(data, reinterpret_cast<CUmemoryPool>(pool.handle()));
      return Errc::success;
    // The pool's physical granule: the 32 MiB chunk holding p, and its identity.
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put<size_t>(data, mem::kPoolChunk); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      put(data, reinterpret_cast<void*>(al.chunk_base));
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: put<unsigned long long>(data, al.chunk_id); return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put_bool(data, false); return Errc::success;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return put_p2p(data, host, p, api);
    default:
      return fail(Errc::invalid_value, "{}: {} is not a CUpointer_attribute", api, static_cast<int>(a));
  }
}

// One attribute of a cuMemMap mapping (measured on an H100 for device memory; the host-located
// forms where noted).
Errc get_vmm_one(void* data, CUpointer_attribute a, CUdeviceptr p, const mem::Range& r, const char* api) {
  const mem::VmmQueries& q = mem::vmm_queries();
  const mem::MappingInfo m = q.info(*r.vmm);
  const bool host = m.host_located;
  switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: put<CUcontext>(data, nullptr); return Errc::success;  // VMM memory has none
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:  // measured: host-located memory is host memory
      put<unsigned>(data, host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: {
      Context* ctx = current_context_raw();
      if (host && !q.device_access(*r.vmm, ctx ? ctx->ordinal() : 0)) {  // measured (H100, difftest)
        put<CUdeviceptr>(data, 0);
        return fail(Errc::invalid_value, "{}: CU_POINTER_ATTRIBUTE_DEVICE_POINTER: {:#x} is host-located memory no "
                    "device was given access to (cuMemSetAccess)", api, p);
      }
      put<CUdeviceptr>(data, p);
      return Errc::success;
    }
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      // Measured (H200): host-located memory the host was given access to is its own address;
      // otherwise refused.
      if (host && m.host_access) {
        put<void*>(data, reinterpret_cast<void*>(p));
        return Errc::success;
      }
      put<void*>(data, nullptr);
      return fail(Errc::invalid_value, "{}: CU_POINTER_ATTRIBUTE_HOST_POINTER: {:#x} is mapped with cuMemMap, which "
                  "has no separate host address", api, p);
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put_bool(data, r.sync_memops.load()); return Errc::success;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: put<unsigned long long>(data, r.buffer_id); return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put_bool(data, false); return Errc::success;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
      int d = r.ordinal;
      if (host)
        if (Context* ctx = current_context_raw()) d = ctx->ordinal();
      put<int>(data, d);
      return Errc::success;
    }
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: put_bool(data, false); return Errc::success;
    // Measured: the range is the whole reservation, not the mapping.
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: put<CUdeviceptr>(data, m.res_base); return Errc::success;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: put<size_t>(data, m.res_size); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MAPPED: put_bool(data, true); return Errc::success;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      put<unsigned long long>(data, m.handle_types);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
      put_bool(data, m.rdma);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: {
      Context* ctx = current_context_raw();
      put<unsigned>(data, q.device_access(*r.vmm, ctx ? ctx->ordinal() : r.ordinal));
      return Errc::success;
    }
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: put<CUmemoryPool>(data, nullptr); return Errc::success;
    // Measured: the mapping's own base and size.
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put<size_t>(data, m.size); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put(data, reinterpret_cast<void*>(m.base)); return Errc::success;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: put<unsigned long long>(data, m.block_id); return Errc::success;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      put_bool(data, m.hw_decompress);
      return Errc::success;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return put_p2p(data, host, p, api);
    default:
      return fail(Errc::invalid_value, "{}: {} is not a CUpointer_attribute", api, static_cast<int>(a));
  }
}

// A range found by address, narrowed to the pool allocation when it is a pool window:
// null when p lies in no live allocation.
RangePtr find_live(CUdeviceptr p, mem::PoolAlloc& al) {
  RangePtr r = AddressSpace::get().find(p);
  if (r && r->kind == Kind::pool && !r->pool->lookup(p, al)) return nullptr;
  return r;
}

// The value a slot gets in cuPointerGetAttributes when the pointer is unknown or the
// attribute does not apply: NULL / 0 of the attribute's type.
size_t default_size(CUpointer_attribute a) {
  switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return 8;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return sizeof(unsigned long long) + sizeof(unsigned);  // measured: 12
    default: return 4;
  }
}

bool known_attribute(CUpointer_attribute a) {
  return a >= CU_POINTER_ATTRIBUTE_CONTEXT && a <= CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE;
}

}  // namespace

Errc cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) noexcept {
  const char* api = "cuPointerGetAttribute";
  TRY(Driver::get().require_init(api));
  if (!data) return fail(Errc::invalid_value, "{}: data is NULL", api);
  if (!known_attribute(attribute))
    return fail(Errc::invalid_value, "{}: {} is not a CUpointer_attribute", api, static_cast<int>(attribute));
  // Measured on the H200 (driver 580): no current context is needed; unified addressing finds any
  // allocation from any thread.
  mem::PoolAlloc al;
  RangePtr r = find_live(ptr, al);
  if (!r)
    return fail(Errc::invalid_value, "{}: {:#x} is not memory the driver allocated, registered or mapped (pageable "
                "host memory, or freed)", api, ptr);
  if (r->kind == Kind::pool) return get_pool_one(data, attribute, ptr, *r->pool, al, api);
  if (r->kind == Kind::vmm) return get_vmm_one(data, attribute, ptr, *r, api);
  return get_one(data, attribute, ptr, r, api);
}

Errc cuPointerGetAttributes(unsigned int n, CUpointer_attribute* attrs, void** data, CUdeviceptr ptr) noexcept {
  const char* api = "cuPointerGetAttributes";
  TRY(Driver::get().require_init(api));
  if (n == 0) return Errc::success;
  if (!attrs) return fail(Errc::invalid_value, "{}: attributes is NULL", api);
  if (!data) return fail(Errc::invalid_value, "{}: data is NULL", api);
  for (unsigned i = 0; i < n; ++i)
    if (!known_attribute(attrs[i]))
      return fail(Errc::invalid_value, "{}: attributes[{}] = {} is not a CUpointer_attribute", api, i,
                  static_cast<int>(attrs[i]));
  mem::PoolAlloc al;
  RangePtr r = find_live(ptr, al);
  // Measured (H100, difftest): for memory the driver does not know, the range slots are left as
  // they were, except in a reservation (mapped or not), which they describe.
  uintptr_t res_base = 0;
  size_t res_size = 0;
  const bool reserved = !r && mem::vmm_queries().reservation_at(ptr, res_base, res_size);
  for (unsigned i = 0; i < n; ++i) {
    if (!data[i]) continue;  // the caller skipped this slot
    if (!r && (attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR || attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_SIZE)) {
      if (reserved && attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) put<CUdeviceptr>(data[i], res_base);
      if (reserved && attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_SIZE) put<size_t>(data[i], res_size);
      continue;
    }
    if (r) {
      // A slot that does not apply (host pointer of device memory) keeps its default.
      Errc e = r->kind == Kind::pool ? get_pool_one(data[i], attrs[i], ptr, *r->pool, al, api)
               : r->kind == Kind::vmm ? get_vmm_one(data[i], attrs[i], ptr, *r, api)
                                      : get_one(data[i], attrs[i], ptr, r, api);
      if (e == Errc::success) continue;
    }
    if (size_t sz = default_size(attrs[i])) std::memset(data[i], 0, sz);
    // Unknown memory: "no device" rather than device 0.
    // Measured for unknown memory: DEVICE_ORDINAL -2 ("no device"), HOST_POINTER the pointer itself.
    if (!r && attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) put<int>(data[i], -2);
    if (!r && attrs[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) put(data[i], reinterpret_cast<void*>(ptr));
  }
  clear_explanation();  // per-slot refusals are not this call's failure
  return Errc::success;
}

Errc cuPointerSetAttribute(const void* value, CUpointer_attribute attribute, CUdeviceptr ptr) noexcept {
  const char* api = "cuPointerSetAttribute";
  TRY(Driver::get().require_init(api));
  if (!value) return fail(Errc::invalid_value, "{}: value is NULL", api);
  if (attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
    return fail(Errc::invalid_value, "{}: only CU_POINTER_ATTRIBUTE_SYNC_MEMOPS can be set (got {})", api,
                static_cast<int>(attribute));
  mem::PoolAlloc al;
  RangePtr r = find_live(ptr, al);
  if (!r)
    return fail(Errc::invalid_value, "{}: {:#x} is not memory the driver knows", api, ptr);
  if (r->kind == Kind::pool) return Errc::success;  // pool memory's copies are always synchronous
  unsigned v = 0;
  std::memcpy(&v, value, sizeof v);
  r->sync_memops.store(v != 0);  // the emulator's copies are always synchronous with respect to memops
  return Errc::success;
}

}  // namespace cuda_shim::api
