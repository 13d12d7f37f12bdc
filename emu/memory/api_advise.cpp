// Driver entries: advice, prefetch and range queries on managed memory (cuMemAdvise,
// cuMemPrefetchAsync, cuMemRangeGetAttribute(s)), CUDA 13 forms (CUmemLocation) and the older
// CUdevice forms as converters. Rules marked "measured" were observed on NVIDIA's driver
// 580.159.04 (H200, CUDA 13.0; the probe cases tests/probe/cases/managed*.cases).
//  - Advice and the last prefetch location are per page (memory/advice.hpp). They change
//    nothing else here: the emulator has one copy of managed memory, so read duplication,
//    preferred locations and mappings only come back through cuMemRangeGetAttribute.
//  - cuMemPrefetchAsync records its location when called (measured: visible before the stream
//    reaches it) and is an operation of its stream, which it keeps busy like any other.
//  - Pageable host memory qualifies on devices with CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS
//    (documented; the H200 probed has 0): its advice lives in one process-wide page map.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <unordered_map>
#include <cerrno>
#include <cstring>
#include <vector>

#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "core/capture.hpp"
#include "core/stream.hpp"
#include "memory/address_space.hpp"
#include "memory/advice.hpp"
#include "memory/managed.hpp"
#include "memory/pool.hpp"

