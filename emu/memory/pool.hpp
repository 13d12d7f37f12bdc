// Memory pools and the stream-ordered allocator, shaped after what NVIDIA's driver does
// (measured on H200s, driver 580; the probe cases tests/probe/cases/pool*.cases):
//  - A pool owns one contiguous virtual range of `capacity` bytes (maxSize rounded up to
//    32 MiB; the device's total memory by default). Allocations are 512-byte granular and
//    placed first-fit at the lowest address that the allocating stream may reuse.
//  - Physical memory is reserved in 32 MiB chunks of that range: a chunk is committed while
//    any live allocation, or any freed allocation the host has not yet observed, overlaps
//    it (ReservedMemCurrent). Synchronization releases idle chunks down to the release
//    threshold; cuMemPoolTrimTo down to its argument.
//  - A stream-ordered free takes a position in its stream. The block is reusable at once by
//    that stream; by any stream once the host observed the position (stream, event or
//    context synchronize); otherwise as the reuse policies allow: FOLLOW_EVENT_DEPENDENCIES
//    when the allocating stream is ordered after the free, ALLOW_OPPORTUNISTIC when the free
//    completed, and ALLOW_INTERNAL_DEPENDENCIES (the allocating stream is made to wait) only
//    when nothing else fits within the pool's capacity.
// Memory is a memfd range (memory/pool_backing.hpp: its own memfd for an exportable pool, a
// range of a shared one otherwise), lazily backed. Device-located pools map it twice: a PROT_NONE range handed to the user (host access faults, as on a GPU) and a
// read-write shadow the copy engine uses. Host, host-NUMA and managed pools map it once,
// read-write, at the address the user gets.
#pragma once
#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/errc.hpp"
#include "core/biased_lock.hpp"
#include "platform/shareable.hpp"
#include "memory/pool_attention.hpp"
#include "memory/pool_backing.hpp"
#include "memory/pool_imports.hpp"
#include "memory/pool_index.hpp"

namespace cuda_shim {
class Stream;
}

namespace cuda_shim::mem {

constexpr size_t kPoolChunk = size_t(32) << 20;  // reservation granularity
constexpr size_t kPoolAlign = 512;               // sub-allocation granularity and alignment
// Device virtual address space all pools reserve from: measured, 466 pools of default size
// (the H200's 150 GB) fit beside the two default pools, a 64 TiB pool does not.
constexpr uint64_t kPoolVaBudget = uint64_t(1) << 46;
// How much address space one pool's window takes at most (pool.cpp).
size_t pool_window_cap();

struct PoolBlock;

// A live allocation as pointer queries see it.
struct PoolAlloc {
  uintptr_t base = 0;
  size_t size = 0;          // bytes requested
  uint64_t buffer_id = 0;   // CU_POINTER_ATTRIBUTE_BUFFER_ID
  uintptr_t chunk_base = 0; // the 32 MiB chunk holding `p` (MAPPING_BASE_ADDR)
  uint64_t chunk_id = 0;    // MEMORY_BLOCK_ID
  char* host = nullptr;     // emulator-side address of base
};

class Pool : public std::enable_shared_from_this<Pool> {
 public:
  struct Props {
    CUmemAllocationType type = CU_MEM_ALLOCATION_TYPE_PINNED;
    unsigned handle_types = 0;
    CUmemLocationType loc_type = CU_MEM_LOCATION_TYPE_DEVICE;
    int loc_id = 0;
    size_t max_size = 0;
    unsigned short usage = 0;
  };

  Pool(const Props& p, uint64_t capacity, int ndev, bool is_default);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  const Props& props() const { return props_; }
  uint64_t capacity() const { return capacity_; }
  bool is_default() const { return default_; }
  bool device_located() const {
    return props_.type == CU_MEM_ALLOCATION_TYPE_PINNED && props_.loc_type == CU_MEM_LOCATION_TYPE_DEVICE;
  }
  bool host_located() const {
    return props_.type == CU_MEM_ALLOCATION_TYPE_PINNED && props_.loc_type != CU_MEM_LOCATION_TYPE_DEVICE;
  }
  bool managed() const { return props_.type == CU_MEM_ALLOCATION_TYPE_MANAGED; }
  // The device whose memory this is (-1 for host-located and location-less pools).
  int device() const { return props_.loc_type == CU_MEM_LOCATION_TYPE_DEVICE ? props_.loc_id : -1; }
  uintptr_t handle() const { return handle_; }
  void set_handle(uintptr_t h) { handle_ = h; }
  std::string describe() const;  // "pool 0x… (device 0, pinned)" for explanations

