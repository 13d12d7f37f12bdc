// Driver entries: virtual memory management. Rules marked "measured" were observed on NVIDIA's
// driver 580.159.04 (H100, CUDA 13.0); where the real driver crashes (garbage or stale
// handles, host-located memory copied before any access was granted) the emulator answers
// with the documented error code instead.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/device_support.hpp"
#include "core/driver.hpp"
#include "core/registry.hpp"
#include "ipc/identity.hpp"
#include "ipc/registry.hpp"
#include "platform/shareable.hpp"
#include "memory/address_space.hpp"
#include "memory/backing.hpp"
#include "vmm/vmm.hpp"
#include "vmm/vmm_args.hpp"

namespace cuda_shim::api {
namespace {

using mem::AddressSpace;
using mem::Kind;
using mem::Range;
using mem::RangePtr;
using vmm::Allocation;
using vmm::AllocationPtr;
using vmm::check_access_desc;
using vmm::check_create_location;
using vmm::kGranularity;
using vmm::Mapping;

struct Reservation {
  uintptr_t base = 0;
  size_t size = 0;
  vmm::VaRange va;
  std::shared_ptr<vmm::Shadow> shadow;
  std::map<uintptr_t, std::shared_ptr<Mapping>> maps;  // by base
};

// Handles, reservations and mappings change under one lock; copies never take it (they find
// mappings through the AddressSpace and read atomics).
struct State {
  std::mutex m;
  Registry<Allocation> handles;
  std::map<uintptr_t, Reservation> res;  // by base
  std::atomic<uint64_t> next_block{1};
};
State& st() {
  static auto* s = new State();  // leaked: worker threads may outlive main()
  return *s;
}

int ndev() { return Driver::get().device_count(); }


CUmemGenericAllocationHandle handle_of(const AllocationPtr& a) { return a->handle(); }

// A live handle, or null (never dereferenced before the registry confirmed it).
AllocationPtr find_handle(CUmemGenericAllocationHandle h) {
  return st().handles.find(reinterpret_cast<const void*>(static_cast<uintptr_t>(h)));
}

Errc handle_arg(CUmemGenericAllocationHandle h, const char* api, AllocationPtr& out) {
  out = find_handle(h);
  if (!out)
    return fail(Errc::invalid_value, "{}: handle {:#x} is not a live allocation handle (never created, or released "
                "with cuMemRelease as often as it was created, imported and retained)", api, h);
  return Errc::success;
}

// The reservation holding all of [p, p + n); null when none does. With st().m held.
Reservation* reservation_of(uintptr_t p, size_t n) {
  auto& r = st().res;
  auto it = r.upper_bound(p);
  if (it == r.begin()) return nullptr;
  --it;
  Reservation& v = it->second;
  if (p - v.base >= v.size || n > v.size - (p - v.base)) return nullptr;
  return &v;
}

// The mapping containing p, through the AddressSpace.
std::shared_ptr<Mapping> mapping_at(uintptr_t p) {
  RangePtr r = AddressSpace::get().find(p);
  return r && r->kind == Kind::vmm ? r->vmm : nullptr;
}


// The host's access, as host code gets it: for host-located memory, what was granted to the
// host (measured on the H200: a device's grant alone leaves host code faulting).
unsigned host_flags(const Mapping& m) {
  if (!m.alloc->host_located()) return 0;
  return m.host_access.load(std::memory_order_acquire);
}

// The host's access as cuMemGetAccess reports it (measured on the H200 and the H100): for
// host-located memory, once anything was granted it reads READWRITE, even when host code would
// still fault; for device memory, the owning device's access.
unsigned reported_host_flags(const Mapping& m) {
  if (!m.alloc->host_located()) return m.device_access(m.alloc->prop.location.id);
  if (unsigned h = m.host_access.load(std::memory_order_acquire)) return h;
  return m.any_access() ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : 0;
}

// The anonymous PROT_NONE pages a reservation is made of.
void* reserve_pages(void* at, size_t len, int extra) {
  return ::mmap(at, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra, -1, 0);
}

// Registers a new allocation with one handle reference.
CUmemGenericAllocationHandle publish(const AllocationPtr& a) {
  std::lock_guard lk(st().m);
  a->handle_refs = 1;
  st().handles.add_as(reinterpret_cast<void*>(a->handle()), a);
  return handle_of(a);
}

// Rebuilds an allocation from one of our memfds (an import). Takes ownership of fd.
Errc adopt_object(int fd, const ipc::FdInfo& info, const char* api, AllocationPtr& out) {
  if (info.kind != ipc::ObjectKind::vmm) {  // measured for a pool's fd: NOT_SUPPORTED
    ::close(fd);
    return fail(Errc::not_supported, "{}: the handle is a shareable {}, not a cuMemCreate allocation (import it with "
                "the API that exported it)", api, ipc::object_kind_name(info.kind));
  }
  const auto& f = info.fields;
  if (f.size() < 5 || f[3] == 0 || f[3] % kGranularity != 0 || info.size < f[3]) {
    ::close(fd);
    return fail(Errc::invalid_value, "{}: the allocation's description (memfd \"{}\", {} bytes) is damaged", api,
                info.name, info.size);
  }
  auto a = std::make_shared<Allocation>();
  a->fd = fd;
  a->size = static_cast<size_t>(f[3]);
  a->imported = true;
  a->token = info.token;
  a->block_id = st().next_block.fetch_add(1);
  a->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  a->prop.location.type = static_cast<CUmemLocationType>(f[0]);
  a->prop.location.id = static_cast<int>(static_cast<uint32_t>(f[1]));
  // Measured: an imported handle reports no requested handle types (and so cannot be exported again).
  a->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  a->prop.allocFlags.compressionType = static_cast<unsigned char>(f[4] & 0xff);
  a->prop.allocFlags.gpuDirectRDMACapable = static_cast<unsigned char>((f[4] >> 8) & 0xff);
  a->prop.allocFlags.usage = static_cast<unsigned short>((f[4] >> 16) & 0xffff);
  out = std::move(a);
  return Errc::success;
}

// The mappings that exactly tile [p, p + n) with no gap, in address order; with st().m held.
Errc whole_mappings(Reservation& r, uintptr_t p, size_t n, const char* api, std::vector<std::shared_ptr<Mapping>>& out) {
  uintptr_t at = p;
  const uintptr_t end = p + n;
  while (at < end) {
    auto it = r.maps.upper_bound(at);
    if (it != r.maps.begin()) {
      auto prev = std::prev(it);
      if (prev->second->base < at && prev->second->base + prev->second->size > at)
        return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) starts {} bytes into the mapping at {:#x} (+{:#x}); "
                    "access is set on whole mappings", api, p, n, at - prev->second->base, prev->second->base,
                    prev->second->size);
    }
    auto m = r.maps.find(at);
    if (m == r.maps.end()) {
      // Measured on the H200: a gap after the first mapping ends the range (what follows keeps
      // its access); nothing mapped at the start is refused.
      if (!out.empty()) return Errc::success;
      return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) is not mapped: nothing is mapped at {:#x}", api, p, n, at);
    }
    if (m->second->size > end - at)
      return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) ends inside the mapping at {:#x} (+{:#x}); access is "
                  "set on whole mappings", api, p, n, m->second->base, m->second->size);
    out.push_back(m->second);
    at += m->second->size;
  }
  return Errc::success;
}

}  // namespace