namespace cuda_shim::api {
namespace {

using mem::AddressSpace;
using mem::AdviceMap;
using mem::Kind;
using mem::RangePtr;

bool valid_ordinal(int id) { return id >= 0 && id < Driver::get().device_count(); }

// The NUMA node of the calling thread (CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT): the CPU's node
// when the emulated machine has it, else the current device's host NUMA node.
int current_numa(int ordinal) {
  unsigned cpu = 0, node = 0;
  if (::syscall(SYS_getcpu, &cpu, &node, nullptr) == 0 && Driver::get().host_numa_node(static_cast<int>(node)))
    return static_cast<int>(node);
  auto& d = Driver::get();
  return valid_ordinal(ordinal) ? d.dev(ordinal).cfg.numa_id : 0;
}

bool pageable_access(int ordinal) {
  return valid_ordinal(ordinal) && Driver::get().dev(ordinal).attr[88] != 0;  // PAGEABLE_MEMORY_ACCESS
}
bool concurrent_access(int ordinal) {
  return valid_ordinal(ordinal) && Driver::get().dev(ordinal).attr[89] != 0;  // CONCURRENT_MANAGED_ACCESS
}

const char* advice_name(int a) {
  switch (a) {
    case CU_MEM_ADVISE_SET_READ_MOSTLY: return "CU_MEM_ADVISE_SET_READ_MOSTLY";
    case CU_MEM_ADVISE_UNSET_READ_MOSTLY: return "CU_MEM_ADVISE_UNSET_READ_MOSTLY";
    case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: return "CU_MEM_ADVISE_SET_PREFERRED_LOCATION";
    case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: return "CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION";
    case CU_MEM_ADVISE_SET_ACCESSED_BY: return "CU_MEM_ADVISE_SET_ACCESSED_BY";
    case CU_MEM_ADVISE_UNSET_ACCESSED_BY: return "CU_MEM_ADVISE_UNSET_ACCESSED_BY";
  }
  return "not a CUmem_advise";
}

// Whether every page of [p, p + n) is mapped in this process (pageable memory must be "a valid,
// host-accessible region", documented).
bool host_mapped(uintptr_t p, size_t n) {
  const size_t ps = mem::page_size();
  uintptr_t a = p / ps * ps;
  const uintptr_t end = p + n;
  std::vector<unsigned char> vec(1024);
  while (a < end) {
    const size_t len = std::min<uintptr_t>(end - a + ps - 1, uintptr_t(vec.size()) * ps) / ps * ps;
    if (::mincore(reinterpret_cast<void*>(a), len, vec.data()) != 0 && errno == ENOMEM) return false;
    a += len;
  }
  return true;
}

// The advice state of one allocation from a managed pool (cuMemPoolCreate with
// CU_MEM_ALLOCATION_TYPE_MANAGED). Measured on the H200: prefetches and range queries work on
// it, cuMemAdvise is NOT_SUPPORTED, and its preferred location is the pool's location.
struct PoolManagedAdvice {
  PoolManagedAdvice(uint64_t id, size_t bytes) : buffer_id(id), map(bytes) {}
  uint64_t buffer_id;  // the allocation it belongs to (a new one at the same address starts afresh)
  AdviceMap map;
  std::mutex m;
};

// By allocation base. Entries are replaced, not freed, when their allocation goes: at most one
// per address a managed pool handed out and someone prefetched or queried.
std::mutex g_pool_advice_m;
std::unordered_map<uintptr_t, std::shared_ptr<PoolManagedAdvice>>* g_pool_advice =
    new std::unordered_map<uintptr_t, std::shared_ptr<PoolManagedAdvice>>();  // leaked: workers may outlive main()

std::shared_ptr<PoolManagedAdvice> pool_advice(const mem::Pool& pool, const mem::PoolAlloc& a) {
  std::lock_guard lk(g_pool_advice_m);
  auto& slot = (*g_pool_advice)[a.base];
  if (!slot || slot->buffer_id != a.buffer_id) {
    slot = std::make_shared<PoolManagedAdvice>(a.buffer_id, a.size);
    const auto& pp = pool.props();
    int type = 0, id = -2;
    switch (pp.loc_type) {
      case CU_MEM_LOCATION_TYPE_DEVICE: type = pp.loc_type; id = pp.loc_id; break;
      case CU_MEM_LOCATION_TYPE_HOST: type = pp.loc_type; id = 0; break;  // measured: reported as id 0
      case CU_MEM_LOCATION_TYPE_HOST_NUMA: type = pp.loc_type; id = pp.loc_id; break;
      default: break;  // a pool without a location: no preferred location
    }
    slot->map.update(0, slot->map.pages(), [&](mem::PagePolicy& p) {
      p.pl_type = type;
      p.pl_id = id;
    });
  }
  return slot;
}

// What an advise, prefetch or query addresses: the advice map of one managed allocation, or
// (pageable memory) the process-wide one, and the byte offset of the range in it.
struct Target {
  RangePtr range;         // the managed allocation (null for pageable memory)
  AdviceMap* map = nullptr;
  std::mutex* m = nullptr;
  uintptr_t off = 0;
  bool pageable = false;
  std::shared_ptr<PoolManagedAdvice> pool;  // set for managed-pool memory
};

// [p, p + n) as one managed allocation (measured: else INVALID_VALUE: device, pinned, pageable,
// NULL, freed; length 0; past the end, even into an adjacent managed allocation), or pageable
// host memory where the current device has PAGEABLE_MEMORY_ACCESS.
Errc target(uintptr_t p, size_t n, int ordinal, const char* api, const char* what, Target& t) {
  if (p == 0) return fail(Errc::invalid_value, "{}: {} is NULL", api, what);
  RangePtr r = AddressSpace::get().find(p);
  if (r && r->kind == Kind::managed) {
    TRY(mem::managed_range(p, n, api, what, r));
    t.range = std::move(r);
    t.map = &t.range->managed->advice;
    t.m = &t.range->managed->advice_m;
    t.off = p - t.range->base;
    return Errc::success;
  }
  if (r && r->kind == Kind::pool && r->pool->managed()) {
    mem::PoolAlloc a;
    if (!r->pool->lookup(p, a))
      return fail(Errc::invalid_value, "{}: {} = {:#x} lies in {} but in no live allocation", api, what, p,
                  r->pool->describe());
    if (n == 0) return fail(Errc::invalid_value, "{}: the length is 0", api);
    if (n > a.size - (p - a.base))
      return fail(Errc::invalid_value, "{}: [{:#x}, +{}) runs past the end of its allocation ({} bytes at {:#x} "
                  "from {})", api, p, n, a.size, a.base, r->pool->describe());
    t.pool = pool_advice(*r->pool, a);
    t.map = &t.pool->map;
    t.m = &t.pool->m;
    t.off = p - a.base;
    return Errc::success;
  }
  if (r)
    return fail(Errc::invalid_value, "{}: {} = {:#x} is {}, not managed memory: advice, prefetches and range "
                "attributes apply to cuMemAllocManaged memory{}", api, what, p, mem::kind_name(r->kind),
                pageable_access(ordinal) ? " and pageable host memory (this is neither)" : "");
  if (!pageable_access(ordinal))
    return fail(Errc::invalid_value, "{}: {} = {:#x} is not managed memory (no allocation the driver knows "
                "contains it); pageable host memory qualifies only on devices with "
                "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, which device {} does not have", api, what, p, ordinal);
  if (n == 0) return fail(Errc::invalid_value, "{}: the length is 0", api);
  if (n > UINTPTR_MAX - p)
    return fail(Errc::invalid_value, "{}: [{:#x}, +{}) wraps around the address space", api, p, n);
  if (RangePtr o = AddressSpace::get().find_overlap(p, n))
    return fail(Errc::invalid_value, "{}: pageable range [{:#x}, +{}) runs into {} at {:#x}: a range is either "
                "pageable host memory or lies in one managed allocation", api, p, n, mem::kind_name(o->kind),
                o->base);
  if (!host_mapped(p, n))
    return fail(Errc::invalid_value, "{}: [{:#x}, +{}) is not managed memory, and not valid pageable host "
                "memory either: part of it is not mapped in this process", api, p, n);
  t.map = &mem::pageable_advice();
  t.m = &mem::pageable_advice_mutex();
  t.off = p;
  t.pageable = true;
  return Errc::success;
}

int current_ordinal(const Context* ctx) { return ctx ? ctx->ordinal() : 0; }

// ---- cuMemAdvise ------------------------------------------------------------------------------

Errc advise(CUdeviceptr devPtr, size_t count, int advice, CUmemLocation loc, const char* api) {
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));  // measured: NOT_INITIALIZED before cuInit, INVALID_CONTEXT without one
  const int t = loc.type, id = loc.id;
  const bool known_type = t == CU_MEM_LOCATION_TYPE_DEVICE || t == CU_MEM_LOCATION_TYPE_HOST ||
                          t == CU_MEM_LOCATION_TYPE_HOST_NUMA || t == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  switch (advice) {
    case CU_MEM_ADVISE_SET_READ_MOSTLY:
    case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
    case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
      // Measured: the location is not used; any id of a known type passes, NONE and unknown types do not.
      if (!known_type)
        return fail(Errc::invalid_value, "{}: {} needs a location of type DEVICE, HOST, HOST_NUMA or "
                    "HOST_NUMA_CURRENT (any id); location.type {} is {}", api, advice_name(advice), t,
                    mem::location_name(t));
      break;
    case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
      if (t == CU_MEM_LOCATION_TYPE_DEVICE && !valid_ordinal(id))  // measured: 99 and -1
        return fail(Errc::invalid_value, "{}: CU_MEM_ADVISE_SET_PREFERRED_LOCATION: location is device {}, which "
                    "does not exist ({} device(s))", api, id, Driver::get().device_count());
      if (t == CU_MEM_LOCATION_TYPE_DEVICE && !concurrent_access(id))
        // Reported on devices without it (Windows, WSL, Jetson): cudaErrorInvalidDevice.
        return fail(Errc::invalid_device, "{}: CU_MEM_ADVISE_SET_PREFERRED_LOCATION: device {} has "
                    "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0 and cannot be a preferred location", api, id);
      if (t == CU_MEM_LOCATION_TYPE_HOST_NUMA && !Driver::get().host_numa_node(id))  // measured: 99
        return fail(Errc::invalid_value, "{}: CU_MEM_ADVISE_SET_PREFERRED_LOCATION: location is host NUMA node {}, "
                    "which this machine does not have", api, id);
      if (!known_type)
        return fail(Errc::invalid_value, "{}: CU_MEM_ADVISE_SET_PREFERRED_LOCATION needs a location of type DEVICE, "
                    "HOST, HOST_NUMA or HOST_NUMA_CURRENT; location.type {} is {}", api, t, mem::location_name(t));
      break;
    case CU_MEM_ADVISE_SET_ACCESSED_BY:
    case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
      // Measured: a device that exists or the host (any id); HOST_NUMA(_CURRENT) are refused.
      if (t == CU_MEM_LOCATION_TYPE_DEVICE && !valid_ordinal(id))
        return fail(Errc::invalid_value, "{}: {}: location is device {}, which does not exist ({} device(s))", api,
                    advice_name(advice), id, Driver::get().device_count());
      if (t != CU_MEM_LOCATION_TYPE_DEVICE && t != CU_MEM_LOCATION_TYPE_HOST)
        return fail(Errc::invalid_value, "{}: {} needs a location of type DEVICE or HOST (a processor that "
                    "accesses the memory); location.type {} is {}", api, advice_name(advice), t,
                    mem::location_name(t));
      break;
    default:  // measured: 0, 7, 100
      return fail(Errc::invalid_value, "{}: advice {} is not a CUmem_advise (1 to 6: SET/UNSET_READ_MOSTLY, "
                  "SET/UNSET_PREFERRED_LOCATION, SET/UNSET_ACCESSED_BY)", api, advice);
  }
  // Measured (H100, difftest): unsetting the preferred location of NULL with a host NUMA location
  // is a success, the pointer unchecked (with a device location it is INVALID_VALUE).
  const bool numa = t == CU_MEM_LOCATION_TYPE_HOST_NUMA || t == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
  if (devPtr == 0 && numa && advice == CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION) return Errc::success;
  Target tg;
  TRY(target(devPtr, count, current_ordinal(ctx), api, "devPtr", tg));
  if (tg.pool)  // measured: every advice, whole allocation or part of it
    return fail(Errc::not_supported, "{}: {:#x} is memory from a managed memory pool; cuMemAdvise does not apply "
                "to pool allocations (prefetches and range queries do; a pool's location is its allocations' "
                "preferred location)", api, devPtr);
  if (tg.pageable && t == CU_MEM_LOCATION_TYPE_DEVICE &&
      (advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION || advice == CU_MEM_ADVISE_SET_ACCESSED_BY) &&
      !pageable_access(id))  // documented
    return fail(Errc::invalid_value, "{}: {} on pageable host memory names device {}, which has no "
                "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS", api, advice_name(advice), id);
  // Measured: HOST_NUMA and HOST_NUMA_CURRENT are accepted by the read-mostly and preferred-location
  // advice but change nothing that cuMemRangeGetAttribute shows.
  if (numa) return Errc::success;
  const int proc = t == CU_MEM_LOCATION_TYPE_DEVICE ? id : -1;  // -1: CU_DEVICE_CPU
  size_t first = 0, last = 0;
  mem::pages_touched(tg.off, count, first, last);
  std::lock_guard lk(*tg.m);
  switch (advice) {
    case CU_MEM_ADVISE_SET_READ_MOSTLY:
      tg.map->update(first, last, [](mem::PagePolicy& p) { p.read_mostly = true; });
      break;
    case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
      tg.map->update(first, last, [](mem::PagePolicy& p) { p.read_mostly = false; });
      break;
    case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
      tg.map->update(first, last, [&](mem::PagePolicy& p) {
        p.pl_type = t;
        p.pl_id = proc;
      });
      break;
    case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:  // measured: whatever device or host is named
      tg.map->update(first, last, [](mem::PagePolicy& p) {
        p.pl_type = 0;
        p.pl_id = -2;
      });
      break;
    case CU_MEM_ADVISE_SET_ACCESSED_BY:  // measured on the H200: once each, devices by ordinal, then the host
      tg.map->update(first, last, [&](mem::PagePolicy& p) {
        if (std::find(p.accessed_by.begin(), p.accessed_by.end(), proc) != p.accessed_by.end()) return;
        auto key = [](int d) { return d >= 0 ? d : INT_MAX; };  // the host (-1) last
        auto at = std::find_if(p.accessed_by.begin(), p.accessed_by.end(), [&](int d) { return key(d) > key(proc); });
        p.accessed_by.insert(at, proc);
      });
      break;
    case CU_MEM_ADVISE_UNSET_ACCESSED_BY:  // measured: the rest move up; unsetting what is not set is fine
      tg.map->update(first, last, [&](mem::PagePolicy& p) {
        p.accessed_by.erase(std::remove(p.accessed_by.begin(), p.accessed_by.end(), proc), p.accessed_by.end());
      });
      break;
  }
  return Errc::success;
}

