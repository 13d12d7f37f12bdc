// Driver entries: logical endpoints (CUDA 13.3, cuLogicalEndpoint*). No GPU available to us runs
// them (they need a 13.3 driver), so every rule here is the driver API documentation's, named
// where it is applied; where the docs give no code the emulator answers CUDA_ERROR_INVALID_VALUE,
// the only argument code in 13.3's return lists (no INVALID_DEVICE, no INVALID_HANDLE there).
//  - Ids are per process: reserved in ranges, then associated with an endpoint by Create or
//    Import, back to reserved by Destroy. An id must be seen ready by cuLogicalEndpointQuery
//    before it binds or unbinds memory.
//  - Endpoints, their aliases (ids in every process), multicast teams and bindings are shared
//    between processes (ipc/endpoint_table.hpp). Construction takes time, as on hardware
//    (CUDA_SHIM_LE_BUILD_US, default 1000 µs from Create/Import, or from the last AddDevice
//    that completes a multicast team), so clients must poll Query.
//  - A binding keeps its own descriptor of the memory's memfd, so fabric accesses through the
//    endpoint (cuShimLogicalEndpointAccess) reach the bound bytes from any process holding it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/driver.hpp"
#include "ipc/endpoint_layout.hpp"
#include "ipc/endpoint_table.hpp"
#include "ipc/logical_endpoint.hpp"
#include "ipc/registry.hpp"
#include "memory/address_space.hpp"
#include "memory/pool.hpp"
#include "vmm/vmm.hpp"