// ---- allocations ---------------------------------------------------------------------------
Errc cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                   CUmemAllocationGranularity_flags option) noexcept {
  const char* api = "cuMemGetAllocationGranularity";
  TRY(Driver::get().require_init(api));
  TRY(need(granularity, api, "granularity"));
  TRY(need(prop, api, "prop"));  // measured
  if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)  // measured
    return fail(Errc::invalid_value, "{}: option {} is not CU_MEM_ALLOC_GRANULARITY_MINIMUM (0) or _RECOMMENDED (1)",
                api, static_cast<int>(option));
  // Measured: 2 MiB for every location and option; the location is not validated here.
  *granularity = kGranularity;
  return Errc::success;
}

Errc cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                 unsigned long long flags) noexcept {
  const char* api = "cuMemCreate";
  TRY(Driver::get().require_init(api));
  TRY(need(handle, api, "handle"));
  TRY(need(prop, api, "prop"));  // measured
  if (flags != 0)  // measured
    return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)  // measured for MANAGED
    return fail(Errc::invalid_value, "{}: prop->type {} is not CU_MEM_ALLOCATION_TYPE_PINNED (1), the only type "
                "cuMemCreate makes", api, static_cast<int>(prop->type));
  for (unsigned char b : prop->allocFlags.reserved)
    if (b != 0)  // measured
      return fail(Errc::invalid_value, "{}: prop->allocFlags.reserved must be all zero (zero the struct before filling "
                  "it)", api);
  int id = 0;
  TRY(check_create_location(prop->location, api, id));
  const unsigned ht = static_cast<unsigned>(prop->requestedHandleTypes);
  if (ht & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT))  // measured for WIN32
    return fail(Errc::invalid_value, "{}: prop->requestedHandleTypes {:#x} asks for Windows handles, which do not exist "
                "on Linux (use CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR or CU_MEM_HANDLE_TYPE_FABRIC)", api, ht);
  // Measured: other unknown bits (0x10) are accepted.
  const bool host = prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE;
  if (prop->location.type == CU_MEM_LOCATION_TYPE_HOST &&
      (ht & (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC)))  // measured for POSIX fd
    return fail(Errc::invalid_value, "{}: CU_MEM_LOCATION_TYPE_HOST allocations cannot be shared between processes "
                "(requestedHandleTypes {:#x}); use CU_MEM_LOCATION_TYPE_HOST_NUMA for shareable host memory", api, ht);
  if (size == 0 || size % kGranularity != 0)  // measured for 0 and 1 MiB
    return fail(Errc::invalid_value, "{}: size {} is not a non-zero multiple of the allocation granularity ({} bytes; "
                "cuMemGetAllocationGranularity)", api, size, kGranularity);
  if (ht & CU_MEM_HANDLE_TYPE_FABRIC) {  // measured: NOT_PERMITTED without an IMEX channel
    // A device whose profile has no fabric handles refuses first (core/device_support.hpp).
    TRY(require_device_support(host ? 0 : id, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, api,
                               "prop->requestedHandleTypes CU_MEM_HANDLE_TYPE_FABRIC"));
    int channel = -1;
    TRY(ipc::imex_channel(api, channel));
  }
  auto a = std::make_shared<Allocation>();
  a->size = size;
  a->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  // Measured (H200): unknown handle-type bits are accepted and dropped, and host memory is
  // reported as the host NUMA node's (CU_MEM_LOCATION_TYPE_HOST reads back as HOST_NUMA 0).
  constexpr unsigned kKnownTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_WIN32 |
                                   CU_MEM_HANDLE_TYPE_WIN32_KMT | CU_MEM_HANDLE_TYPE_FABRIC;
  a->prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(ht & kKnownTypes);
  a->prop.location.type = prop->location.type;
  a->prop.location.id = id;
  if (prop->location.type == CU_MEM_LOCATION_TYPE_HOST) {
    a->prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    a->prop.location.id = Driver::get().dev(0).cfg.numa_id;
  }
  a->prop.allocFlags.compressionType = prop->allocFlags.compressionType;  // measured: accepted, reported back
  a->prop.allocFlags.gpuDirectRDMACapable = prop->allocFlags.gpuDirectRDMACapable;
  a->prop.allocFlags.usage = prop->allocFlags.usage;
  if (!host) {
    const uint64_t total = Driver::get().dev(id).cfg.total_mem;
    if (!mem::charge(id, size, total))  // measured: 64 TiB -> OUT_OF_MEMORY
      return fail(Errc::out_of_memory, "{}: {} bytes requested, but {} of device {}'s {} bytes are already allocated",
                  api, size, mem::charged(id), id, total);
    a->charged_dev = id;  // measured: cuMemGetInfo's free memory drops by the size
  } else if (size > mem::physical_memory()) {
    return fail(Errc::out_of_memory, "{}: {} bytes of host memory requested, more than the host's {} bytes of RAM", api,
                size, mem::physical_memory());
  }
  TRY(vmm::create_bytes(*a, api));
  a->block_id = st().next_block.fetch_add(1);
  *handle = publish(a);
  return Errc::success;
}