// ---- cuMemPrefetchAsync -----------------------------------------------------------------------

// One prefetch, checked: its range and where it goes (the id as the range attributes report it).
struct PrefetchPlan {
  Target tg;
  int type = 0, id = 0;
  size_t count = 0;
};

// Measured: where cuMemPrefetchAsync answers INVALID_DEVICE (a destination device that does not
// exist), the batch forms answer INVALID_VALUE; they report a host destination with the id given
// (cuMemPrefetchAsync: -1).
Errc plan_prefetch(CUdeviceptr devPtr, size_t count, CUmemLocation loc, const Context* ctx, bool batch,
                   const char* api, const char* what, PrefetchPlan& out) {
  const Errc bad_device = batch ? Errc::invalid_value : Errc::invalid_device;
  const int t = loc.type;
  int id = loc.id;
  switch (t) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (!valid_ordinal(id) && devPtr == 0)  // measured (difftest): the NULL pointer is found first
        return fail(Errc::invalid_value, "{}: {} is NULL", api, what);
      if (!valid_ordinal(id))  // measured: 99 and -1
        return fail(bad_device, "{}: the destination is device {}, which does not exist ({} device(s))", api, id,
                    Driver::get().device_count());
      if (!concurrent_access(id))  // documented; reported as cudaErrorInvalidDevice on WSL and Jetson
        return fail(bad_device, "{}: the destination device {} has "
                    "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0: managed memory cannot be prefetched to it",
                    api, id);
      break;
    case CU_MEM_LOCATION_TYPE_HOST:
      if (!batch) id = -1;  // measured: any id, reported as -1
      break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
      if (!Driver::get().host_numa_node(id))  // measured: 99
        return fail(Errc::invalid_value, "{}: the destination is host NUMA node {}, which this machine does not "
                    "have", api, id);
      break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      id = current_numa(current_ordinal(ctx));  // documented: the id is ignored
      break;
    default:  // measured: NONE, 99
      return fail(Errc::invalid_value, "{}: the destination's location.type {} is {}; it must be DEVICE, HOST, "
                  "HOST_NUMA or HOST_NUMA_CURRENT", api, t, mem::location_name(t));
  }
  TRY(target(devPtr, count, current_ordinal(ctx), api, what, out.tg));
  if (out.tg.pageable && t == CU_MEM_LOCATION_TYPE_DEVICE && !pageable_access(id))  // documented
    return fail(bad_device, "{}: pageable host memory cannot be prefetched to device {}, which has no "
                "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS", api, id);
  out.type = t;
  out.id = id;
  out.count = count;
  return Errc::success;
}

