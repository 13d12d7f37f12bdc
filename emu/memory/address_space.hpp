// The process-wide map of every address range the driver knows: device allocations,
// pinned and registered host memory, memory pools' windows and VMM mappings.
// Any interior pointer resolves in O(log n). Lookups hand out shared_ptrs, so a range
// found by one thread stays mapped while it is used even if another thread frees it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "core/errc.hpp"
#include "core/events.hpp"
#include "core/limits.hpp"
#include "platform/shareable.hpp"
#include "memory/backing.hpp"

namespace cuda_shim {
class Context;
}
namespace cuda_shim::vmm {
struct Mapping;
}

namespace cuda_shim::mem {

class Pool;
struct ManagedState;

enum class Kind {
  device,           // cuMemAlloc / cuMemAllocPitch
  host_pinned,      // cuMemAllocHost / cuMemHostAlloc
  host_registered,  // cuMemHostRegister: the user's own pages
  managed,          // reserved (cuMemAllocManaged)
  pool,             // a memory pool's whole window; Pool::lookup finds the allocation
  vmm,              // one cuMemMap mapping; `vmm` holds its allocation and access flags
};

const char* kind_name(Kind k) noexcept;
// A CUmemLocationType's name, for explanations (pools and VMM).
const char* location_name(int type) noexcept;

struct Range {
  Kind kind = Kind::device;
  int ordinal = 0;                   // device the memory belongs to
  std::shared_ptr<Context> ctx;      // context that allocated / registered it
  uintptr_t base = 0;                // user-visible address (device pointer or host pointer)
  size_t size = 0;                   // size the user asked for
  size_t accounted = 0;              // bytes charged to the device (cuMemGetInfo)
  char* host = nullptr;              // where the emulator reads/writes base
  unsigned flags = 0;                // CU_MEMHOSTALLOC_* / CU_MEMHOSTREGISTER_*
  uint64_t buffer_id = 0;            // CU_POINTER_ATTRIBUTE_BUFFER_ID (never reused)
  uint64_t block_id = 0;             // MEMORY_BLOCK_ID where it is not buffer_id (managed memory)
  std::shared_ptr<Backing> backing;  // null for registered host memory
  std::shared_ptr<Pool> pool;        // Kind::pool: keeps the window mapped while in use
  std::shared_ptr<vmm::Mapping> vmm; // Kind::vmm: keeps the allocation alive while in use
  std::shared_ptr<ManagedState> managed;  // Kind::managed: association and advice
  std::atomic<bool> sync_memops{false};
  ipc::Token ipc_export;     // cuIpcGetMemHandle's registry record, withdrawn with the range (withdraw_export)
  bool ipc_opened = false;   // mapped by cuIpcOpenMemHandle: only cuIpcCloseMemHandle unmaps it
  bool external = false;     // a buffer mapped from external memory (cuExternalMemoryGetMappedBuffer)
  bool module_owned = false; // a module's __device__/__constant__/__managed__ variable: freed with its module

  Range() = default;
  Range(const Range&) = delete;
  ~Range();

  bool contains(uintptr_t p, size_t n = 1) const {
    return p >= base && p - base < size && n <= size - (p - base);
  }
  // The emulator-side address of user address p (which must lie inside the range).
  char* translate(uintptr_t p) const { return host + (p - base); }
  bool host_kind() const { return kind == Kind::host_pinned || kind == Kind::host_registered; }
};

// What memory asks of the vmm room about cuMemMap mappings (Kind::vmm ranges) and address
// reservations; vmm registers it when the library loads (memory does not include vmm's headers).
struct MappingInfo {
  bool host_located = false;  // the allocation's location is the host
  bool host_access = false;   // cuMemSetAccess gave the host access
  uintptr_t res_base = 0;     // the reservation the mapping lies in
  size_t res_size = 0;
  uintptr_t base = 0;         // the mapping's own range
  size_t size = 0;
  // The allocation's properties that pointer attributes report.
  unsigned handle_types = 0;  // requestedHandleTypes
  bool rdma = false;          // allocFlags.gpuDirectRDMACapable
  bool hw_decompress = false; // allocFlags.usage has CU_MEM_CREATE_USAGE_HW_DECOMPRESS
  uint64_t block_id = 0;      // CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID
};
struct VmmQueries {
  MappingInfo (*info)(const vmm::Mapping& m);
  unsigned (*device_access)(const vmm::Mapping& m, int dev);  // CU_MEM_ACCESS_FLAGS_PROT_*
  // Copies: the current context's device must have access; writes need read-write.
  Errc (*check_copy_access)(const vmm::Mapping& m, uintptr_t p, bool write, const char* api, const char* what);
  // The cuMemAddressReserve range holding p, mapped or not.
  bool (*reservation_at)(uintptr_t p, uintptr_t& base, size_t& size);
};
// Answered by the vmm room (an ev::Registration when the library loads); before it, kNoVmm: no
// mapping, no reservation.
extern const VmmQueries kNoVmm;
inline constinit ev::Query<VmmQueries> vmm_table{&kNoVmm};
inline const VmmQueries& vmm_queries() noexcept { return vmm_table.get(); }

// How a Range withdraws its legacy IPC export's registry record when it dies: the ipc room
// provides it when the library loads (memory does not include the registry).
inline void no_withdraw(const ipc::Token&) noexcept {}
inline constinit ev::Query<void(const ipc::Token& record) noexcept> withdraw_export{&no_withdraw};

using RangePtr = std::shared_ptr<Range>;

class AddressSpace {
 public:
  static AddressSpace& get();