Errc cuMemRelease(CUmemGenericAllocationHandle handle) noexcept {
  const char* api = "cuMemRelease";
  TRY(Driver::get().require_init(api));
  AllocationPtr dead;  // destroyed (unmapped, closed, uncharged) after the lock is dropped
  std::lock_guard lk(st().m);
  AllocationPtr a;
  // Measured: 0 and a handle released as often as it was acquired are INVALID_VALUE; a
  // garbage value crashes the real driver.
  TRY(handle_arg(handle, api, a));
  // Measured: released while mapped, the handle dies and the memory stays until unmapped.
  if (--a->handle_refs == 0) dead = st().handles.remove(reinterpret_cast<void*>(a->handle()));
  return Errc::success;
}

Errc cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) noexcept {
  const char* api = "cuMemGetAllocationPropertiesFromHandle";
  TRY(Driver::get().require_init(api));
  TRY(need(prop, api, "prop"));
  AllocationPtr a;
  TRY(handle_arg(handle, api, a));
  *prop = a->prop;
  return Errc::success;
}

Errc cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) noexcept {
  const char* api = "cuMemRetainAllocationHandle";
  TRY(Driver::get().require_init(api));
  TRY(need(handle, api, "handle"));
  auto p = reinterpret_cast<uintptr_t>(addr);
  std::lock_guard lk(st().m);
  auto m = mapping_at(p);
  if (!m)  // measured, also for cuMemAlloc memory
    return fail(Errc::invalid_value, "{}: addr = {} lies in no cuMemMap mapping", api, addr);
  // Measured: the same handle value, also after the handle was released while mapped.
  AllocationPtr a = m->alloc;
  if (a->handle_refs++ == 0) st().handles.add_as(reinterpret_cast<void*>(a->handle()), a);
  *handle = handle_of(a);
  return Errc::success;
}