namespace cuda_shim::ipc {
namespace {

constexpr uint64_t kBindAlignment = uint64_t(2) << 20;  // = the VMM granularity, which it must divide
constexpr uint64_t kCountedMaxSize = uint64_t(256) << 30;  // NCCL: "Counted LEs are limited to 256GB"
constexpr uint64_t kDefaultMaxSize = uint64_t(1) << 40;
constexpr uint32_t kFirstId = 0;

uint64_t env_u64(const char* name, uint64_t dflt) {
  const char* e = std::getenv(name);
  if (!e || !*e) return dflt;
  char* end = nullptr;
  unsigned long long v = std::strtoull(e, &end, 0);
  return *end ? dflt : v;
}
uint64_t build_ns() { return env_u64("CUDA_SHIM_LE_BUILD_US", 1000) * 1000; }
uint64_t max_ids() { return env_u64("CUDA_SHIM_LE_MAX_IDS", 65536); }
uint32_t bind_limit() { return static_cast<uint32_t>(env_u64("CUDA_SHIM_LE_BIND_LIMIT", 1024)); }

struct Id {
  bool assoc = false;
  uint32_t ep = 0;  // the shared endpoint (index, token)
  Token token;
  bool imported = false;
  bool ready_seen = false;  // a Query covering it answered ready
  uint32_t type = 0;
  int owner = -1;
  uint32_t ipc_types = 0;
};

struct Local {
  std::mutex m;
  std::map<uint32_t, Id> ids;  // every id this process reserved
  // Binding token -> our descriptor of the bound memory's file, and what keeps the bytes there
  // (memory carved from an arena: its extent, which the arena's descriptor alone does not hold).
  struct Bound {
    int fd = -1;
    std::shared_ptr<void> keep;
  };
  std::map<std::pair<uint64_t, uint64_t>, Bound> bind_fds;
};
Local& local() {
  static auto* l = new Local();  // leaked: worker threads may outlive main()
  return *l;
}

std::pair<uint64_t, uint64_t> key(const Token& t) { return {t.hi, t.lo}; }

void close_bindings(Local& L, const std::vector<le::Binding>& gone) {
  for (auto& b : gone)
    if (auto it = L.bind_fds.find(key(b.token)); it != L.bind_fds.end()) {
      ::close(it->second.fd);
      L.bind_fds.erase(it);
    }
}

Errc available(const char* api) {
  TRY(Driver::get().require_init(api));
  if (Driver::get().driver_version() < 13030)
    return fail(Errc::not_supported, "{}: logical endpoints exist from driver 13.3 (13030); this emulated driver "
                "reports {} (CUDA_SHIM_DRIVER_VERSION), where cuGetProcAddress does not offer them", api,
                Driver::get().driver_version());
  return Errc::success;
}

// The system conditions the docs name for binds, unbinds, queries and limits, injectable:
// CUDA_SHIM_LE_FAULT=illegal_state (an illegal system configuration) and, for endpoints that
// travel over the fabric, CUDA_SHIM_IMEX_DAEMON=not_ready (SYSTEM_NOT_READY).
Errc system_state(const char* api, bool fabric) {
  if (const char* f = std::getenv("CUDA_SHIM_LE_FAULT"); f && std::strcmp(f, "illegal_state") == 0)
    return fail(Errc::illegal_state, "{}: the system configuration is in an illegal state (simulated by "
                "CUDA_SHIM_LE_FAULT=illegal_state); verify the configuration and that the driver daemons run", api);
  if (fabric)
    if (const char* d = std::getenv("CUDA_SHIM_IMEX_DAEMON"); d && std::strcmp(d, "not_ready") == 0)
      return fail(Errc::system_not_ready, "{}: the IMEX daemon is not running (simulated by CUDA_SHIM_IMEX_DAEMON="
                  "not_ready); endpoints shared over the fabric need it", api);
  return Errc::success;
}

bool valid_device(int dev) { return dev >= 0 && dev < Driver::get().device_count(); }

// The checks GetLimits and Create share on a CUlogicalEndpointProp.
Errc check_prop(const CUlogicalEndpointProp& p, const char* api) {
  if (p.type == CU_LOGICAL_ENDPOINT_TYPE_UNICAST) {
    if (!valid_device(p.unicast.device))
      return fail(Errc::invalid_value, "{}: prop->unicast.device {} is not a device (this emulator has {}); 13.3 "
                  "answers bad devices with CUDA_ERROR_INVALID_VALUE", api, p.unicast.device,
                  Driver::get().device_count());
  } else if (p.type == CU_LOGICAL_ENDPOINT_TYPE_MULTICAST) {
    unsigned n = p.multicast.numDevices;
    int have = Driver::get().device_count();
    if (n == 0 || n > kEndpointTeamMax || static_cast<int>(n) > have)
      return fail(Errc::invalid_value, "{}: prop->multicast.numDevices {} cannot form a team: between 1 and the "
                  "devices that can join ({} on this emulated machine, each joins once)", api, n,
                  std::min<int>(have, kEndpointTeamMax));
  } else {
    return fail(Errc::invalid_value, "{}: prop->type {} is not CU_LOGICAL_ENDPOINT_TYPE_UNICAST (1) or _MULTICAST "
                "(2)", api, static_cast<int>(p.type));
  }
  if (p.ipcHandleTypes & ~unsigned(CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC))
    return fail(Errc::invalid_value, "{}: prop->ipcHandleTypes {:#x} has bits no CUlogicalEndpointIpcHandleType "
                "defines (only CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC = 1)", api, p.ipcHandleTypes);
  if (p.flags & ~unsigned(CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS))
    return fail(Errc::invalid_value, "{}: prop->flags {:#x} has bits no CUlogicalEndpointFlag defines (only "
                "CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS = 1)", api, p.flags);
  return Errc::success;
}

uint64_t max_size(const CUlogicalEndpointProp& p) {
  uint64_t m = env_u64("CUDA_SHIM_LE_MAX_SIZE", kDefaultMaxSize) / kBindAlignment * kBindAlignment;
  if (p.flags & CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS) m = std::min(m, kCountedMaxSize);
  return m;
}

// The id, associated with an endpoint; INVALID_VALUE otherwise. L.m held.
Errc associated(Local& L, uint32_t le_id, const char* api, Id*& out) {
  auto it = L.ids.find(le_id);
  if (it == L.ids.end())
    return fail(Errc::invalid_value, "{}: logical endpoint id {} is not reserved by this process "
                "(cuLogicalEndpointIdReserve)", api, le_id);
  if (!it->second.assoc)
    return fail(Errc::invalid_value, "{}: logical endpoint id {} is reserved but names no endpoint (associate it with "
                "cuLogicalEndpointCreate or cuLogicalEndpointImport)", api, le_id);
  out = &it->second;
  return Errc::success;
}

// The id, reserved and not associated (what Create and Import associate); INVALID_VALUE
// otherwise. L.m held.
Errc unassociated(Local& L, uint32_t le_id, const char* api, Id*& out) {
  auto it = L.ids.find(le_id);
  if (it == L.ids.end())
    return fail(Errc::invalid_value, "{}: id {} is not reserved by this process (cuLogicalEndpointIdReserve)", api,
                le_id);
  if (it->second.assoc)
    return fail(Errc::invalid_value, "{}: id {} is already associated with a logical endpoint; destroy it first, or "
                "use another reserved, unused id", api, le_id);
  out = &it->second;
  return Errc::success;
}

Errc endpoint_of(const Id& id, uint32_t le_id, const char* api, le::Endpoint& e) {
  if (!le::get(id.ep, id.token, e))
    return fail(Errc::invalid_value, "{}: the endpoint of id {} no longer exists", api, le_id);
  return Errc::success;
}

Errc aligned(uint64_t v, const char* api, const char* what) {
  if (v % kBindAlignment == 0) return Errc::success;
  return fail(Errc::invalid_value, "{}: {} {:#x} is not a multiple of bindAlignment {:#x} "
              "(cuLogicalEndpointGetLimits)", api, what, v, kBindAlignment);
}

// What a bind call binds: the memfd, where the memory starts in it, its location and
// whether it is externally shareable.
struct Memory {
  int fd = -1;  // not owned
  uint64_t obj_offset = 0;
  uint64_t avail = 0;  // bytes from the bound start to the allocation's end
  CUmemLocationType loc = CU_MEM_LOCATION_TYPE_INVALID;
  int loc_id = 0;
  bool fabric = false;
  uint32_t kind = 0;
  std::string what;
  mem::PoolPtr pool;       // keeps the pool (and its descriptor) alive until dup'ed
  vmm::AllocationPtr alloc;
};

Errc memory_of_handle(CUmemGenericAllocationHandle h, Memory& m, const char* api) {
  m.alloc = vmm::find_allocation(h);
  if (!m.alloc)
    return fail(Errc::invalid_value, "{}: memHandle {:#x} is not a live cuMemCreate allocation handle", api, h);
  m.fd = m.alloc->object_fd();
  m.obj_offset = m.alloc->object_offset();
  m.avail = m.alloc->size;
  m.loc = m.alloc->prop.location.type;
  m.loc_id = m.alloc->prop.location.id;
  m.fabric = (m.alloc->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
  m.kind = 1;
  m.what = m.alloc->describe();
  return Errc::success;
}

Errc memory_of_address(uintptr_t p, Memory& m, const char* api) {
  mem::RangePtr r = mem::AddressSpace::get().find(p);
  if (r && r->kind == mem::Kind::vmm && r->vmm) {
    const vmm::Mapping& mp = *r->vmm;
    m.alloc = mp.alloc;
    m.fd = m.alloc->object_fd();
    m.obj_offset = m.alloc->object_offset() + (p - mp.base);
    m.avail = mp.base + mp.size - p;
    m.loc = m.alloc->prop.location.type;
    m.loc_id = m.alloc->prop.location.id;
    m.fabric = (m.alloc->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
    m.kind = 2;
    m.what = fmt::format("the cuMemMap mapping at {:#x} of {}", mp.base, m.alloc->describe());
    return Errc::success;
  }
  mem::PoolAlloc pa;
  if (r && r->kind == mem::Kind::pool && r->pool && r->pool->lookup(p, pa)) {
    m.pool = r->pool;
    if (m.pool->managed())
      return fail(Errc::invalid_value, "{}: {:#x} is managed memory ({}); endpoints bind device or host-NUMA memory "
                  "from cuMemCreate or cudaMallocAsync", api, p, m.pool->describe());
    uint64_t window_at = 0;
    TRY(m.pool->backing_fd(m.fd, window_at, api));
    m.obj_offset = window_at + (p - m.pool->window_base());
    m.avail = pa.base + pa.size - p;
    m.loc = m.pool->props().loc_type;
    m.loc_id = m.pool->props().loc_id;
    m.fabric = (m.pool->props().handle_types & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
    m.kind = 3;
    m.what = fmt::format("the allocation at {:#x} of {}", pa.base, m.pool->describe());
    return Errc::success;
  }
  return fail(Errc::invalid_value, "{}: ptr {:#x} is {}; the memory must have been allocated via cuMemCreate (and "
              "mapped) or cudaMallocAsync", api, p,
              r ? fmt::format("{} memory", mem::kind_name(r->kind)) : std::string("no memory the driver knows"));
}

Errc bind_common(uint32_t le_id, int dev, uint64_t offset, uint64_t size, unsigned long long flags, Memory& m,
                 uint64_t what, const char* api) {
  TRY(available(api));
  Local& L = local();
  std::lock_guard lk(L.m);
  Id* id = nullptr;
  TRY(associated(L, le_id, api, id));
  le::Endpoint e;
  TRY(endpoint_of(*id, le_id, api, e));
  TRY(system_state(api, (e.ipc_types & CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) || id->imported));
  if (flags != 0) return fail(Errc::invalid_value, "{}: flags {:#x} must be zero for now", api, flags);
  // Documented code: "CUDA_ERROR_INVALID_VALUE if cuLogicalEndpointQuery has not been called for
  // the logical endpoint to ensure that the endpoint is ready for memory binding".
  if (!id->ready_seen)
    return fail(Errc::invalid_value, "{}: id {} was not seen ready: call cuLogicalEndpointQuery on it until it "
                "reports a non-zero status before binding memory", api, le_id);
  if (!valid_device(dev))
    return fail(Errc::invalid_value, "{}: dev {} is not a device", api, dev);
  if (e.type == CU_LOGICAL_ENDPOINT_TYPE_UNICAST) {
    if (id->imported)
      return fail(Errc::invalid_value, "{}: id {} is an imported unicast endpoint; imported unicast endpoints cannot "
                  "be bound to any memory (only their owner binds)", api, le_id);
    if (dev != e.owner)
      return fail(Errc::invalid_value, "{}: dev {} is not the owner of this unicast endpoint (device {}, "
                  "CUlogicalEndpointProp::unicast.device)", api, dev, e.owner);
  } else {
    if (!e.team_full())
      return fail(Errc::invalid_value, "{}: the multicast team has {} of {} devices; all devices must be added "
                  "before any memory can be bound", api, e.team.size(), e.num_devices);
    if (std::find(e.team.begin(), e.team.end(), dev) == e.team.end())
      return fail(Errc::invalid_value, "{}: dev {} was not added to this multicast endpoint's team "
                  "(cuLogicalEndpointAddDevice)", api, dev);
  }
  if (size == 0) return fail(Errc::invalid_value, "{}: size is 0", api);
  TRY(aligned(offset, api, "offset"));
  TRY(aligned(size, api, "size"));
  if (offset > e.size || size > e.size - offset)
    return fail(Errc::invalid_value, "{}: size + offset ({:#x} + {:#x}) is larger than the logical endpoint ({:#x})",
                api, size, offset, e.size);
  if (size > m.avail)
    return fail(Errc::invalid_value, "{}: size {:#x} is larger than the allocated memory ({:#x} bytes of {} from the "
                "bound start)", api, size, m.avail, m.what);
  // Location: device memory of dev, or host-NUMA memory of the node closest to dev.
  Device& d = Driver::get().dev(dev);
  if (m.loc == CU_MEM_LOCATION_TYPE_DEVICE) {
    if (m.loc_id != dev)
      return fail(Errc::invalid_value, "{}: {} is device {}'s memory; binding it on dev {} needs memory created on "
                  "that device", api, m.what, m.loc_id, dev);
  } else if (m.loc == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
    if (m.loc_id != d.cfg.numa_id)
      return fail(Errc::invalid_value, "{}: {} lies on host NUMA node {}; host-NUMA memory must be on the node "
                  "closest to dev {} (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = {})", api, m.what, m.loc_id, dev,
                  d.cfg.numa_id);
  } else {
    return fail(Errc::invalid_value, "{}: {} is located at {}; endpoints bind device memory "
                "(CU_MEM_LOCATION_TYPE_DEVICE) or host NUMA memory (CU_MEM_LOCATION_TYPE_HOST_NUMA)", api, m.what,
                mem::location_name(m.loc));
  }
  bool shareable = (e.ipc_types & CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) != 0;
  if ((shareable || (id->imported && e.type == CU_LOGICAL_ENDPOINT_TYPE_MULTICAST)) && !m.fabric)
    return fail(Errc::invalid_value, "{}: {} is not externally shareable; {} endpoints bind only memory made with "
                "CU_MEM_HANDLE_TYPE_FABRIC (a cuMemCreate requestedHandleTypes or a pool's handleTypes)", api, m.what,
                shareable ? "externally shareable (ipcHandleTypes FABRIC)" : "imported multicast");
  int fd = ::fcntl(m.fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return fail(Errc::out_of_memory, "{}: no descriptor left to hold the bound memory", api);
  FdInfo info = describe_fd(fd);
  le::Binding b;
  b.dev = dev;
  b.le_id = le_id;
  b.mem_kind = m.kind;
  b.offset = offset;
  b.size = size;
  b.fd = fd;
  b.fabric = m.fabric;
  b.fdev = info.dev;
  b.ino = info.ino;
  b.obj_offset = m.obj_offset;
  b.what = what;
  if (Errc r = le::bind(id->ep, id->token, b, bind_limit(), api); r != Errc::success) {
    ::close(fd);
    return r;
  }
  L.bind_fds[key(b.token)] = Local::Bound{fd, m.alloc ? m.alloc->keep_bytes() : nullptr};
  return Errc::success;
}

// A fabric handle's bytes: magic, layout version, the endpoint's token (128 random bits).
struct HandleBytes {
  uint32_t magic;  // "CSLE"
  uint32_t version;
  Token token;
  uint8_t pad[64 - 8 - 16];
};
static_assert(sizeof(HandleBytes) == 64);
constexpr uint32_t kHandleMagic = 0x454c5343u;

// Export and import need the IMEX daemon and a channel; a daemon that is down cannot serve
// the handle (NOT_SUPPORTED: these two calls do not list SYSTEM_NOT_READY).
Errc fabric_access(const char* api, int& channel) {
  Errc e = imex_channel(api, channel);
  if (e == Errc::system_not_ready)
    return fail(Errc::not_supported, "{}: the handle cannot be served: the IMEX daemon is not running (simulated by "
                "CUDA_SHIM_IMEX_DAEMON=not_ready)", api);
  return e;
}

}  // namespace

Errc endpoint_access(uint32_t le_id, int dev, uint64_t offset, void* buf, uint64_t size, bool write,
                     const char* api) {
  TRY(available(api));
  TRY(need(buf, api, "buf"));
  Local& L = local();
  std::unique_lock lk(L.m);
  Id* id = nullptr;
  TRY(associated(L, le_id, api, id));
  if (!id->ready_seen)
    return fail(Errc::invalid_value, "{}: id {} was not seen ready by cuLogicalEndpointQuery; fabric operations on it "
                "are undefined behaviour on hardware", api, le_id);
  le::Endpoint e;
  TRY(endpoint_of(*id, le_id, api, e));
  std::vector<int> devs;
  if (e.type == CU_LOGICAL_ENDPOINT_TYPE_UNICAST) {
    if (dev != -1 && dev != e.owner)
      return fail(Errc::invalid_value, "{}: a unicast endpoint reaches its owner's memory (device {}), not dev {}", api,
                  e.owner, dev);
    devs.push_back(e.owner);
  } else if (dev == -1) {
    if (!write)
      return fail(Errc::invalid_value, "{}: reading a multicast endpoint names the team device whose replica to read",
                  api);
    devs = e.team;
  } else {
    if (std::find(e.team.begin(), e.team.end(), dev) == e.team.end())
      return fail(Errc::invalid_value, "{}: dev {} is not in this multicast endpoint's team", api, dev);
    devs.push_back(dev);
  }
  lk.unlock();
  if (size == 0 || offset > e.size || size > e.size - offset)
    return fail(Errc::invalid_value, "{}: [{:#x}, {:#x}) is not inside the endpoint ({:#x} bytes)", api, offset,
                offset + size, e.size);
  for (int d : devs) {
    std::vector<le::Binding> bs = le::bindings(e.index, e.token, d);
    uint64_t at = offset, end = offset + size;
    for (auto& b : bs) {
      if (b.offset + b.size <= at) continue;
      if (b.offset > at) break;
      uint64_t n = std::min(end, b.offset + b.size) - at;
      // Through open_peer_object even for our own bindings: its inode check makes a descriptor an
      // unbind on another thread closed (and the number reused) fail instead of hitting a
      // stranger's file.
      int fd = open_peer_object(b.pid, b.fd, b.fdev, b.ino);
      if (fd < 0) break;
      char* p = static_cast<char*>(buf) + (at - offset);
      off_t o = static_cast<off_t>(b.obj_offset + (at - b.offset));
      ssize_t got = write ? ::pwrite(fd, p, n, o) : ::pread(fd, p, n, o);
      ::close(fd);
      if (got != static_cast<ssize_t>(n)) break;
      at += n;
      if (at == end) break;
    }
    if (at != end)
      return fail(Errc::invalid_value, "{}: nothing is bound at offset {:#x} on device {}; fabric operations are only "
                  "valid on bound ranges", api, at, d);
  }
  return Errc::success;
}

std::string endpoint_state() { return le::dump(); }

}  // namespace cuda_shim::ipc

namespace cuda_shim::api {
using ipc::Id;
using ipc::local;

Errc cuLogicalEndpointIdReserve(CUlogicalEndpointId* baseLeId, cuuint32_t count) noexcept {
  const char* api = "cuLogicalEndpointIdReserve";
  TRY(ipc::available(api));
  TRY(need(baseLeId, api, "baseLeId"));
  if (count == 0) return fail(Errc::invalid_value, "{}: count is 0; reserve at least one id", api);
  auto& L = local();
  std::lock_guard lk(L.m);
  // The lowest free run of `count` ids: the base is the driver's choice, never the caller's.
  uint64_t limit = uint64_t(ipc::kFirstId) + ipc::max_ids();
  uint64_t base = ipc::kFirstId;
  for (auto& [idv, st] : L.ids) {
    if (idv >= base + count) break;
    base = uint64_t(idv) + 1;
  }
  if (base + count > limit)
    return fail(Errc::out_of_memory, "{}: no run of {} free logical endpoint ids is left (this process holds {} of "
                "{}, CUDA_SHIM_LE_MAX_IDS)", api, count, L.ids.size(), ipc::max_ids());
  for (uint64_t i = base; i < base + count; ++i) L.ids.emplace(static_cast<uint32_t>(i), Id{});
  *baseLeId = static_cast<CUlogicalEndpointId>(base);
  return Errc::success;
}

Errc cuLogicalEndpointIdRelease(CUlogicalEndpointId baseLeId, cuuint32_t count) noexcept {
  const char* api = "cuLogicalEndpointIdRelease";
  TRY(ipc::available(api));
  if (count == 0) return fail(Errc::invalid_value, "{}: count is 0", api);
  auto& L = local();
  std::lock_guard lk(L.m);
  for (uint64_t i = baseLeId; i < uint64_t(baseLeId) + count; ++i) {
    auto it = L.ids.find(static_cast<uint32_t>(i));
    if (i > UINT32_MAX || it == L.ids.end())
      return fail(Errc::invalid_value, "{}: id {} of [{}, {}) was never reserved by this process; the whole range must "
                  "be reserved", api, i, baseLeId, uint64_t(baseLeId) + count);
    if (it->second.assoc)
      return fail(Errc::invalid_value, "{}: id {} is still associated with a logical endpoint; every endpoint in the "
                  "range must be destroyed (cuLogicalEndpointDestroy) before its ids are released", api, i);
  }
  for (uint64_t i = baseLeId; i < uint64_t(baseLeId) + count; ++i) L.ids.erase(static_cast<uint32_t>(i));
  return Errc::success;
}

Errc cuLogicalEndpointGetLimits(cuuint64_t* bindAlignment, cuuint64_t* maxSize,
                                const CUlogicalEndpointProp* prop) noexcept {
  const char* api = "cuLogicalEndpointGetLimits";
  TRY(ipc::available(api));
  TRY(need(bindAlignment, api, "bindAlignment"));
  TRY(need(maxSize, api, "maxSize"));
  TRY(need(prop, api, "prop"));
  TRY(ipc::check_prop(*prop, api));
  TRY(ipc::system_state(api, prop->ipcHandleTypes & CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC));
  // prop->size is not checked: "If maxSize is less than CUlogicalEndpointProp::size the user must
  // adjust the request to the smaller value".
  *bindAlignment = ipc::kBindAlignment;
  *maxSize = ipc::max_size(*prop);
  return Errc::success;
}

Errc cuLogicalEndpointCreate(CUlogicalEndpointId leId, const CUlogicalEndpointProp* prop) noexcept {
  const char* api = "cuLogicalEndpointCreate";
  TRY(ipc::available(api));
  TRY(need(prop, api, "prop"));
  TRY(ipc::check_prop(*prop, api));
  if (prop->size == 0) return fail(Errc::invalid_value, "{}: prop->size is 0", api);
  if (prop->size % ipc::kBindAlignment)
    return fail(Errc::invalid_value, "{}: prop->size {:#x} is not a multiple of bindAlignment {:#x} "
                "(cuLogicalEndpointGetLimits)", api, prop->size, ipc::kBindAlignment);
  if (uint64_t max = ipc::max_size(*prop); prop->size > max)
    return fail(Errc::invalid_value, "{}: prop->size {:#x} exceeds maxSize {:#x} for these properties "
                "(cuLogicalEndpointGetLimits); split the range over several endpoints", api, prop->size, max);
  auto& L = local();
  std::lock_guard lk(L.m);
  Id* slot = nullptr;
  TRY(ipc::unassociated(L, leId, api, slot));
  ipc::le::Endpoint e;
  e.type = prop->type;
  e.owner = prop->type == CU_LOGICAL_ENDPOINT_TYPE_UNICAST ? prop->unicast.device : -1;
  e.num_devices = prop->type == CU_LOGICAL_ENDPOINT_TYPE_MULTICAST ? prop->multicast.numDevices : 1;
  e.size = prop->size;
  e.ipc_types = prop->ipcHandleTypes;
  e.flags = prop->flags;
  int ch = -1;
  if (ipc::imex_channel(api, ch) != Errc::success) {
    clear_explanation();
    ch = -1;
  }
  e.channel = ch;
  // Unicast construction starts now; a multicast endpoint's when its team is complete.
  TRY(ipc::le::create(e, leId, e.type == CU_LOGICAL_ENDPOINT_TYPE_UNICAST, ipc::build_ns(), api));
  Id& id = *slot;
  id = Id{};
  id.assoc = true;
  id.ep = e.index;
  id.token = e.token;
  id.type = e.type;
  id.owner = e.owner;
  id.ipc_types = e.ipc_types;
  return Errc::success;
}

Errc cuLogicalEndpointAddDevice(CUlogicalEndpointId leId, CUdevice dev) noexcept {
  const char* api = "cuLogicalEndpointAddDevice";
  TRY(ipc::available(api));
  auto& L = local();
  std::lock_guard lk(L.m);
  Id* id = nullptr;
  TRY(ipc::associated(L, leId, api, id));
  if (id->type != CU_LOGICAL_ENDPOINT_TYPE_MULTICAST)
    return fail(Errc::invalid_value, "{}: id {} is a unicast endpoint; only multicast endpoints take devices (a "
                "unicast endpoint's device is its owner, given at creation)", api, leId);
  if (!ipc::valid_device(dev))
    return fail(Errc::invalid_value, "{}: dev {} is not a device (this emulator has {})", api, dev,
                Driver::get().device_count());
  return ipc::le::add_device(id->ep, id->token, dev, ipc::build_ns(), api);
}

Errc cuLogicalEndpointDestroy(CUlogicalEndpointId leId) noexcept {
  const char* api = "cuLogicalEndpointDestroy";
  TRY(ipc::available(api));
  auto& L = local();
  std::lock_guard lk(L.m);
  Id* id = nullptr;
  TRY(ipc::associated(L, leId, api, id));
  ipc::close_bindings(L, ipc::le::drop_alias(id->ep, id->token, leId));
  *id = Id{};  // reserved again: reusable at once by Create or Import
  return Errc::success;
}

Errc cuLogicalEndpointBindAddr(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset, void* ptr, cuuint64_t size,
                               unsigned long long flags) noexcept {
  const char* api = "cuLogicalEndpointBindAddr";
  TRY(ipc::available(api));
  auto p = reinterpret_cast<uintptr_t>(ptr);
  ipc::Memory m;
  // The cheap argument checks come first, so that a bad offset is named before the memory.
  TRY(ipc::aligned(p, api, "ptr"));
  TRY(ipc::memory_of_address(p, m, api));
  return ipc::bind_common(leId, dev, offset, size, flags, m, p, api);
}

Errc cuLogicalEndpointBindMem(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset,
                              CUmemGenericAllocationHandle memHandle, cuuint64_t memOffset, cuuint64_t size,
                              unsigned long long flags) noexcept {
  const char* api = "cuLogicalEndpointBindMem";
  TRY(ipc::available(api));
  ipc::Memory m;
  TRY(ipc::aligned(memOffset, api, "memOffset"));
  TRY(ipc::memory_of_handle(memHandle, m, api));
  if (memOffset > m.avail)
    return fail(Errc::invalid_value, "{}: memOffset {:#x} lies past the end of {} ({:#x} bytes)", api, memOffset,
                m.what, m.avail);
  m.obj_offset += memOffset;  // from where the allocation starts in its file
  m.avail -= memOffset;
  return ipc::bind_common(leId, dev, offset, size, flags, m, memHandle, api);
}

Errc cuLogicalEndpointUnbind(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset, cuuint64_t size) noexcept {
  const char* api = "cuLogicalEndpointUnbind";
  TRY(ipc::available(api));
  auto& L = local();
  std::lock_guard lk(L.m);
  Id* id = nullptr;
  TRY(ipc::associated(L, leId, api, id));
  TRY(ipc::system_state(api, (id->ipc_types & CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC) || id->imported));
  if (!id->ready_seen)
    return fail(Errc::invalid_value, "{}: id {} was not seen ready: cuLogicalEndpointQuery must report it ready "
                "before memory is unbound", api, leId);
  if (!ipc::valid_device(dev)) return fail(Errc::invalid_value, "{}: dev {} is not a device", api, dev);
  if (size == 0) return fail(Errc::invalid_value, "{}: size is 0", api);
  TRY(ipc::aligned(offset, api, "offset"));
  TRY(ipc::aligned(size, api, "size"));
  std::vector<ipc::le::Binding> gone;
  TRY(ipc::le::unbind(id->ep, id->token, dev, offset, size, gone, api));
  ipc::close_bindings(L, gone);
  return Errc::success;
}

Errc cuLogicalEndpointExport(void* handle, CUlogicalEndpointId leId, CUlogicalEndpointIpcHandleType handleType) noexcept {
  const char* api = "cuLogicalEndpointExport";
  TRY(ipc::available(api));
  TRY(need(handle, api, "handle"));
  if (handleType != CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC)
    return fail(Errc::invalid_value, "{}: handleType {} is not CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC (1), the "
                "only exportable type", api, static_cast<int>(handleType));
  auto& L = local();
  std::lock_guard lk(L.m);
  Id* id = nullptr;
  TRY(ipc::associated(L, leId, api, id));
  if (!(id->ipc_types & CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC))
    return fail(Errc::invalid_value, "{}: id {}'s endpoint was created without CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_"
                "FABRIC in CUlogicalEndpointProp::ipcHandleTypes; export requests a type the endpoint allows", api,
                leId);
  int ch = -1;
  TRY(ipc::fabric_access(api, ch));
  ipc::le::Endpoint e;
  TRY(ipc::endpoint_of(*id, leId, api, e));
  if (e.channel != ch)
    return fail(Errc::not_permitted, "{}: the endpoint was created on IMEX channel {} and this process holds channel "
                "{}", api, e.channel, ch);
  ipc::HandleBytes b{};
  b.magic = ipc::kHandleMagic;
  b.version = ipc::kLayoutVersion;
  b.token = id->token;
  std::memcpy(handle, &b, sizeof b);
  ipc::le::mark_exported(id->ep, id->token);
  return Errc::success;
}

Errc cuLogicalEndpointImport(CUlogicalEndpointId leId, const void* handle,
                             CUlogicalEndpointIpcHandleType handleType) noexcept {
  const char* api = "cuLogicalEndpointImport";
  TRY(ipc::available(api));
  TRY(need(handle, api, "handle"));
  if (handleType != CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC)
    return fail(Errc::invalid_value, "{}: handleType {} is not CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC (1)", api,
                static_cast<int>(handleType));
  auto& L = local();
  std::lock_guard lk(L.m);
  Id* slot = nullptr;
  TRY(ipc::unassociated(L, leId, api, slot));
  ipc::HandleBytes b;
  std::memcpy(&b, handle, sizeof b);
  int ch = -1;
  Errc access = ipc::fabric_access(api, ch);
  if (access == Errc::not_supported) return access;
  if (b.magic != ipc::kHandleMagic || b.version != ipc::kLayoutVersion)
    return fail(Errc::not_supported, "{}: this process cannot support the logical endpoint described by the handle: "
                "its bytes are not a logical endpoint fabric handle (altered, or from another emulator version)", api);
  if (access != Errc::success) return ipc::fabric_access(api, ch);  // re-records NOT_PERMITTED's reason
  ipc::le::Endpoint e;
  TRY(ipc::le::import(b.token, leId, ipc::build_ns(), ch, e, api));
  Id& id = *slot;
  id = Id{};
  id.assoc = true;
  id.ep = e.index;
  id.token = e.token;
  id.imported = true;
  id.type = e.type;
  id.owner = e.owner;
  id.ipc_types = e.ipc_types;
  return Errc::success;
}

Errc cuLogicalEndpointQuery(CUlogicalEndpointId leId, cuuint32_t count, int* queryStatus) noexcept {
  const char* api = "cuLogicalEndpointQuery";
  TRY(ipc::available(api));
  TRY(need(queryStatus, api, "queryStatus"));
  if (count == 0) return fail(Errc::invalid_value, "{}: count is 0", api);
  auto& L = local();
  std::lock_guard lk(L.m);
  std::vector<Id*> ids;
  bool fabric = false;
  for (uint64_t i = leId; i < uint64_t(leId) + count; ++i) {
    Id* id = nullptr;
    if (i > UINT32_MAX)
      return fail(Errc::invalid_value, "{}: [{}, {}) runs past the last id", api, leId, uint64_t(leId) + count);
    TRY(ipc::associated(L, static_cast<uint32_t>(i), api, id));
    fabric = fabric || id->imported || (id->ipc_types & CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
    ids.push_back(id);
  }
  TRY(ipc::system_state(api, fabric));
  std::vector<ipc::le::AliasRef> pending;  // ids not yet seen ready
  for (size_t k = 0; k < ids.size(); ++k)
    if (!ids[k]->ready_seen) pending.push_back({ids[k]->ep, ids[k]->token, leId + static_cast<uint32_t>(k)});
  bool all = pending.empty() || ipc::le::ready(pending, ipc::le::now_ns());
  if (all)
    for (Id* id : ids) id->ready_seen = true;
  *queryStatus = all ? 1 : 0;
  return Errc::success;
}

}  // namespace cuda_shim::api