// Measured: the location is reported as soon as the call returns, before the stream runs it.
void record_prefetch(const PrefetchPlan& pf) {
  size_t first = 0, last = 0;
  mem::pages_touched(pf.tg.off, pf.count, first, last);
  std::lock_guard lk(*pf.tg.m);
  pf.tg.map->update(first, last, [&](mem::PagePolicy& p) {
    p.lp_type = pf.type;
    p.lp_id = pf.id;
  });
}

Errc prefetch(CUdeviceptr devPtr, size_t count, CUmemLocation loc, unsigned flags, CUstream h, bool pt,
              const char* api) {
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));  // measured: NOT_INITIALIZED, INVALID_CONTEXT
  if (flags != 0)  // measured: 0x1, 0x2, 0x80000000
    return fail(Errc::invalid_value, "{}: flags {:#x} must be 0 (no flags are defined)", api, flags);
  PrefetchPlan pf;
  TRY(plan_prefetch(devPtr, count, loc, ctx, false, api, "devPtr", pf));
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, pt, api, s));  // destroyed or garbage handles crash NVIDIA's driver (measured)
  record_prefetch(pf);
  // The migration itself has nothing to move (one copy of the memory): an operation of the
  // stream, in its order, that keeps it busy until earlier work is done.
  s->enqueue(nullptr, {}, true);
  return Errc::success;
}