// ---- address reservations ------------------------------------------------------------------
Errc cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                         unsigned long long flags) noexcept {
  const char* api = "cuMemAddressReserve";
  TRY(Driver::get().require_init(api));
  TRY(need(ptr, api, "ptr"));
  if (flags != 0)  // measured
    return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  if (size == 0 || size % kGranularity != 0)  // measured for 0 and 1 MiB
    return fail(Errc::invalid_value, "{}: size {} is not a non-zero multiple of the allocation granularity ({} bytes)",
                api, size, kGranularity);
  if (alignment & (alignment - 1))  // measured for 3
    return fail(Errc::invalid_value, "{}: alignment {} is not a power of two", api, alignment);
  const size_t align = std::max(alignment, kGranularity);  // measured: 4 KiB is accepted
  // addr is a hint: taken when that range is free and aligned, as the driver may.
  const vmm::VaRange va = vmm::va_take(vmm::VaUse::user, size, align, addr);
  if (!va.base)
    return fail(Errc::out_of_memory, "{}: cannot reserve {} bytes of address space aligned to {}", api, size, align);
  void* p = va.base;
  auto sh = std::make_shared<vmm::Shadow>();
  sh->va = vmm::va_take(vmm::VaUse::shadow, size, kGranularity, 0);
  if (!sh->va.base) {
    vmm::va_give(va, false);
    return fail(Errc::out_of_memory, "{}: cannot reserve the {}-byte shadow of the range", api, size);
  }
  sh->base = static_cast<char*>(sh->va.base);
  sh->size = size;
  Reservation r;
  r.base = reinterpret_cast<uintptr_t>(p);
  r.size = size;
  r.va = va;
  r.shadow = std::move(sh);
  {
    std::lock_guard lk(st().m);
    st().res.emplace(r.base, std::move(r));
  }
  *ptr = reinterpret_cast<uintptr_t>(p);
  return Errc::success;
}

