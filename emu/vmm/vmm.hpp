// Virtual memory management (cuMemCreate / cuMemAddressReserve / cuMemMap / cuMemSetAccess ...),
// shaped after NVIDIA's driver 580 (measured on an H100; emu/vmm/api_vmm.cpp names each rule).
//  - An Allocation is physical memory. Requested with a shareable handle type (POSIX fd,
//    fabric) or imported, it is one shareable memfd (ipc::ObjectKind::vmm) whose name carries
//    the properties an importer needs; without one it can never be exported, and is carved
//    from the memory arenas (memory/arena.hpp) like cuMemAlloc memory: no descriptor, no
//    memfd_create, and its pages punched out when it dies. Its handle (the CUmemGenericAllocationHandle)
//    is reference counted: cuMemCreate / import / cuMemRetainAllocationHandle add one,
//    cuMemRelease drops one. The memory itself lives while the handle or any mapping does.
//  - A Reservation is PROT_NONE address space from cuMemAddressReserve (vmm/address_heap.hpp),
//    with a same-sized Shadow: the emulator's read-write twin. A Mapping places a whole
//    Allocation in the shadow (MAP_FIXED of its file at its offset). The user's view of
//    device-located memory stays the reservation's own PROT_NONE pages (host code faults, as
//    on a GPU; nothing reads through it); host-located memory is mapped there too, read-write once
//    cuMemSetAccess grants access; the shadow is always read-write, and contiguous across
//    adjacent mappings, so one copy may span several mappings of a reservation as on a GPU.
//  - Each mapping is a mem::Range (Kind::vmm) in the AddressSpace, so copies, fills and
//    pointer queries find it; copies check the mapping's access flags.
#pragma once
#include <cuda.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "core/limits.hpp"
#include "core/errc.hpp"
#include "platform/shareable.hpp"
#include "memory/backing.hpp"
#include "vmm/address_heap.hpp"

namespace cuda_shim::vmm {

constexpr size_t kGranularity = size_t(2) << 20;  // measured: minimum = recommended, every location

struct Allocation {
  CUmemAllocationProp prop{};  // as cuMemGetAllocationPropertiesFromHandle reports it
  size_t size = 0;
  int fd = -1;                 // the shareable memfd (owned), or -1 when carved
  std::shared_ptr<mem::Backing> carved;  // no shareable handle type: arena memory
  ipc::Token token;            // the shareable object's identity
  bool imported = false;
  int charged_dev = -1;        // device memory accounting (cuMemGetInfo); -1: none
  uint64_t block_id = 0;       // CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID
  int handle_refs = 0;         // guarded by the VMM state lock; 0: the handle is dead

  Allocation() = default;
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation();
  bool host_located() const { return prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE; }
  // The file holding the bytes and where they start in it: what a mapping or a binding maps.
  int object_fd() const { return fd >= 0 ? fd : carved->object_fd(); }
  uint64_t object_offset() const { return fd >= 0 ? 0 : carved->object_offset(); }
  // What keeps the bytes alive for a holder of object_fd(): a dup of an own memfd does by
  // itself; arena memory needs its extent held (null when the descriptor suffices).
  std::shared_ptr<void> keep_bytes() const { return carved; }
  // Never an earlier allocation's handle (the address could be): a released handle stays dead.
  const uintptr_t id = reinterpret_cast<uintptr_t>(registry_fresh_handle());
  CUmemGenericAllocationHandle handle() const { return id; }
  std::string describe() const;  // for explanations
};
using AllocationPtr = std::shared_ptr<Allocation>;

struct Mapping;

// The read-write twin of one reservation. A mapping's piece of it is restored to PROT_NONE
// only when the Mapping object dies (after copies in flight that hold it), only if no newer
// mapping has taken the spot since, and only for memory with a memfd of its own (a view of
// arena memory holds nothing alive, and is left for the next mapping there to replace).
struct Shadow {
  char* base = nullptr;
  size_t size = 0;
  VaRange va;  // where base came from (given back when the shadow dies)
  std::mutex m;
  std::map<size_t, const Mapping*> owner;  // offset -> the mapping whose pages are there
  bool stale = false;  // an own memfd's view may be left (its mapping was replaced before it died)
  ~Shadow();
};

struct Mapping {
  uintptr_t base = 0;
  size_t size = 0;
  AllocationPtr alloc;
  std::shared_ptr<Shadow> shadow;
  uintptr_t res_base = 0;  // the reservation it lies in (CU_POINTER_ATTRIBUTE_RANGE_*)
  size_t res_size = 0;
  std::array<std::atomic<uint8_t>, kMaxDevices> dev_access{};  // CU_MEM_ACCESS_FLAGS_PROT_*
  std::atomic<uint8_t> host_access{0};

  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();
  char* host() const { return shadow->base + (base - res_base); }
  unsigned device_access(int dev) const {
    return dev >= 0 && dev < kMaxDevices ? dev_access[dev].load(std::memory_order_acquire) : 0;
  }
  // Whether anything was granted at all (host-located memory is then reachable from copies).
  bool any_access() const;
};

// Gives a new allocation (prop and size set) its bytes: a shareable memfd named after its
// properties when a POSIX fd or fabric handle was requested (it will be exported: the object
// exists from the start, so an export never moves memory that copies may be writing), else
// an extent of a memory arena. OUT_OF_MEMORY (recorded) on failure.
Errc create_bytes(Allocation& a, const char* api);

// The live allocation behind a CUmemGenericAllocationHandle, or null (garbage and released
// handles are never dereferenced): for callers outside the VMM module (logical endpoints).
AllocationPtr find_allocation(CUmemGenericAllocationHandle h);
// The cuMemAddressReserve range holding p, mapped or not (pointer queries, copies).
bool reservation_at(uintptr_t p, uintptr_t& base, size_t& size);
// Live allocation handles and address reservations (cuShimGetObjectCounts).
size_t handle_count();
size_t reservation_count();
// Every reservation and how many mappings it holds (`cuda-shim smi`).
struct ReservationView {
  uintptr_t base = 0;
  size_t size = 0, mappings = 0;
};
void reservations(std::vector<ReservationView>& out);

// Copy-engine checks on a mapping (copy.cpp): the current context's device must have access;
// writes need read-write access. Host-located memory is reachable once any access exists.
Errc check_copy_access(const Mapping& m, uintptr_t p, bool write, const char* api, const char* what);

}  // namespace cuda_shim::vmm