  // Stream-ordered allocation of `bytes` (> 0) on stream `s`. On failure records why.
  Errc alloc(size_t bytes, Stream& s, const char* api, uintptr_t& out);
  // Stream-ordered free of the allocation starting exactly at p. `s` is the freeing stream.
  Errc free_async(uintptr_t p, Stream& s, const char* api);
  // cuMemFree / cudaFree of a pool allocation (the caller synchronized first).
  Errc free_now(uintptr_t p, const char* api);
  // The live allocation containing p; false when p lies in no live allocation.
  bool lookup(uintptr_t p, PoolAlloc& out) const;

  // Access from a location: CU_MEM_ACCESS_FLAGS_PROT_* (device ordinal or -1 for the host).
  unsigned access(int dev) const;
  void set_access(int dev, unsigned flags);

  // Attributes.
  uint64_t reserved_current() const;
  uint64_t reserved_high() const;
  uint64_t used_current() const;
  uint64_t used_high() const;
  void reset_reserved_high();
  void reset_used_high();
  uint64_t release_threshold() const { return threshold_.load(std::memory_order_relaxed); }
  void set_release_threshold(uint64_t v);
  bool reuse_follow() const { return follow_.load(std::memory_order_relaxed); }
  bool reuse_opportunistic() const { return opportunistic_.load(std::memory_order_relaxed); }
  bool reuse_internal() const { return internal_.load(std::memory_order_relaxed); }
  void set_reuse_follow(bool v) { follow_.store(v); }
  void set_reuse_opportunistic(bool v) { opportunistic_.store(v); }
  void set_reuse_internal(bool v) { internal_.store(v); }

  // Releases idle chunks while reservedMemCurrent - chunk >= keep (cuMemPoolTrimTo).
  void trim_to(uint64_t keep);
  // After a host synchronization: frees the host has now observed become reusable by
  // every stream, then idle chunks are released down to the release threshold.
  void after_sync();

  // cuMemPoolDestroy: the handle dies now; memory goes once no allocation is live.
  void mark_destroyed();
  bool destroyed() const { return destroyed_.load(std::memory_order_acquire); }

  // ---- IPC (exporter and importer sides) ----
  // The pool's identity across processes: its memfd is named for it (platform/shareable.hpp).
  const ipc::Token& token() const { return token_; }
  // A pool made by cuMemPoolImportFromShareableHandle: it maps the exporter's memory and
  // holds only what cuMemPoolImportPointer brought in; it never allocates.
  bool imported() const { return imported_; }
  // Where the window starts: an allocation at p lies at offset p - window_base() + the
  // backing offset (backing_fd) of the pool's memfd (0 before the window exists).
  uintptr_t window_base() const {
    std::lock_guard lk(m_);
    return window_;
  }
  // The descriptor holding the pool's memory (kept while the pool lives) and the window's
  // offset in it (0 for an exportable pool's own memfd); reserves the window first.
  Errc backing_fd(int& fd, uint64_t& offset, const char* api);
  // A new descriptor of the pool's memory (POSIX-fd export).
  Errc export_fd(int& fd, const char* api);
  void mark_exported();  // ipc/pool_export.cpp
  // cuMemPoolExportPointer: 64 bytes naming the live allocation that starts at p.
  Errc export_pointer(uintptr_t p, unsigned char out[64], const char* api);
  // Importer: maps the exporter's memory from fd (the pool takes its own descriptor).
  Errc attach_import(int fd, const ipc::Token& token, const char* api);
  // Importer: cuMemPoolImportPointer.
  Errc import_pointer(const unsigned char data[64], uintptr_t& out, const char* api);
  bool has_imports() const {
    std::lock_guard lk(m_);
    return !imports_.empty();
  }
  bool exported() const { return exported_.load(std::memory_order_acquire); }