Errc cuMemAddressFree(CUdeviceptr ptr, size_t size) noexcept {
  const char* api = "cuMemAddressFree";
  TRY(Driver::get().require_init(api));
  std::lock_guard lk(st().m);
  auto it = st().res.find(ptr);
  if (it == st().res.end())  // measured, also for 0
    return fail(Errc::invalid_value, "{}: ptr = {:#x} is not the start of a range reserved with cuMemAddressReserve "
                "(or it was freed already)", api, ptr);
  Reservation& r = it->second;
  if (size != r.size)  // measured: part of a reservation cannot be freed
    return fail(Errc::invalid_value, "{}: size {} is not the reservation's size {}; free the whole range at once", api,
                size, r.size);
  if (!r.maps.empty()) {  // measured
    const Mapping& m = *r.maps.begin()->second;
    return fail(Errc::invalid_value, "{}: the range [{:#x}, +{:#x}) still has {} mapping{} ({} at {:#x} first); "
                "cuMemUnmap them first", api, ptr, size, r.maps.size(), r.maps.size() == 1 ? "" : "s",
                m.alloc->describe(), m.base);
  }
  vmm::va_give(r.va, false);  // unmapping left every page reserved as it came
  st().res.erase(it);  // the shadow goes with its last mapping object
  return Errc::success;
}

// ---- mappings ------------------------------------------------------------------------------
Errc cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
              unsigned long long flags) noexcept {
  const char* api = "cuMemMap";
  TRY(Driver::get().require_init(api));
  if (flags != 0)  // measured
    return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  std::lock_guard lk(st().m);
  AllocationPtr a;
  TRY(handle_arg(handle, api, a));
  // Measured: NULL is INVALID_VALUE even with a bad offset (difftest, H100); past it, a partial
  // mapping is NOT_SUPPORTED before the range is looked up (probe vmm.map.unreserved, H200), and
  // a whole one outside every reservation is INVALID_VALUE.
  if (!ptr) return fail(Errc::invalid_value, "{}: ptr is NULL; map into a range from cuMemAddressReserve", api);
  if (offset != 0 || size != a->size)
    return fail(Errc::not_supported, "{}: offset {} and size {}: an allocation is mapped whole (offset 0, size {} for "
                "{})", api, offset, size, a->size, a->describe());
  Reservation* r = reservation_of(ptr, size);
  if (!r)
    return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) does not lie within one range reserved with "
                "cuMemAddressReserve", api, ptr, size);
  if (ptr % kGranularity != 0)  // measured
    return fail(Errc::invalid_value, "{}: ptr = {:#x} is not aligned to the allocation granularity ({} bytes)", api,
                ptr, kGranularity);
  {
    auto it = r->maps.lower_bound(ptr);
    const Mapping* o = nullptr;
    if (it != r->maps.end() && it->first < ptr + size) o = it->second.get();
    if (!o && it != r->maps.begin() && std::prev(it)->second->base + std::prev(it)->second->size > ptr)
      o = std::prev(it)->second.get();
    if (o)  // measured
      return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) overlaps the mapping of {} at {:#x}; cuMemUnmap it first",
                  api, ptr, size, o->alloc->describe(), o->base);
  }
  auto m = std::make_shared<Mapping>();
  m->base = ptr;
  m->size = size;
  m->alloc = a;
  m->res_base = r->base;
  m->res_size = r->size;
  // The user's view of host memory: PROT_NONE until cuMemSetAccess. Device memory's stays the
  // reservation's PROT_NONE pages: host code faults there alike, and nothing reads through it.
  const int ofd = a->object_fd();
  const auto ooff = static_cast<off_t>(a->object_offset());
  if (a->host_located() && ::mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE,
                                  MAP_SHARED | MAP_NORESERVE | MAP_FIXED, ofd, ooff) == MAP_FAILED)
    return fail(Errc::out_of_memory, "{}: cannot map {} at {:#x} ({})", api, a->describe(), ptr, std::strerror(errno));
  {
    std::lock_guard sl(r->shadow->m);
    if (!ipc::map_object(ofd, static_cast<size_t>(ooff), size, r->shadow->base + (ptr - r->base))) {
      if (a->host_located()) reserve_pages(reinterpret_cast<void*>(ptr), size, MAP_FIXED);
      return fail(Errc::out_of_memory, "{}: cannot map the shadow of {} ({})", api, a->describe(),
                  std::strerror(errno));
    }
    r->shadow->owner[ptr - r->base] = m.get();
  }
  m->shadow = r->shadow;
  auto range = std::make_shared<Range>();
  range->kind = Kind::vmm;
  range->ordinal = a->host_located() ? 0 : a->prop.location.id;
  range->base = ptr;
  range->size = size;
  range->host = m->host();
  range->buffer_id = AddressSpace::get().next_buffer_id();
  range->vmm = m;
  if (!AddressSpace::get().insert(range)) {
    if (a->host_located()) reserve_pages(reinterpret_cast<void*>(ptr), size, MAP_FIXED);
    return fail(Errc::unknown, "{}: [{:#x}, +{:#x}) overlaps a range the driver already knows", api, ptr, size);
  }
  r->maps.emplace(ptr, std::move(m));
  return Errc::success;
}

