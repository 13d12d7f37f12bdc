// Global memory for kernels: the slow path of MemView::global (a translation not cached yet),
// and the generic windows.
#include "exec/memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "memory/address_space.hpp"
#include "memory/backing.hpp"
#include "memory/managed.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::exec {
namespace {

// Reserves address space nobody can map over: generic shared and local addresses land here.
uintptr_t reserve(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? 0 : reinterpret_cast<uintptr_t>(p);
}

// What lies nearest to a faulting address (a fault is rare: a walk over every range is fine), as
// compute-sanitizer's memcheck names it: the allocation just below or just above.
std::string nearest(uintptr_t a) {
  uintptr_t below_end = 0, below_base = 0, above = 0;
  size_t below_size = 0, above_size = 0;
  mem::AddressSpace::get().for_each([&](const mem::Range& r) {
    if (r.base + r.size <= a && r.base + r.size > below_end) below_end = r.base + r.size, below_base = r.base, below_size = r.size;
    if (r.base > a && (!above || r.base < above)) above = r.base, above_size = r.size;
  });
  if (below_end && (!above || a - below_end <= above - a))
    return fmt::format(" (nearest: {} bytes after the end of the {}-byte allocation at {:#x})", a - below_end,
                       below_size, below_base);
  if (above) return fmt::format(" (nearest: {} bytes before the {}-byte allocation at {:#x})", above - a, above_size, above);
  return "";
}

}  // namespace

const Windows& windows() {
  static const Windows w = [] {
    Windows x;
    x.shared_size = uintptr_t{1} << 24;  // 16 MiB: past any block's shared memory
    x.shared = reserve(x.shared_size);
    x.local_size = uintptr_t{1} << 32;   // 4 GiB: past any thread's local stack
    x.local = reserve(x.local_size);
    x.grid_ws = reserve(4096);
    return x;
  }();
  return w;
}

struct MemView::Keep {
  std::vector<mem::RangePtr> ranges;
  std::string reports;
  unsigned reported = 0;
  std::vector<uintptr_t> managed_reported;  // managed allocations already reported by this view
  std::vector<uintptr_t> padding_reported;  // allocations whose padding this view reported touched

  // At most 8 lines per host thread and launch: a kernel repeats its mistakes in every thread.
  template <class... A>
  void report(fmt::format_string<A...> f, A&&... a) {
    if (reported >= 8) return;
    ++reported;
    reports += fmt::format(f, std::forward<A>(a)...);
    reports += '\n';
  }
};

namespace {
// The programming guide's rule for cuStreamAttachMemAsync: managed memory attached to the host or
// to one stream is for that stream's work only; "accessing memory on the device from streams that
// are not associated with it will produce undefined results". A GPU with concurrent managed
// access lets the access through, and so does this, after saying so.
std::string attachment_breach(const mem::Range& r, uint64_t stream_id) {
  unsigned flags = 0;
  uint64_t attached = 0;
  mem::attachment_of(r, flags, attached);
  if (flags == CU_MEM_ATTACH_HOST) return "attached to the host (CU_MEM_ATTACH_HOST)";
  if (flags == CU_MEM_ATTACH_SINGLE && attached != stream_id)
    return fmt::format("attached to stream {} (CU_MEM_ATTACH_SINGLE)", attached);
  return {};
}
// How far from lo an access may reach in the allocation [lo, lo + len) of range r: to the end of
// its last 512-byte unit (cuMemAlloc's alignment), where the emulator's mapping reaches that far.
uintptr_t padded_end(const mem::Range& r, uintptr_t lo, uintptr_t len) {
  constexpr uintptr_t kUnit = 512;
  const uintptr_t padded = (len + kUnit - 1) / kUnit * kUnit;
  const uintptr_t mapped_from_base = r.backing ? r.backing->mapped_size() : r.size;
  const uintptr_t limit = lo - r.base <= mapped_from_base ? mapped_from_base - (lo - r.base) : 0;
  return std::min(padded, std::max<uintptr_t>(limit, len));
}

}  // namespace

MemView::MemView(uint64_t stream_id, uint8_t* grid_ws) : stream_id_(stream_id), grid_ws_(grid_ws), keep_(new Keep) {}
MemView::~MemView() { delete keep_; }

void MemView::report(const std::string& line) { keep_->report("{}", line); }

std::string MemView::take_reports() {
  std::string r;
  r.swap(keep_->reports);
  return r;
}