// ---- cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync ---------
// Measured: the NULL and legacy streams, count 0, flags, NULL lists, numPrefetchLocs 0 or above
// count, prefetchLocIdxs not starting at 0 or reaching count answer INVALID_VALUE (repeated
// indices pass: the later entry applies); so does each range cuMemPrefetchAsync refuses, and a
// destination device that does not exist. On a capturing stream: STREAM_CAPTURE_UNSUPPORTED,
// and the capture is invalidated. Discarding keeps the bytes (documented: a discarded range
// reads indeterminate values until written or prefetched) and the range attributes.

struct BatchLists {
  CUdeviceptr* ptrs;
  size_t* sizes;
  size_t count;
  CUmemLocation* locs;  // null for cuMemDiscardBatchAsync
  size_t* idx;
  size_t nlocs;
};

Errc check_batch_lists(const BatchLists& b, bool prefetching, unsigned long long flags, CUstream h, const char* api) {
  if (!h || h == CU_STREAM_LEGACY)
    return fail(Errc::invalid_value, "{}: hStream is {}: a batch must go to a stream other than the legacy default "
                "stream (a created stream or CU_STREAM_PER_THREAD)", api, h ? "CU_STREAM_LEGACY" : "NULL");
  if (b.count == 0 || !b.ptrs || !b.sizes)
    return fail(Errc::invalid_value, "{}: {}", api, b.count == 0 ? "count is 0" : "dptrs and sizes must be set");
  if (flags != 0) return fail(Errc::invalid_value, "{}: flags = {:#x} must be 0", api, flags);
  if (!prefetching) return Errc::success;
  if (b.nlocs == 0 || !b.locs || !b.idx)
    return fail(Errc::invalid_value, "{}: every range needs a location: numPrefetchLocs = {}, prefetchLocs {}, "
                "prefetchLocIdxs {}", api, b.nlocs, b.locs ? "set" : "NULL", b.idx ? "set" : "NULL");
  if (b.nlocs > b.count) return fail(Errc::invalid_value, "{}: numPrefetchLocs {} is more than count {}", api, b.nlocs, b.count);
  if (b.idx[0] != 0) return fail(Errc::invalid_value, "{}: prefetchLocIdxs[0] = {}; it must be 0", api, b.idx[0]);
  for (size_t k = 0; k < b.nlocs; ++k)
    if (b.idx[k] >= b.count)
      return fail(Errc::invalid_value, "{}: prefetchLocIdxs[{}] = {} is not below count {}", api, k, b.idx[k], b.count);
  return Errc::success;
}