Errc cuMemUnmap(CUdeviceptr ptr, size_t size) noexcept {
  const char* api = "cuMemUnmap";
  TRY(Driver::get().require_init(api));
  std::vector<std::shared_ptr<Mapping>> gone;  // destroyed after the lock is dropped
  std::lock_guard lk(st().m);
  Reservation* r = size ? reservation_of(ptr, size) : nullptr;
  if (!r)  // measured for an address never reserved
    return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) does not lie within one range reserved with "
                "cuMemAddressReserve", api, ptr, size);
  const uintptr_t end = ptr + size;
  auto it = r->maps.upper_bound(ptr);
  if (it != r->maps.begin()) --it;
  std::vector<std::map<uintptr_t, std::shared_ptr<Mapping>>::iterator> hit;
  for (; it != r->maps.end() && it->first < end; ++it) {
    const Mapping& m = *it->second;
    if (m.base + m.size <= ptr) continue;
    if (m.base < ptr || m.base + m.size > end)  // measured: whole mappings only
      return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) covers only part of the mapping [{:#x}, +{:#x}) of {}; "
                  "unmap whole mappings", api, ptr, size, m.base, m.size, m.alloc->describe());
    hit.push_back(it);
  }
  // Measured: a range with no mapping in it (never mapped, or unmapped already) is a success.
  for (auto& h : hit) {
    Mapping* m = h->second.get();
    AddressSpace::get().remove_base(m->base, [m](const Range& x) { return x.vmm.get() == m; });
    if (m->alloc->host_located())  // the user's view is reserved again (device memory's always was)
      reserve_pages(reinterpret_cast<void*>(m->base), m->size, MAP_FIXED);
    gone.push_back(std::move(h->second));
    r->maps.erase(h);
  }
  return Errc::success;
}

// ---- access --------------------------------------------------------------------------------
Errc cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) noexcept {
  const char* api = "cuMemSetAccess";
  TRY(Driver::get().require_init(api));
  TRY(need(desc, api, "desc"));  // measured
  if (count == 0)  // measured
    return fail(Errc::invalid_value, "{}: count is 0", api);
  std::lock_guard lk(st().m);
  Reservation* r = size ? reservation_of(ptr, size) : nullptr;
  if (!r)  // measured
    return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) does not lie within one range reserved with "
                "cuMemAddressReserve", api, ptr, size);
  // Measured (H100, difftest): a range whose last byte is not mapped is refused and changes
  // nothing; one that ends in a mapping may run through a gap (whole_mappings).
  if (auto m = mapping_at(ptr + size - 1); !m || m->res_base != r->base)
    return fail(Errc::invalid_value, "{}: [{:#x}, +{:#x}) ends in address space that is reserved but not mapped", api,
                ptr, size);
  std::vector<std::shared_ptr<Mapping>> ms;
  TRY(whole_mappings(*r, ptr, size, api, ms));  // measured: part of a mapping, or a gap -> INVALID_VALUE
  bool any_device = false;
  for (auto& m : ms) any_device |= !m->alloc->host_located();
  for (size_t i = 0; i < count; ++i) TRY(check_access_desc(desc[i], i, any_device, api));
  for (auto& m : ms) {
    for (size_t i = 0; i < count; ++i) {
      const auto f = static_cast<uint8_t>(desc[i].flags);
      if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE) m->dev_access[desc[i].location.id].store(f);
      else m->host_access.store(f);
    }
    if (m->alloc->host_located()) {
      const unsigned h = host_flags(*m);
      const int prot = h == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
                       : h == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
                                                               : PROT_NONE;
      if (::mprotect(reinterpret_cast<void*>(m->base), m->size, prot) != 0)
        return fail(Errc::unknown, "{}: cannot change the host's view of [{:#x}, +{:#x}) ({})", api, m->base, m->size,
                    std::strerror(errno));
    }
  }
  return Errc::success;
}

