// Device-side malloc and free: each context's heap is one device allocation of
// CU_LIMIT_MALLOC_HEAP_SIZE bytes (8 MiB unless set), made at the first malloc a kernel of the
// context calls, so kernels reach it as any device memory. Blocks are 16-byte aligned and placed
// first fit; malloc answers NULL when no free run is large enough, as the GPU's does. The heap
// lives as long as its context (the allocation belongs to it, and goes with it).
#include "exec/device_heap.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/context.hpp"
#include "memory/device_alloc.hpp"

namespace cuda_shim::exec {
namespace {

constexpr uint64_t kAlign = 16;
constexpr size_t kDefaultHeap = 8388608;  // CU_LIMIT_MALLOC_HEAP_SIZE's default (measured, H200)

struct Heap {
  std::mutex m;
  CUdeviceptr base = 0;
  uint64_t size = 0;
  bool failed = false;                       // the allocation failed: every malloc is NULL
  std::map<uint64_t, uint64_t> free_runs;    // offset -> bytes
  std::unordered_map<uint64_t, uint64_t> used;  // offset -> bytes
};

// Heaps by context id (ids are never reused): a destroyed context's entry is only a few bytes.
std::mutex& heaps_m() {
  static auto* m = new std::mutex;
  return *m;
}
std::unordered_map<uint64_t, std::shared_ptr<Heap>>& heaps() {
  static auto* h = new std::unordered_map<uint64_t, std::shared_ptr<Heap>>;
  return *h;
}

std::shared_ptr<Heap> heap_of(Context& ctx) {
  std::shared_ptr<Heap> h;
  {
    std::lock_guard lk(heaps_m());
    auto& slot = heaps()[ctx.id()];
    if (!slot) slot = std::make_shared<Heap>();
    h = slot;
  }
  std::lock_guard lk(h->m);
  if (!h->base && !h->failed) {
    const size_t want = ctx.limit[CU_LIMIT_MALLOC_HEAP_SIZE] ? ctx.limit[CU_LIMIT_MALLOC_HEAP_SIZE] : kDefaultHeap;
    if (mem::alloc_device(ctx.shared_from_this(), want, "malloc (device)", h->base, /*module_owned=*/true) !=
        Errc::success) {
      h->failed = true;
    } else {
      h->size = want;
      h->free_runs[0] = want;
    }
  }
  return h;
}

uint64_t take(Heap& h, uint64_t bytes) {
  const uint64_t n = (std::max<uint64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  for (auto it = h.free_runs.begin(); it != h.free_runs.end(); ++it) {
    if (it->second < n) continue;
    const uint64_t at = it->first, left = it->second - n;
    h.free_runs.erase(it);
    if (left) h.free_runs[at + n] = left;
    h.used[at] = n;
    return h.base + at;
  }
  return 0;
}

void give_back(Heap& h, uint64_t p) {
  if (p < h.base || p >= h.base + h.size) return;  // not the heap's: the GPU's behaviour is undefined
  auto u = h.used.find(p - h.base);
  if (u == h.used.end()) return;
  uint64_t at = u->first, n = u->second;
  h.used.erase(u);
  auto next = h.free_runs.lower_bound(at);
  if (next != h.free_runs.end() && next->first == at + n) n += next->second, next = h.free_runs.erase(next);
  if (next != h.free_runs.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) at = prev->first, n += prev->second, h.free_runs.erase(prev);
  }
  h.free_runs[at] = n;
}

}  // namespace

uint64_t device_malloc(Context& ctx, uint64_t bytes) {
  if (bytes == 0) return 0;
  std::shared_ptr<Heap> h = heap_of(ctx);
  std::lock_guard lk(h->m);
  return h->failed ? 0 : take(*h, bytes);
}

void device_free(Context& ctx, uint64_t p) {
  if (!p) return;
  std::shared_ptr<Heap> h = heap_of(ctx);
  std::lock_guard lk(h->m);
  if (!h->failed) give_back(*h, p);
}

}  // namespace cuda_shim::exec