// pt: a _ptsz form, which takes a NULL stream as the per-thread stream (measured).
Errc batch_prefetch(const BatchLists& b, bool prefetching, unsigned long long flags, CUstream h, bool pt,
                    const char* api) {
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));
  if (pt && !h) h = CU_STREAM_PER_THREAD;
  TRY(check_batch_lists(b, prefetching, flags, h, api));
  std::shared_ptr<Stream> s;
  TRY(resolve_stream(h, false, api, s));
  TRY(cap::refuse_if_capturing(*s, api));
  // Every range is checked before any is recorded: a bad batch changes nothing.
  std::vector<PrefetchPlan> plan(b.count);
  size_t k = 0;
  for (size_t i = 0; i < b.count; ++i) {
    const std::string what = fmt::format("dptrs[{}]", i);
    if (!prefetching) {
      TRY(target(b.ptrs[i], b.sizes[i], current_ordinal(ctx), api, what.c_str(), plan[i].tg));
      continue;
    }
    while (k + 1 < b.nlocs && b.idx[k + 1] <= i) ++k;
    TRY(plan_prefetch(b.ptrs[i], b.sizes[i], b.locs[k], ctx, true, api, what.c_str(), plan[i]));
  }
  if (prefetching)
    for (const PrefetchPlan& pf : plan) record_prefetch(pf);
  s->enqueue(nullptr, {}, true);
  return Errc::success;
}