Errc cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) noexcept {
  const char* api = "cuMemGetAccess";
  TRY(Driver::get().require_init(api));
  TRY(need(flags, api, "flags"));  // measured
  TRY(need(location, api, "location"));
  const int t = static_cast<int>(location->type);
  if (t == CU_MEM_LOCATION_TYPE_DEVICE && (location->id < 0 || location->id >= ndev()))  // measured: checked first
    return fail(Errc::invalid_device, "{}: location->id {} is not a device ordinal", api, location->id);
  if (t != CU_MEM_LOCATION_TYPE_DEVICE && t != CU_MEM_LOCATION_TYPE_HOST && t != CU_MEM_LOCATION_TYPE_HOST_NUMA)
    return fail(Errc::invalid_value, "{}: location->type {} ({}) has no access to ask about (use DEVICE, HOST or "
                "HOST_NUMA)", api, t, mem::location_name(t));
  auto m = mapping_at(ptr);
  if (!m) {
    // Measured: a buffer mapped from external memory, managed memory and cuMemAlloc memory
    // answer with no access at all.
    if (RangePtr r = AddressSpace::get().find(ptr);
        r && (r->external || r->kind == Kind::managed || r->kind == Kind::device)) {
      *flags = 0;
      return Errc::success;
    }
    uintptr_t rb = 0;
    size_t rs = 0;
    if (vmm::reservation_at(ptr, rb, rs)) *flags = 0;  // measured: written before the refusal
    return fail(Errc::invalid_value, "{}: ptr = {:#x} lies in no cuMemMap mapping", api, ptr);  // measured
  }
  *flags = t == CU_MEM_LOCATION_TYPE_DEVICE ? m->device_access(location->id) : reported_host_flags(*m);
  return Errc::success;
}