  // What `cuda-shim smi` shows of a pool, read under the pool's lock (pool_inspect.cpp).
  struct View {
    uint64_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
    size_t live = 0, pending = 0;      // live allocations (or imports), frees not yet observed
    uint64_t live_bytes = 0, largest = 0;  // bytes requested
    uintptr_t window = 0;
  };
  void inspect(View& out) const;

 private:
  struct StreamEntry;
  // All private members are used with m_ held.
  // for_export: an exportable pool's window goes straight into its own memfd.
  Errc reserve_window(const char* api, bool for_export = false);
  Errc alloc_slow(size_t bytes, Stream& s, const char* api, uintptr_t& out);
  PoolBlock* new_block();
  void drop_block(PoolBlock* b);
  // The block at the lowest address where r bytes fit for stream s (internal_ok: reusing
  // any pending free, with a dependency); null when none.
  PoolBlock* first_fit(size_t r, Stream& s, bool internal_ok);
  PoolBlock* take(PoolBlock* u, size_t r, size_t req);
  void claim(PoolBlock* u, size_t req, bool fix);
  bool commit_range(uintptr_t off, size_t len);
  void busy(uintptr_t off, size_t len, bool add);
  bool eligible(const PoolBlock& b, Stream& s) const;
  void settle(PoolBlock* b);
  void settle_observed();
  PoolBlock* merge_settled(PoolBlock* b);
  StreamEntry& entry_for(Stream& s);
  StreamEntry& entry_slow(Stream& s);
  void grow_chunks(size_t n);
  void unpark_all();
  void pend(PoolBlock* b, StreamEntry& e, uint64_t seq);
  void compact(StreamEntry& e);
  void unpend(PoolBlock* b);
  void release_idle(uint64_t target, bool trim);
  void decommit(size_t chunk);
  void refresh_attention();
  void verify(const char* where) const;  // CUDA_SHIM_CHECK_POOLS=1: every invariant, or abort
  // The live allocation starting exactly at offset off (the hot one or the hash's).
  PoolBlock* find_live(uintptr_t off) const;
  PoolBlock* take_live(uintptr_t off);
  // Whether p starts a live allocation; its requested bytes and buffer id.
  bool live_start(uintptr_t p, size_t& req, uint64_t& id) const;
  // Why p (in the window or not) is not a live allocation's start, for `verb` ("free").
  Errc not_live(uintptr_t p, const char* api, const char* verb, bool within_req) const;

  Props props_;
  uint64_t capacity_;
  bool default_;
  uintptr_t handle_ = 0;