CUmemLocation from_device(CUdevice d) {
  CUmemLocation l;
  std::memset(&l, 0, sizeof l);
  if (d == CU_DEVICE_CPU) {
    l.type = CU_MEM_LOCATION_TYPE_HOST;
    l.id = 0;
  } else {
    l.type = CU_MEM_LOCATION_TYPE_DEVICE;
    l.id = d;
  }
  return l;
}

// ---- cuMemRangeGetAttribute(s) ----------------------------------------------------------------

const char* attribute_name(int a) {
  switch (a) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: return "CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY";
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: return "CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION";
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: return "CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY";
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: return "CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION";
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE: return "CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE";
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: return "CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID";
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
      return "CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE";
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: return "CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID";
  }
  return "not a CUmem_range_attribute";
}

// One requested attribute, checked before anything is written (measured: a bad entry of
// cuMemRangeGetAttributes leaves every output untouched). `which` names the entry for the plural.
Errc check_request(const void* data, size_t size, int attr, const char* api, const std::string& which) {
  if (!data) return fail(Errc::invalid_value, "{}: {}data is NULL", api, which);
  switch (attr) {
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY:
      if (size == 0 || size % 4 != 0)  // measured: 0, 2, 3, 6 refused; 4, 8, 12, 16, 20 accepted
        return fail(Errc::invalid_value, "{}: {}CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY needs dataSize a nonzero "
                    "multiple of 4 (an array of 32-bit device ids); got {}", api, which, size);
      return Errc::success;
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
      if (size != 4)  // measured: 0, 2, 3, 8, 16 refused
        return fail(Errc::invalid_value, "{}: {}{} is one 32-bit value: dataSize must be 4, got {}", api, which,
                    attribute_name(attr), size);
      return Errc::success;
  }
  return fail(Errc::invalid_value, "{}: {}attribute {} is not a CUmem_range_attribute (1 to 8)", api, which,
              attr);  // measured: 0, 9, 100
}

void write_attribute(void* data, size_t size, int attr, const mem::RangeAttributes& a) {
  int v = 0;
  switch (attr) {
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
      // Documented: as many as fit (no promise which); measured: unused slots hold -2.
      int* out = static_cast<int*>(data);
      const size_t slots = size / 4;
      for (size_t i = 0; i < slots; ++i) out[i] = i < a.accessed_by.size() ? a.accessed_by[i] : -2;
      return;
    }
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: v = a.read_mostly; break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: v = a.preferred; break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: v = a.last_prefetch; break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE: v = a.preferred_type; break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: v = a.preferred_id; break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE: v = a.last_prefetch_type; break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: v = a.last_prefetch_id; break;
  }
  std::memcpy(data, &v, sizeof v);
}

Errc read_range(CUdeviceptr devPtr, size_t count, const Context* ctx, const char* api, mem::RangeAttributes& out) {
  Target tg;
  TRY(target(devPtr, count, current_ordinal(ctx), api, "devPtr", tg));
  size_t first = 0, last = 0;
  mem::pages_queried(tg.off, count, first, last);
  std::lock_guard lk(*tg.m);
  out = tg.map->read(first, last);
  return Errc::success;
}

}  // namespace

Errc cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location) noexcept {
  return advise(devPtr, count, advice, location, "cuMemAdvise");
}

// The CUDA 8 form (a CUdevice; CU_DEVICE_CPU for the host): the CUDA 13 one with that location.
Errc cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) noexcept {
  return advise(devPtr, count, advice, from_device(device), "cuMemAdvise");
}

