// The pool table: handles of live pools (validated, never dereferenced blindly), the default
// and current pool of every location, the device address space pools reserve, and the
// per-thread caches that let allocations and pointer imports skip the table's lock.
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <tuple>
#include <unordered_map>

#include "core/driver.hpp"
#include "core/fresh_alloc.hpp"
#include "core/thread_state.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::mem {
namespace {
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

namespace {

struct Key {
  int loc_type, loc_id, type;
  bool operator<(const Key& o) const { return std::tie(loc_type, loc_id, type) < std::tie(o.loc_type, o.loc_id, o.type); }
};

Key key_of(CUmemLocationType t, int id, CUmemAllocationType type) {
  if (t == CU_MEM_LOCATION_TYPE_HOST || t == CU_MEM_LOCATION_TYPE_NONE) id = 0;  // the id is ignored there
  return Key{static_cast<int>(t), id, static_cast<int>(type)};
}

struct Table {
  std::shared_mutex m;
  std::unordered_map<uintptr_t, PoolPtr> live;
  std::map<Key, PoolPtr> defaults, current;
  uint64_t next_id = 1;
  uint64_t va_used = 0;
  bool va_init = false;
};
Table& table() {
  static auto* t = new Table();  // never destroyed: other threads may outlive main()
  return *t;
}
std::atomic<uint64_t> g_epoch{1};  // bumped whenever a handle dies or a current pool changes

uint64_t default_capacity() {
  auto& d = Driver::get();
  return round_up(d.device_count() ? d.dev(0).cfg.total_mem : kPoolChunk, kPoolChunk);
}

uint64_t capacity_for(const Pool::Props& p) {
  if (p.max_size) return p.max_size > UINT64_MAX - kPoolChunk ? UINT64_MAX : round_up(p.max_size, kPoolChunk);
  if (p.loc_type == CU_MEM_LOCATION_TYPE_DEVICE)
    return round_up(Driver::get().dev(p.loc_id).cfg.total_mem, kPoolChunk);
  return default_capacity();
}

bool counts_against_va(const Pool::Props& p) {
  return p.type == CU_MEM_ALLOCATION_TYPE_PINNED && p.loc_type == CU_MEM_LOCATION_TYPE_DEVICE;
}

// Every device's default pool holds its share of the budget from the start (measured).
void init_va(Table& t) {
  if (t.va_init) return;
  t.va_init = true;
  auto& d = Driver::get();
  for (int i = 0; i < d.device_count(); ++i) t.va_used += round_up(d.dev(i).cfg.total_mem, kPoolChunk);
}

PoolPtr make_pool(Table& t, const Pool::Props& p, uint64_t cap, bool is_default) {
  auto pool = make_fresh<Pool>(p, cap, Driver::get().device_count(), is_default);
  // Handles are numbers, not addresses: a stale or forged handle never aliases a pool.
  uintptr_t h = 0x5ea1'0000'0000ull + (t.next_id++ << 8);
  pool->set_handle(h);
  t.live.emplace(h, pool);
  return pool;
}

}  // namespace

size_t live_pool_count() {
  Table& t = table();
  std::shared_lock lk(t.m);
  return t.live.size();
}

void live_pools(std::vector<PoolPtr>& out) {
  Table& t = table();
  std::shared_lock lk(t.m);
  for (auto& [h, p] : t.live) out.push_back(p);
}

PoolPtr find_pool(const void* handle) {
  if (!handle) return nullptr;
  Table& t = table();
  std::shared_lock lk(t.m);
  auto it = t.live.find(reinterpret_cast<uintptr_t>(handle));
  return it == t.live.end() ? nullptr : it->second;
}

namespace {
// This thread's last validated pool handle: trusted while no handle died and no current pool
// changed since (g_epoch), so the common case takes neither the table's lock nor a reference.
struct HandleCache {
  uintptr_t h;
  uint64_t epoch;
  Pool* pool;
};
__thread HandleCache t_handle __attribute__((tls_model("initial-exec"))) = {0, 0, nullptr};
__thread bool t_handle_gone __attribute__((tls_model("initial-exec"))) = false;
// Keeps t_handle.pool alive; touched only on a miss. When the thread's destructors run, the
// cache is emptied with it: a later destructor's call must not find a pool nothing holds.
struct HandleRef {
  PoolPtr pool;
  ~HandleRef() {
    t_handle = HandleCache{0, 0, nullptr};
    t_handle_gone = true;
  }
};
thread_local HandleRef t_handle_ref;
}  // namespace

Pool* find_pool_fast(const void* handle) {
  const auto h = reinterpret_cast<uintptr_t>(handle);
  const uint64_t e = g_epoch.load(std::memory_order_acquire);  // before the lookup it vouches for
  if (h && t_handle.h == h && t_handle.epoch == e) return t_handle.pool;
  PoolPtr p = find_pool(handle);
  if (!p) return nullptr;
  if (t_handle_gone) [[unlikely]]
    return p.get();  // the thread is exiting: the table's reference holds it, uncached
  t_handle = HandleCache{h, e, p.get()};
  t_handle_ref.pool = std::move(p);
  return t_handle.pool;
}

Errc pool_arg(const void* h, const char* api, Pool*& out) {
  if (!h) return fail(Errc::invalid_value, "{}: the pool handle is NULL", api);
  out = find_pool_fast(h);
  if (!out)
    return fail(Errc::invalid_value, "{}: {} is not a live memory pool (destroyed with cuMemPoolDestroy, never "
                "created, or not a pool handle)", api, h);
  return Errc::success;
}

Errc pool_arg(const void* h, const char* api, PoolPtr& out) {
  Pool* p = nullptr;
  if (Errc e = pool_arg(h, api, p); e != Errc::success) return e;
  out = p->shared_from_this();  // live: the thread's cache holds a reference
  return Errc::success;
}

Errc create_pool(const Pool::Props& p, const char* api, PoolPtr& out) {
  Table& t = table();
  std::unique_lock lk(t.m);
  init_va(t);
  uint64_t cap = capacity_for(p);
  if (counts_against_va(p)) {
    if (cap > kPoolVaBudget || t.va_used + cap > kPoolVaBudget)
      return fail(Errc::out_of_memory, "{}: a pool of capacity {} bytes{} does not fit in the device address space "
                  "left for pools ({} of {} bytes are reserved by live pools, each pool reserving its maxSize, or "
                  "the device's memory when maxSize is 0)", api, cap, p.max_size ? "" : " (maxSize 0: device memory)",
                  t.va_used, kPoolVaBudget);
    t.va_used += cap;
  }
  out = make_pool(t, p, cap, false);
  return Errc::success;
}

Errc import_pool(const Pool::Props& p, uint64_t capacity, int fd, const ipc::Token& token, const char* api,
                 PoolPtr& out) {
  Table& t = table();
  std::unique_lock lk(t.m);
  // Measured: importing one pool again (the same descriptor or another export of it) gives
  // the same handle.
  for (auto& [h, live] : t.live)
    if (live->imported() && live->token() == token) {
      ::close(fd);
      out = live;
      return Errc::success;
    }
  auto pool = make_pool(t, p, capacity, false);
  if (Errc e = pool->attach_import(fd, token, api); e != Errc::success) {
    t.live.erase(pool->handle());
    return e;
  }
  out = std::move(pool);
  return Errc::success;
}

Errc destroy_pool(const void* handle, const char* api) {
  Table& t = table();
  PoolPtr pool;
  {
    std::unique_lock lk(t.m);
    auto it = t.live.find(reinterpret_cast<uintptr_t>(handle));
    if (it == t.live.end())
      return fail(Errc::invalid_value, "{}: {} is not a live memory pool (destroyed already, or never created)", api,
                  handle);
    pool = it->second;
    if (pool->is_default())
      return fail(Errc::invalid_value, "{}: {} is a default pool, which cannot be destroyed", api, pool->describe());
    if (pool->imported() && pool->has_imports())  // measured
      return fail(Errc::invalid_value, "{}: {} still holds imported pointers; free them (cuMemFree / cuMemFreeAsync) "
                  "before destroying the imported pool", api, pool->describe());
    t.live.erase(it);
    // Only created pools reserved address space (create_pool); an imported one never added its
    // capacity, and subtracting it wrapped va_used around, so that every later cuMemPoolCreate
    // failed with OUT_OF_MEMORY (found by conformance test_ipc_kill_stress).
    if (counts_against_va(pool->props()) && !pool->imported()) t.va_used -= pool->capacity();
    // A location whose current pool this was falls back. A device's pinned location
    // gets that device's default pool (documented). Measured on driver 580, any other
    // location (host, host NUMA, managed) gets device 0's default pinned pool when that
    // pool exists already, and its own default pool otherwise.
    const Key dev0{CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_PINNED};
    for (auto& [k, cur] : t.current) {
      if (cur != pool) continue;
      const bool device_pinned = k.loc_type == CU_MEM_LOCATION_TYPE_DEVICE && k.type == CU_MEM_ALLOCATION_TYPE_PINNED;
      auto d = t.defaults.find(device_pinned ? k : dev0);
      cur = d != t.defaults.end() ? d->second : nullptr;  // null: the location's own default, lazily
    }
    std::erase_if(t.current, [](auto& kv) { return kv.second == nullptr; });
    g_epoch.fetch_add(1, std::memory_order_acq_rel);
  }
  pool->mark_destroyed();
  // This thread's cache of its device's current pool (current_device_pool) would keep the
  // pool's memfd and window until its next allocation; another thread's goes at its next one.
  if (ThreadState& t = ts(); t.pool == pool) t.pool.reset();
  if (t_handle.pool == pool.get()) {
    t_handle = HandleCache{0, 0, nullptr};
    t_handle_ref.pool.reset();
  }
  return Errc::success;
}

PoolPtr default_pool(CUmemLocationType type, int id, CUmemAllocationType at) {
  Table& t = table();
  Key k = key_of(type, id, at);
  {
    std::shared_lock lk(t.m);
    if (auto it = t.defaults.find(k); it != t.defaults.end()) return it->second;
  }
  std::unique_lock lk(t.m);
  init_va(t);
  if (auto it = t.defaults.find(k); it != t.defaults.end()) return it->second;
  Pool::Props p;
  p.type = at;
  p.loc_type = type;
  p.loc_id = k.loc_id;
  auto pool = make_pool(t, p, capacity_for(p), true);
  t.defaults.emplace(k, pool);
  return pool;
}

PoolPtr current_pool(CUmemLocationType type, int id, CUmemAllocationType at) {
  {
    Table& t = table();
    std::shared_lock lk(t.m);
    if (auto it = t.current.find(key_of(type, id, at)); it != t.current.end()) return it->second;
  }
  return default_pool(type, id, at);
}

void set_current_pool(CUmemLocationType type, int id, CUmemAllocationType at, const PoolPtr& p) {
  Table& t = table();
  std::unique_lock lk(t.m);
  t.current[key_of(type, id, at)] = p;
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

Pool* current_device_pool(int dev) {
  ThreadState& t = ts();
  uint64_t e = g_epoch.load(std::memory_order_acquire);
  if (t.pool_dev != dev || t.pool_epoch != e || !t.pool) {
    t.pool = current_pool(CU_MEM_LOCATION_TYPE_DEVICE, dev, CU_MEM_ALLOCATION_TYPE_PINNED);
    t.pool_dev = dev;
    t.pool_epoch = e;
  }
  return static_cast<Pool*>(t.pool.get());
}

void pools_after_sync_slow() noexcept {
  // Only pools with work to do are listed (destroyed ones whose memory is in use included).
  std::vector<PoolPtr> pools;
  try {
    attention_snapshot(pools);
  } catch (...) {
    return;
  }
  for (auto& p : pools) p->after_sync();
}

}  // namespace cuda_shim::mem