  mutable BiasedLock m_;
  uint64_t next_buffer_ = 0;  // this pool's share of BUFFER_IDs
  // The virtual window [window_, window_ + window_size_) and its shadow.
  uintptr_t window_ = 0;
  size_t window_size_ = 0;
  char* shadow_ = nullptr;
  PoolSpan span_;  // the window's memory (pool_backing.hpp)
  bool span_kept_ = false;  // a descriptor of it went out: its pages stay until the file closes
  PoolBlock* root_ = nullptr;   // treap of every block by address
  BlockHash hash_;       // live blocks by base offset, but for hot_
  // The latest allocation, kept out of hash_: the common alloc/free pair touches no table.
  PoolBlock* hot_ = nullptr;
  ParkedFrees parked_;   // pending frees not yet folded into the treap (pool_index.hpp)
  StreamEntry* last_entry_ = nullptr;
  PoolBlock* spare_ = nullptr;  // recycled block records
  std::vector<std::unique_ptr<PoolBlock[]>> slabs_;
  // Per chunk, up to the highest one ever committed (a pool of the device's size has
  // thousands of chunks; most programs touch a few).
  std::vector<uint64_t> chunk_busy_;  // bytes of live or unobserved-free blocks per chunk
  std::vector<uint8_t> chunk_committed_;
  std::vector<uint64_t> chunk_id_;
  size_t committed_ = 0;              // chunks committed
  size_t idle_committed_ = 0;         // committed chunks with no busy bytes
  uint64_t reserved_high_ = 0;
  uint64_t used_ = 0, used_high_ = 0;
  size_t live_ = 0;
  std::vector<std::unique_ptr<StreamEntry>> streams_;
  size_t pending_ = 0;  // free blocks awaiting observation
  bool attention_ = false;
  AttentionSlot attn_;  // listed while attention_ (pool_attention.hpp)
  std::vector<uint8_t> access_;  // per device ordinal: CU_MEM_ACCESS_FLAGS_*
  uint8_t host_access_ = 0;
  std::atomic<uint64_t> threshold_{0};
  std::atomic<bool> follow_{true}, opportunistic_{true}, internal_{true};
  std::atomic<bool> destroyed_{false};
  uint32_t rng_ = 0x9e3779b9u;  // treap priorities
  ipc::Token token_;
  bool imported_ = false;
  std::atomic<bool> exported_{false};  // a shareable handle of the pool was handed out
  ImportTable imports_;  // importer: the allocations imported, by offset
  Errc map_window(PoolSpan span, size_t len, const char* api);
  // Whether span_ is a memfd of the pool's own (exported, exportable within the budget, or
  // imported) rather than a range of a shared one (pool_backing.hpp).
  bool owns_file() const { return own_span_; }
  bool own_span_ = false;
  bool own_counted_ = false;  // holds one of own_file_budget()'s files
  // A memfd named for the pool, of the window's size (null with errno on failure).
  std::shared_ptr<PoolFile> create_own_file(size_t len) const;
  // An exportable pool in a shared range moves into a memfd of its own (pool_migrate.cpp).
  Errc move_to_own_file(const char* api);
  Errc free_imported(uintptr_t p, const char* api, bool& retire);
  bool lookup_imported(uintptr_t p, PoolAlloc& out) const;
};

using PoolPtr = std::shared_ptr<Pool>;

// Handle table and per-location pools.
// Validates a CUmemoryPool handle (never dereferenced blindly); null when not a live pool.
PoolPtr find_pool(const void* handle);
// Pools whose handles are live (cuShimGetObjectCounts).
size_t live_pool_count();
// The pools whose handles are live, the defaults included (`cuda-shim smi`).
void live_pools(std::vector<PoolPtr>& out);
// The same for an entry's pool argument: INVALID_VALUE, explained, when it is not a live pool.
Errc pool_arg(const void* handle, const char* api, PoolPtr& out);
// The same without a reference: the pool stays alive while this thread's handle cache holds
// it, at least until the thread's next pool lookup (hot paths: allocation, pointer import).
Errc pool_arg(const void* handle, const char* api, Pool*& out);
Pool* find_pool_fast(const void* handle);
// Registers a new pool (after validation); charges its capacity against the VA budget.
Errc create_pool(const Pool::Props& p, const char* api, PoolPtr& out);
// Registers a pool imported from an exporter's descriptor (cuMemPoolImportFromShareableHandle).
Errc import_pool(const Pool::Props& p, uint64_t capacity, int fd, const ipc::Token& token, const char* api,
                 PoolPtr& out);
Errc destroy_pool(const void* handle, const char* api);
// The default pool of a location and allocation type (created on first use).
PoolPtr default_pool(CUmemLocationType t, int id, CUmemAllocationType type);
PoolPtr current_pool(CUmemLocationType t, int id, CUmemAllocationType type);
void set_current_pool(CUmemLocationType t, int id, CUmemAllocationType type, const PoolPtr& p);
// Fast path for cuMemAllocAsync: the current pinned pool of device `dev`.
Pool* current_device_pool(int dev);

// Called after every host synchronization (stream, event, context): one load unless a pool
// has work to do.
void pools_after_sync_slow() noexcept;
inline void pools_after_sync() noexcept {
  if (attention_any()) [[unlikely]]
    pools_after_sync_slow();
}

}  // namespace cuda_shim::mem