Errc cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                           CUstream hStream) noexcept {
  return prefetch(devPtr, count, location, flags, hStream, false, "cuMemPrefetchAsync");
}
Errc cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                                CUstream hStream) noexcept {
  return prefetch(devPtr, count, location, flags, hStream, true, "cuMemPrefetchAsync");
}
Errc cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) noexcept {
  return prefetch(devPtr, count, from_device(dstDevice), 0, hStream, false, "cuMemPrefetchAsync");
}
Errc cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) noexcept {
  return prefetch(devPtr, count, from_device(dstDevice), 0, hStream, true, "cuMemPrefetchAsync");
}

Errc cuMemRangeGetAttribute(void* data, size_t dataSize, CUmem_range_attribute attribute, CUdeviceptr devPtr,
                            size_t count) noexcept {
  const char* api = "cuMemRangeGetAttribute";
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));  // measured: NOT_INITIALIZED, INVALID_CONTEXT
  TRY(check_request(data, dataSize, attribute, api, ""));
  mem::RangeAttributes a;
  TRY(read_range(devPtr, count, ctx, api, a));
  write_attribute(data, dataSize, attribute, a);
  return Errc::success;
}

Errc cuMemRangeGetAttributes(void** data, size_t* dataSizes, CUmem_range_attribute* attributes,
                             size_t numAttributes, CUdeviceptr devPtr, size_t count) noexcept {
  const char* api = "cuMemRangeGetAttributes";
  Context* ctx = nullptr;
  TRY(require_context(api, ctx));
  TRY(need(data, api, "data"));  // measured: each NULL array, and all NULL with numAttributes 0
  TRY(need(dataSizes, api, "dataSizes"));
  TRY(need(attributes, api, "attributes"));
  if (numAttributes == 0)  // measured
    return fail(Errc::invalid_value, "{}: numAttributes is 0", api);
  for (size_t i = 0; i < numAttributes; ++i)
    TRY(check_request(data[i], dataSizes[i], attributes[i], api, fmt::format("entry {}: ", i)));
  mem::RangeAttributes a;
  TRY(read_range(devPtr, count, ctx, api, a));
  for (size_t i = 0; i < numAttributes; ++i) write_attribute(data[i], dataSizes[i], attributes[i], a);
  return Errc::success;
}

Errc cuMemPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* prefetchLocs,
                             size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                             CUstream hStream) noexcept {
  return batch_prefetch({dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs}, true, flags, hStream,
                        false, "cuMemPrefetchBatchAsync");
}
Errc cuMemPrefetchBatchAsync_ptsz(CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* prefetchLocs,
                                  size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                                  CUstream hStream) noexcept {
  return batch_prefetch({dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs}, true, flags, hStream,
                        true, "cuMemPrefetchBatchAsync");
}
Errc cuMemDiscardBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count, unsigned long long flags,
                            CUstream hStream) noexcept {
  return batch_prefetch({dptrs, sizes, count, nullptr, nullptr, 0}, false, flags, hStream, false,
                        "cuMemDiscardBatchAsync");
}
Errc cuMemDiscardBatchAsync_ptsz(CUdeviceptr* dptrs, size_t* sizes, size_t count, unsigned long long flags,
                                 CUstream hStream) noexcept {
  return batch_prefetch({dptrs, sizes, count, nullptr, nullptr, 0}, false, flags, hStream, true,
                        "cuMemDiscardBatchAsync");
}
Errc cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* prefetchLocs,
                                       size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                                       CUstream hStream) noexcept {
  return batch_prefetch({dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs}, true, flags, hStream,
                        false, "cuMemDiscardAndPrefetchBatchAsync");
}
Errc cuMemDiscardAndPrefetchBatchAsync_ptsz(CUdeviceptr* dptrs, size_t* sizes, size_t count,
                                            CUmemLocation* prefetchLocs, size_t* prefetchLocIdxs,
                                            size_t numPrefetchLocs, unsigned long long flags,
                                            CUstream hStream) noexcept {
  return batch_prefetch({dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs}, true, flags, hStream,
                        true, "cuMemDiscardAndPrefetchBatchAsync");
}

}  // namespace cuda_shim::api
