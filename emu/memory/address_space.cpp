#include "memory/address_space.hpp"
#include "core/limits.hpp"

#include <cuda.h>

#include <array>
#include <mutex>

#include "core/thread_state.hpp"
#include "memory/managed.hpp"

namespace cuda_shim::mem {

// No Kind::vmm range exists before vmm registers, so only reservation_at is ever asked of these.
constexpr VmmQueries kNoVmm{
    .info = [](const vmm::Mapping&) { return MappingInfo{}; },
    .device_access = [](const vmm::Mapping&, int) { return 0u; },
    .check_copy_access = [](const vmm::Mapping&, uintptr_t, bool, const char*, const char*) { return Errc::success; },
    .reservation_at = [](uintptr_t, uintptr_t&, size_t&) { return false; },
};

Range::~Range() {
  if (!ipc_export.zero())
    withdraw_export.get()(ipc_export);
  if (managed) forget_managed(*managed);
}

const char* kind_name(Kind k) noexcept {
  switch (k) {
    case Kind::device: return "device memory";
    case Kind::host_pinned: return "pinned host memory";
    case Kind::host_registered: return "registered host memory";
    case Kind::managed: return "managed memory";
    case Kind::pool: return "memory-pool memory";
    case Kind::vmm: return "memory mapped with cuMemMap";
  }
  return "memory";
}

const char* location_name(int type) noexcept {
  switch (type) {
    case CU_MEM_LOCATION_TYPE_NONE: return "CU_MEM_LOCATION_TYPE_NONE";
    case CU_MEM_LOCATION_TYPE_DEVICE: return "CU_MEM_LOCATION_TYPE_DEVICE";
    case CU_MEM_LOCATION_TYPE_HOST: return "CU_MEM_LOCATION_TYPE_HOST";
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return "CU_MEM_LOCATION_TYPE_HOST_NUMA";
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return "CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT";
    default: return "not a CUmemLocationType";
  }
}

AddressSpace& AddressSpace::get() {
  static auto* a = new AddressSpace();  // leaked: worker threads may outlive main()
  return *a;
}

bool AddressSpace::insert(RangePtr r) {
  std::unique_lock lk(m_);
  auto it = map_.upper_bound(r->base);
  if (it != map_.end() && it->first < r->base + r->size) return false;  // next range starts inside
  if (it != map_.begin()) {
    auto prev = std::prev(it);
    if (prev->second->base + prev->second->size > r->base) return false;  // previous one reaches in
  }
  uintptr_t b = r->base;
  map_.emplace(b, std::move(r));
  return true;
}

RangePtr AddressSpace::find(uintptr_t p) const {
  std::shared_lock lk(m_);
  auto it = map_.upper_bound(p);
  if (it == map_.begin()) return nullptr;
  --it;
  return it->second->contains(p) ? it->second : nullptr;
}

const Range* AddressSpace::find_cached(uintptr_t p) const {
  ThreadState& t = ts();
  uint64_t e = epoch_.load(std::memory_order_acquire);
  if (auto* c = static_cast<Range*>(t.range.get()); c && t.range_epoch == e && c->contains(p)) return c;
  RangePtr r = find(p);
  if (!r) return nullptr;
  t.range = std::move(r);
  t.range_epoch = e;
  return static_cast<Range*>(t.range.get());
}

void AddressSpace::drop_cached(const Range* r) noexcept {
  ThreadState& t = ts();
  if (t.range.get() == r) t.range.reset();
}

RangePtr AddressSpace::find_overlap(uintptr_t p, size_t n) const {
  if (n == 0) return nullptr;
  std::shared_lock lk(m_);
  auto it = map_.lower_bound(p);
  if (it != map_.end() && it->first - p < n) return it->second;
  if (it != map_.begin()) {
    auto prev = std::prev(it);
    if (prev->second->base + prev->second->size > p) return prev->second;
  }
  return nullptr;
}

std::vector<RangePtr> AddressSpace::owned_by(const Context* ctx) const {
  std::vector<RangePtr> out;
  std::shared_lock lk(m_);
  for (auto& [b, r] : map_)
    if (r->ctx.get() == ctx) out.push_back(r);
  return out;
}

size_t AddressSpace::count() const {
  std::shared_lock lk(m_);
  return map_.size();
}

namespace {
std::array<std::atomic<uint64_t>, kMaxDevices> g_charged{};
// Where other processes read this process's charges (a column of the shared registry), or null.
struct Mirror {
  uint64_t* words;
  size_t stride;
  uint32_t* dev_hwm;
  uint64_t* totals;
};
std::atomic<const Mirror*> g_mirror{nullptr};

// Copies device `ordinal`'s count to the mirror without a lock: each writer stores what it read
// and stores again if the count moved meanwhile, so the last store always carries the latest
// count (a writer that read an older count finds it changed and repeats).
void publish(int ordinal) noexcept {
  const Mirror* m = g_mirror.load(std::memory_order_acquire);
  if (!m) return;
  if (m->dev_hwm) {
    std::atomic_ref<uint32_t> hwm(*m->dev_hwm);
    for (uint32_t h = hwm.load(); h < static_cast<uint32_t>(ordinal) + 1 && !hwm.compare_exchange_weak(h, ordinal + 1);) {
    }
  }
  std::atomic_ref<uint64_t> out(m->words[static_cast<size_t>(ordinal) * m->stride]);
  for (uint64_t v = g_charged[ordinal].load();; ) {
    uint64_t was = out.exchange(v);
    // The differences of all stores add up to the column's last value, whatever their order.
    if (uint64_t d = charge_rounded(v) - charge_rounded(was); d && m->totals)
      std::atomic_ref<uint64_t>(m->totals[ordinal]).fetch_add(d);
    uint64_t now = g_charged[ordinal].load();
    if (now == v) break;
    v = now;
  }
}
}  // namespace

bool charge(int ordinal, size_t bytes, uint64_t total) noexcept {
  if (ordinal < 0 || ordinal >= kMaxDevices) return false;
  auto& c = g_charged[ordinal];
  uint64_t cur = c.load(std::memory_order_relaxed);
  do {
    if (bytes > total || cur > total - bytes) return false;
  } while (!c.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  publish(ordinal);
  return true;
}

void uncharge(int ordinal, size_t bytes) noexcept {
  if (ordinal < 0 || ordinal >= kMaxDevices) return;
  g_charged[ordinal].fetch_sub(bytes, std::memory_order_relaxed);
  publish(ordinal);
}

uint64_t charged(int ordinal) noexcept {
  return ordinal >= 0 && ordinal < kMaxDevices ? g_charged[ordinal].load(std::memory_order_relaxed) : 0;
}

void set_charge_mirror(uint64_t* words, size_t stride, uint32_t* dev_hwm, uint64_t* totals) noexcept {
  static std::once_flag once;
  // A fork()ed child must not write into its parent's column.
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, [] { g_mirror.store(nullptr); }); });
  // One per process: a process attaches once (a fork()ed child again, alone, after the reset
  // above), so no publisher can be reading the fields while they are written.
  static Mirror mirror{};
  if (words) mirror = Mirror{words, stride, dev_hwm, totals};
  g_mirror.store(words ? &mirror : nullptr, std::memory_order_release);
  if (words)
    for (int d = 0; d < kMaxDevices; ++d)
      if (g_charged[d].load(std::memory_order_relaxed)) publish(d);
}

void release_context(const Context* ctx) noexcept {
  auto& as = AddressSpace::get();
  try {
    for (auto& r : as.owned_by(ctx)) {
      // Registered host memory stays the user's; only its registration goes away.
      if (as.remove_base(r->base, [&](const Range& x) { return &x == r.get(); }) && r->kind == Kind::device)
        uncharge(r->ordinal, r->accounted);
    }
  } catch (...) {
  }
}

}  // namespace cuda_shim::mem