  // Registers r. Fails (returns false) if it overlaps a known range.
  bool insert(RangePtr r);
  // The range containing p, or null.
  RangePtr find(uintptr_t p) const;
  // Any range overlapping [p, p+n), or null.
  RangePtr find_overlap(uintptr_t p, size_t n) const;
  // Removes and returns the range whose base is exactly p and whose kind is allowed by
  // `pred`; null when there is none (nothing removed).
  template <class Pred>
  RangePtr remove_base(uintptr_t p, Pred pred) {
    std::unique_lock lk(m_);
    auto it = map_.find(p);
    if (it == map_.end() || !pred(*it->second)) return nullptr;
    RangePtr r = std::move(it->second);
    map_.erase(it);
    epoch_.fetch_add(1, std::memory_order_acq_rel);
    drop_cached(r.get());
    return r;
  }
  // find() through this thread's cache of the last range found: no lock and no reference
  // count while no range was removed since. Null when p lies in no range; the range stays
  // alive until this thread's next call.
  const Range* find_cached(uintptr_t p) const;
  // Every range owned by ctx (for context teardown).
  std::vector<RangePtr> owned_by(const Context* ctx) const;
  size_t count() const;
  // Calls f(const Range&) for every range, in address order, under the shared lock (`cuda-shim smi`).
  template <class F>
  void for_each(F&& f) const {
    std::shared_lock lk(m_);
    for (auto& [base, r] : map_) f(*r);
  }
  // Forgets this thread's cached range if it is r: a freed range's memory (its memfd) is then
  // released by the free itself, not at the thread's next lookup.
  static void drop_cached(const Range* r) noexcept;

  uint64_t next_buffer_id() { return next_id_.fetch_add(1, std::memory_order_relaxed); }

 private:
  AddressSpace() = default;
  mutable std::shared_mutex m_;
  std::map<uintptr_t, RangePtr> map_;
  std::atomic<uint64_t> epoch_{1};  // bumped by every removal
  std::atomic<uint64_t> next_id_{1};
};

// Device memory accounting (cuMemGetInfo / out-of-memory decisions).
// The granularity the driver charges device memory in.
constexpr size_t kAllocGranularity = 2u << 20;
// A process's charge on a device as the driver counts it (whole granules).
constexpr uint64_t charge_rounded(uint64_t bytes) { return (bytes + kAllocGranularity - 1) / kAllocGranularity * kAllocGranularity; }
// Charges `bytes` to device `ordinal` unless that would exceed `total`.
bool charge(int ordinal, size_t bytes, uint64_t total) noexcept;
void uncharge(int ordinal, size_t bytes) noexcept;
uint64_t charged(int ordinal) noexcept;
// Keeps words[d * stride] equal to charged(d) for every device d from now on, without a lock
// (the registry's column of this process, where others read it); null stops it. Before device d
// is first written, *dev_hwm is raised to d + 1 (so whoever reuses the column knows how far to
// clear it). totals[d], when given, carries the sum of charge_rounded(words[d * stride]) over
// every process that mirrors into it: each store is an exchange whose difference is added
// there, so a reader gets every process's use in one load.
constexpr int kMaxChargedDevices = kMaxDevices;
void set_charge_mirror(uint64_t* words, size_t stride = 1, uint32_t* dev_hwm = nullptr,
                       uint64_t* totals = nullptr) noexcept;

// Frees every allocation a context owns; for the context's destroy / primary reset path.
void release_context(const Context* ctx) noexcept;


}  // namespace cuda_shim::mem