uint8_t* MemView::slow(uintptr_t a, unsigned n, bool write, std::string& why) {
  if (const uintptr_t ws = windows().grid_ws; grid_ws_ && a - ws < kGridWorkspace) {
    if (n > kGridWorkspace - (a - ws)) {
      why = fmt::format("{} bytes at {:#x} run past the grid workspace", n, a);
      return nullptr;
    }
    Entry& e = cache_[next_];
    next_ = (next_ + 1) % kWays;
    e.lo = ws, e.len = kGridWorkspace, e.writable = true;
    e.delta = reinterpret_cast<intptr_t>(grid_ws_) - static_cast<intptr_t>(ws);
    return grid_ws_ + (a - ws);
  }
  mem::RangePtr r = mem::AddressSpace::get().find(a);
  // In no allocation, but perhaps in the padding of the last 512-byte unit of the one below
  // (allocations start on such units): the check of the end below decides.
  if (!r) r = mem::AddressSpace::get().find(a & ~uintptr_t{511});
  if (!r) {
    why = fmt::format("address {:#x} lies in no allocation{}", a, nearest(a));
    return nullptr;
  }
  uintptr_t lo = r->base, len = r->size;
  intptr_t delta = reinterpret_cast<intptr_t>(r->host) - static_cast<intptr_t>(r->base);
  if (r->kind == mem::Kind::pool && r->pool) {
    mem::PoolAlloc al;
    if (r->pool->lookup(a, al)) {
      lo = al.base, len = al.size;
    } else {
      // The window stays mapped after a stream-ordered free, so a GPU reads on: report, as
      // compute-sanitizer would, and let the access through.
      keep_->report("{} {:#x}, in {} but in none of its live allocations (freed in stream order?)",
                    write ? "write to" : "read of", a, r->pool->describe());
    }
  }
  if (r->kind == mem::Kind::managed && r->managed) {
    auto& seen = keep_->managed_reported;
    if (std::find(seen.begin(), seen.end(), r->base) == seen.end()) {
      if (std::string why = attachment_breach(*r, stream_id_); !why.empty()) {
        seen.push_back(r->base);
        keep_->report("{} {:#x}, in the {}-byte managed allocation at {:#x} {}, from a kernel on stream {}: undefined "
                      "on a GPU (cuStreamAttachMemAsync it to this stream, or to CU_MEM_ATTACH_GLOBAL)",
                      write ? "write to" : "read of", a, r->size, r->base, why, stream_id_);
      }
    }
  }
  if (a - lo >= len || n > len - (a - lo)) {
    // Past the end, within the allocation's 512-byte unit: a GPU reads and writes that padding
    // without a fault (its pages are mapped), and so does this, after saying so once.
    const uintptr_t padded = padded_end(*r, lo, len);
    if (a - lo >= padded || n > padded - (a - lo)) {
      why = fmt::format("{} bytes at {:#x} run past the end of the {}-byte allocation at {:#x}", n, a, len, lo);
      return nullptr;
    }
    if (std::find(keep_->padding_reported.begin(), keep_->padding_reported.end(), lo) == keep_->padding_reported.end()) {
      keep_->padding_reported.push_back(lo);
      keep_->report("{} of {} bytes at {:#x}, {} bytes past the end of the {}-byte allocation at {:#x}: its padding, which "
                    "a GPU touches without a fault (compute-sanitizer reports it)", write ? "write" : "read", n, a,
                    a + n - (lo + len), len, lo);
    }
    len = padded;
  }
  if (r->kind == mem::Kind::vmm && r->vmm) {
    unsigned acc = mem::vmm_queries().device_access(*r->vmm, r->ordinal);
    if (acc == 0 || (write && acc != 3)) {  // CU_MEM_ACCESS_FLAGS_PROT_READWRITE == 3
      why = fmt::format("address {:#x} is mapped without {} access for the device (cuMemSetAccess)", a,
                        write ? "read-write" : "read");
      return nullptr;
    }
  }
  const bool writable = !(r->kind == mem::Kind::host_registered && (r->flags & 0x08));  // CU_MEMHOSTREGISTER_READ_ONLY
  if (write && !writable) {
    why = fmt::format("address {:#x} is read-only registered host memory", a);
    return nullptr;
  }
  if (keep_->ranges.empty() || keep_->ranges.back() != r) keep_->ranges.push_back(r);
  Entry& e = cache_[next_];
  next_ = (next_ + 1) % kWays;
  e.lo = lo, e.len = len, e.delta = delta, e.writable = writable;
  return reinterpret_cast<uint8_t*>(a + delta);
}

}  // namespace cuda_shim::exec