// ---- shareable handles ---------------------------------------------------------------------
Errc cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                  CUmemAllocationHandleType handleType, unsigned long long flags) noexcept {
  const char* api = "cuMemExportToShareableHandle";
  TRY(Driver::get().require_init(api));
  TRY(need(shareableHandle, api, "shareableHandle"));
  if (flags != 0)  // measured
    return fail(Errc::invalid_value, "{}: flags must be 0 (got {:#x})", api, flags);
  AllocationPtr a;
  TRY(handle_arg(handle, api, a));
  const unsigned t = static_cast<unsigned>(handleType);
  if (t != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && t != CU_MEM_HANDLE_TYPE_FABRIC)  // measured for 0 and WIN32
    return fail(Errc::invalid_value, "{}: handleType {:#x} is not CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR (1) or "
                "CU_MEM_HANDLE_TYPE_FABRIC (8), the types Linux supports", api, t);
  if (!(static_cast<unsigned>(a->prop.requestedHandleTypes) & t))  // measured, both types
    return fail(Errc::invalid_value, "{}: {} was {} without handle type {:#x} in requestedHandleTypes ({:#x}); only "
                "types requested at cuMemCreate can be exported", api, a->describe(),
                a->imported ? "imported (imported handles report none)" : "created", t,
                static_cast<unsigned>(a->prop.requestedHandleTypes));
  if (t == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
    TRY(ipc::vouch(a->fd, api));  // importers prove that what they are handed is this memory
    // A new descriptor of the object each time, close-on-exec (measured: FD_CLOEXEC).
    int fd = ::fcntl(a->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
      return fail(Errc::out_of_memory, "{}: cannot duplicate the allocation's descriptor ({})", api,
                  std::strerror(errno));
    std::memcpy(shareableHandle, &fd, sizeof fd);
    return Errc::success;
  }
  const ipc::FdInfo info = ipc::describe_fd(a->fd);
  return ipc::fabric_export(a->fd, info, a->host_located() ? 0 : a->prop.location.id,
                            static_cast<unsigned char*>(shareableHandle), api);
}

Errc cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                    CUmemAllocationHandleType shHandleType) noexcept {
  const char* api = "cuMemImportFromShareableHandle";
  TRY(Driver::get().require_init(api));
  TRY(need(handle, api, "handle"));
  const unsigned t = static_cast<unsigned>(shHandleType);
  int fd = -1;
  ipc::FdInfo info;
  switch (t) {
    case CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: {
      // The osHandle is the descriptor itself; the caller keeps it (measured: not closed).
      // Measured: descriptor 0 is a NULL osHandle, INVALID_VALUE whatever it refers to.
      if (!osHandle) return fail(Errc::invalid_value, "{}: osHandle is NULL (descriptor 0)", api);
      const int in = static_cast<int>(reinterpret_cast<intptr_t>(osHandle));
      info = ipc::describe_import(in);
      // Measured: -1, a closed descriptor and a memfd no driver exported are all CUDA_ERROR_UNKNOWN.
      switch (info.what) {
        case ipc::FdInfo::What::bad_fd:
          return fail(Errc::unknown, "{}: osHandle = {} is not an open file descriptor", api, in);
        case ipc::FdInfo::What::not_memfd:
          return fail(Errc::unknown, "{}: descriptor {} is not a shareable allocation handle (it is not a memory "
                      "object exported with cuMemExportToShareableHandle)", api, in);
        case ipc::FdInfo::What::foreign_memfd:
          return fail(Errc::unknown, "{}: descriptor {} is a memfd (\"{}\") that no CUDA driver exported{}", api, in,
                      info.name, info.forged ? fmt::format(" (named like an exported allocation, but {})",
                                                           info.forged_why) : "");
        case ipc::FdInfo::What::ours: break;
      }
      fd = ::fcntl(in, F_DUPFD_CLOEXEC, 0);
      if (fd < 0)
        return fail(Errc::out_of_memory, "{}: cannot duplicate descriptor {} ({})", api, in, std::strerror(errno));
      break;
    }
    case CU_MEM_HANDLE_TYPE_FABRIC:
      TRY(need(osHandle, api, "osHandle"));
      TRY(ipc::fabric_import(static_cast<const unsigned char*>(osHandle), fd, info, api));
      break;
    case CU_MEM_HANDLE_TYPE_WIN32:
    case CU_MEM_HANDLE_TYPE_WIN32_KMT:  // measured for WIN32
      return fail(Errc::not_supported, "{}: Windows handles (type {:#x}) do not exist on Linux", api, t);
    default:  // measured for 0 and 0x10
      return fail(Errc::invalid_value, "{}: shHandleType {:#x} is not a CUmemAllocationHandleType (POSIX fd 1, "
                  "fabric 8)", api, t);
  }
  AllocationPtr a;
  TRY(adopt_object(fd, info, api, a));
  // Measured: every import makes a new handle, even of memory this process created.
  *handle = publish(a);
  return Errc::success;
}

}  // namespace cuda_shim::api

namespace cuda_shim::vmm {
size_t handle_count() { return api::st().handles.size(); }
size_t reservation_count() {
  std::lock_guard lk(api::st().m);
  return api::st().res.size();
}
void reservations(std::vector<ReservationView>& out) {
  std::lock_guard lk(api::st().m);
  for (auto& [base, r] : api::st().res) out.push_back({r.base, r.size, r.maps.size()});
}

AllocationPtr find_allocation(CUmemGenericAllocationHandle h) {
  std::lock_guard lk(api::st().m);
  return api::find_handle(h);
}

bool reservation_at(uintptr_t p, uintptr_t& base, size_t& size) {
  std::lock_guard lk(api::st().m);
  const api::Reservation* r = api::reservation_of(p, 1);
  if (!r) return false;
  base = r->base;
  size = r->size;
  return true;
}
}  // namespace cuda_shim::vmm
