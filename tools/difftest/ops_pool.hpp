// difftest ops of the pool family, for the probe cases in tests/probe/cases/pool*.cases
// (docs/probe.md). Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// Api table, what it records in r. Returns false for an op it does not know.
//
// Value tokens (sizes, attribute values, props fields) read as numbers (0x.., -1 wraps), `max`
// (all ones), `total` (device 0's memory), `total+N`, `total*N`. Location tokens: those of
// Exec::loc (d<N>, h<N>, n<N>, c, x = NONE) and t<N> for a raw location type N (id 0).
#pragma once

#include <atomic>
#include <chrono>
#include <dlfcn.h>
#include <thread>

namespace difftest {
namespace pool_ops {

inline uint64_t value(Exec& e, const std::string& s) {
  if (s == "max") return UINT64_MAX;
  if (s.rfind("total", 0) == 0) {
    uint64_t v = e.total;
    if (s.size() > 6 && s[5] == '+') v += strtoull(s.c_str() + 6, nullptr, 0);
    if (s.size() > 6 && s[5] == '*') v *= strtoull(s.c_str() + 6, nullptr, 0);
    return v;
  }
  if (!s.empty() && s[0] == '-') return static_cast<uint64_t>(strtoll(s.c_str(), nullptr, 0));
  return strtoull(s.c_str(), nullptr, 0);
}

inline CUmemLocation location(Exec& e, size_t k) {
  const std::string& s = e.a(k);
  if (!s.empty() && s[0] == 't') {
    CUmemLocation l{};
    l.type = static_cast<CUmemLocationType>(strtol(s.c_str() + 1, nullptr, 0));
    return l;
  }
  return e.loc(k);
}

// CUmemPoolProps of a plain device-0 pool, edited by key=value tokens from t[k] on:
// at (allocType), ht (handleTypes), loc (a location token), lt / lid (raw location type / id),
// max (maxSize), sa (win32SecurityAttributes = that value), usage, r<N> (reserved[N]).
inline CUmemPoolProps props(Exec& e, size_t k) {
  CUmemPoolProps p{};
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  for (; k < e.t.size(); ++k) {
    const std::string& w = e.t[k];
    size_t eq = w.find('=');
    if (eq == std::string::npos) continue;
    std::string key = w.substr(0, eq), vs = w.substr(eq + 1);
    uint64_t v = value(e, vs);
    if (key == "at") p.allocType = static_cast<CUmemAllocationType>(v);
    else if (key == "ht") p.handleTypes = static_cast<CUmemAllocationHandleType>(v);
    else if (key == "loc") { e.t.push_back(vs); p.location = location(e, e.t.size() - 1); e.t.pop_back(); }
    else if (key == "lt") p.location.type = static_cast<CUmemLocationType>(v);
    else if (key == "lid") p.location.id = static_cast<int>(v);
    else if (key == "max") p.maxSize = v;
    else if (key == "sa") p.win32SecurityAttributes = reinterpret_cast<void*>(static_cast<uintptr_t>(v));
    else if (key == "usage") p.usage = static_cast<unsigned short>(v);
    else if (key[0] == 'r' && key.size() > 1) {
      size_t i = strtoul(key.c_str() + 1, nullptr, 10);
      if (i < sizeof p.reserved) p.reserved[i] = static_cast<unsigned char>(v);
    }
  }
  return p;
}

// The stream blocker: a host function that waits until `release` (or 10 s) holds its stream.
inline std::atomic<int>& gate() { static std::atomic<int> g{0}; return g; }
inline void CUDA_CB hold(void*) {
  for (int i = 0; i < 200000 && !gate().load(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

// The runtime's entries, looked up by name (cudaError_t is an int; the structs the pool entries
// take have the driver's layout).
template <class F> F rtf(Exec& e, const char* n) { return reinterpret_cast<F>(e.api.rtsym(n)); }
#define DT_RT(e, r, n, sig, ...) \
  do { auto f_ = pool_ops::rtf<int(*) sig>(e, n); if (!f_) (r).ks("missing", n); else (e).RC(r, f_(__VA_ARGS__)); } while (0)

}  // namespace pool_ops

inline bool ops_pool(Exec& e, Rec& r) {
  using namespace pool_ops;
  const std::string& op = e.t[0];
  auto nullout = [&](size_t k) { return e.a(k) == "null"; };
  auto pool = [&](size_t k) { return e.h<CUmemoryPool>(k); };
  auto strm = [&](size_t k) { return e.h<CUstream>(k); };
  auto U = [](auto v) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v)); };
  // is: the OLDEST slot holding the answer (a default looked up first keeps its name when later
  // answers equal it), else Exec::nh's name.
  auto is = [&](uint64_t v) {
    if (e.rc != 0) return;
    for (auto& n : e.order)
      if (!e.slots[n].ptr && v && e.slots[n].v == v) { r.ks("is", n); return; }
    r.ks("is", e.nh(v));
  };
  auto pooled = [&](size_t k) { if (e.rc == 0) e.slots[e.a(k)].pooled = true; };
  auto attr = [&](CUmemoryPool p, int at, uint64_t& v) {
    v = 0; auto f = DT_FN(e, cuMemPoolGetAttribute);
    return f ? f(p, static_cast<CUmemPool_attribute>(at), &v) : -1;
  };

  // pool_props P KEY=VALUE...: cuMemPoolCreate with every props field settable (props()).
  // P `null`: a NULL output; a token `props=null`: NULL props.
  if (op == "pool_props") {
    CUmemPoolProps p = props(e, 2);
    bool np = false;
    for (auto& w : e.t) np |= w == "props=null";
    CUmemoryPool q = Exec::sent<CUmemoryPool>();
    DT_CALL(e, r, cuMemPoolCreate, nullout(1) ? nullptr : &q, np ? nullptr : &p);
    e.out(r, e.rc, "out", U(q), 0, false, 1);
    return true;
  }
  // pool_acct POOL: reserved / used, current and high, as numbers; rc the first failure.
  if (op == "pool_acct") {
    static const char* k[] = {"resC", "resH", "usedC", "usedH"};
    int first = 0;
    for (int i = 0; i < 4; ++i) {
      uint64_t v; int rc = attr(pool(1), 5 + i, v);
      if (rc && !first) first = rc;
      if (rc) r.ks(k[i], "E" + std::to_string(rc)); else r.kv(k[i], static_cast<long long>(v));
    }
    e.RC(r, first);
    return true;
  }
  // pool_attrs POOL: threshold and the three reuse policies (as the driver writes them).
  if (op == "pool_attrs") {
    static const char* k[] = {"follow", "opp", "internal", "thr"};
    int first = 0;
    for (int i = 0; i < 4; ++i) {
      uint64_t v; int rc = attr(pool(1), 1 + i, v);
      if (i < 3) v &= 0xffffffffu;
      if (rc && !first) first = rc;
      if (rc) r.ks(k[i], "E" + std::to_string(rc)); else r.ks(k[i], std::to_string(v));
    }
    e.RC(r, first);
    return true;
  }
  // pool_reuse POOL FOLLOW OPP INTERNAL: the three reuse policies at once.
  if (op == "pool_reuse") {
    int first = 0;
    auto f = DT_FN(e, cuMemPoolSetAttribute);
    for (int i = 0; i < 3 && f; ++i) {
      int v = static_cast<int>(e.num(2 + i));
      int rc = f(pool(1), static_cast<CUmemPool_attribute>(1 + i), &v);
      if (rc && !first) first = rc;
    }
    e.RC(r, f ? first : -1);
    return true;
  }
  // pool_fill NAME POOL SIZE MAX STREAM: up to MAX allocations into NAME1...; records how many
  // succeeded, the code that stopped them (0: none), and where consecutive ones are not SIZE apart
  // (the first 16 such places, then how many more). POOL `cur`: cuMemAllocAsync.
  if (op == "pool_fill") {
    auto f = DT_FN(e, cuMemAllocFromPoolAsync);
    auto g = DT_FN(e, cuMemAllocAsync);
    uint64_t size = value(e, e.a(3)), prev = 0;
    int n = 0, rc = 0, more = 0, listed = 0;
    std::string jumps;
    for (uint64_t i = 0; f && g && i < e.num(4); ++i) {
      CUdeviceptr d = 0;
      rc = e.a(2) == "cur" ? g(&d, size, strm(5)) : f(&d, size, pool(2), strm(5));
      if (rc) break;
      ++n;
      std::string nm = e.a(1) + std::to_string(n);
      e.def(nm, d, size, true);
      e.slots[nm].pooled = true;
      if (prev && d - prev != size && ++listed <= 16)
        jumps += (jumps.empty() ? "" : ";") + std::to_string(n - 1) + ":" + std::to_string(static_cast<long long>(d - prev));
      else if (prev && d - prev != size) ++more;
      prev = d;
    }
    e.def(e.a(1), 0, static_cast<uint64_t>(n), false);
    e.RC(r, f && g ? rc : -1);
    r.kv("n", n);
    r.ks("jumps", jumps + (more ? ";+" + std::to_string(more) : ""));
    return true;
  }
  // free_all NAME STREAM [KEEP]: cuMemFreeAsync of NAME1... (pool_fill's), all but number KEEP.
  if (op == "free_all") {
    Slot* s = e.slot(1);
    int first = 0;
    for (uint64_t i = 1; s && i <= s->size; ++i) {
      if (e.t.size() > 3 && i == e.num(3)) continue;
      int rc = e.api.cuMemFreeAsync(e.slots[e.a(1) + std::to_string(i)].v, strm(2));
      if (rc && !first) first = rc;
    }
    e.RC(r, first);
    return true;
  }
  // pool_many MAX: device pools created until one fails (at most MAX), then destroyed.
  if (op == "pool_many") {
    std::vector<CUmemoryPool> v;
    CUmemPoolProps p = props(e, 2);
    int rc = 0;
    for (uint64_t i = 0; i < e.num(1); ++i) {
      CUmemoryPool q = nullptr;
      rc = e.api.cuMemPoolCreate(&q, &p);
      if (rc) break;
      v.push_back(q);
    }
    for (auto q : v) e.api.cuMemPoolDestroy(q);
    e.RC(r, rc);
    r.kv("n", static_cast<long long>(v.size()));
    return true;
  }
  // ptr_delta A AOFF B BOFF: the distance from one pointer to another (placement in a pool).
  if (op == "ptr_delta") {
    e.RC(r, 0);
    r.kv("d", static_cast<long long>(e.ptr(3) - e.ptr(1)));
    return true;
  }
  // ptr_mod P OFF M: the address modulo M (where an allocation sits in its chunk).
  if (op == "ptr_mod") {
    e.RC(r, 0);
    r.kv("mod", static_cast<long long>(e.ptr(1) % (e.num(3) ? e.num(3) : 1)));
    return true;
  }
  // pool_access_set POOL COUNT (LOC FLAGS)... | POOL COUNT null: cuMemPoolSetAccess with COUNT
  // descriptors (or a NULL array).
  if (op == "pool_access_set") {
    std::vector<CUmemAccessDesc> d;
    for (size_t k = 3; k + 1 < e.t.size(); k += 2) {
      CUmemAccessDesc x{}; x.location = location(e, k); x.flags = static_cast<CUmemAccess_flags>(e.num(k + 1)); d.push_back(x);
    }
    DT_CALL(e, r, cuMemPoolSetAccess, pool(1), e.a(3) == "null" || d.empty() ? nullptr : d.data(), static_cast<size_t>(e.num(2)));
    return true;
  }
  // pool_access_get POOL LOC [nullflags|nullloc]: the flags as the driver left them (77 before).
  if (op == "pool_access_get") {
    CUmemAccess_flags f = static_cast<CUmemAccess_flags>(77); CUmemLocation l = location(e, 2);
    DT_CALL(e, r, cuMemPoolGetAccess, e.a(3) == "nullflags" ? nullptr : &f, pool(1), e.a(3) == "nullloc" ? nullptr : &l);
    r.kv("flags", f);
    return true;
  }
  // mem_pool P def|cur LOC TYPE: cuMemGetDefaultMemPool / cuMemGetMemPool (P or LOC `null`).
  if (op == "mem_pool") {
    CUmemoryPool q = Exec::sent<CUmemoryPool>(); CUmemLocation l = location(e, 3);
    auto ty = static_cast<CUmemAllocationType>(value(e, e.a(4)));
    if (e.a(2) == "def") DT_CALL(e, r, cuMemGetDefaultMemPool, nullout(1) ? nullptr : &q, e.a(3) == "null" ? nullptr : &l, ty);
    else DT_CALL(e, r, cuMemGetMemPool, nullout(1) ? nullptr : &q, e.a(3) == "null" ? nullptr : &l, ty);
    is(U(q)); e.out(r, e.rc, "out", U(q), 0, false, 1);
    return true;
  }
  // dev_pool P def|cur DEV: cuDeviceGetDefaultMemPool / cuDeviceGetMemPool, named as mem_pool.
  if (op == "dev_pool") {
    CUmemoryPool q = Exec::sent<CUmemoryPool>(); auto d = static_cast<CUdevice>(value(e, e.a(3)));
    if (e.a(2) == "def") DT_CALL(e, r, cuDeviceGetDefaultMemPool, nullout(1) ? nullptr : &q, d);
    else DT_CALL(e, r, cuDeviceGetMemPool, nullout(1) ? nullptr : &q, d);
    is(U(q)); e.out(r, e.rc, "out", U(q), 0, false, 1);
    return true;
  }
  // mem_pool_set LOC TYPE POOL: cuMemSetMemPool (LOC `null`).
  if (op == "mem_pool_set") {
    CUmemLocation l = location(e, 1);
    DT_CALL(e, r, cuMemSetMemPool, e.a(1) == "null" ? nullptr : &l, static_cast<CUmemAllocationType>(value(e, e.a(2))), pool(3));
    return true;
  }
  // alloc_x P SIZE STREAM / alloc_pool_x P POOL SIZE STREAM: the core ops with value tokens.
  if (op == "alloc_x" || op == "alloc_pool_x") {
    bool fp = op == "alloc_pool_x";
    uint64_t n = value(e, e.a(fp ? 3 : 2));
    CUdeviceptr d = kSentinel;
    if (fp) DT_CALL(e, r, cuMemAllocFromPoolAsync, nullout(1) ? nullptr : &d, n, pool(2), strm(4));
    else DT_CALL(e, r, cuMemAllocAsync, nullout(1) ? nullptr : &d, n, strm(3));
    if (e.rc == 0) r.ks("near", e.npool(d));
    e.out(r, e.rc, "out", d, n, true, 1); pooled(1);
    return true;
  }
  // block STREAM / release: a host function holds STREAM until release (a pending free).
  if (op == "block") { gate() = 0; DT_CALL(e, r, cuLaunchHostFunc, strm(1), hold, nullptr); return true; }
  if (op == "release") { gate() = 1; e.RC(r, 0); return true; }
  // stream_query_until S / event_query_until E: query until it stops answering NOT_READY
  // (completion observed through a successful query, without a sleep), at most 10 s.
  if (op == "stream_query_until" || op == "event_query_until") {
    int rc = 600;
    for (int i = 0; i < 100000 && rc == 600; ++i) {
      rc = op[0] == 's' ? e.api.cuStreamQuery(strm(1)) : e.api.cuEventQuery(e.h<CUevent>(1));
      if (rc == 600) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    e.RC(r, rc);
    return true;
  }
  // ctx_primary C DEV: device DEV's primary context, retained (not made current).
  if (op == "ctx_primary") {
    CUcontext c = Exec::sent<CUcontext>();
    DT_CALL(e, r, cuDevicePrimaryCtxRetain, &c, static_cast<CUdevice>(e.num(2)));
    e.out(r, e.rc, "out", U(c), 0, false, 1);
    return true;
  }
  if (op == "can_access_peer") {  // can_access_peer DEV PEER
    int v = -1; DT_CALL(e, r, cuDeviceCanAccessPeer, &v, static_cast<CUdevice>(e.num(1)), static_cast<CUdevice>(e.num(2)));
    r.kv("v", v);
    return true;
  }
  // ptr_attr_each P OFF: cuPointerGetAttribute of attributes 1..21 one by one, 16-byte buffer;
  // "aN":"rc:written bytes:value" (values normalized); rc is MEMORY_TYPE's.
  if (op == "ptr_attr_each") {
    auto f = DT_FN(e, cuPointerGetAttribute);
    if (!f) { r.ks("missing", "cuPointerGetAttribute"); return true; }
    int mt = -1;
    std::string all;
    for (int at = 1; at <= 21; ++at) {
      unsigned char b[16]; memset(b, 0xab, 16);
      int rc = f(b, static_cast<CUpointer_attribute>(at), e.ptr(1));
      if (at == 2) mt = rc;
      int w; uint64_t v; Exec::widthval(b, w, v);
      std::string key = "a" + std::to_string(at);
      r.ks(key.c_str(), std::to_string(rc) + ":" + std::to_string(w) + (w ? ":" + e.attrval(at, v) : ""));
    }
    e.RC(r, mt);  // recorded last: REAL_CU reads "rc" wherever it is
    return true;
  }
  if (op == "info_mark" || op == "info_delta") {  // cuMemGetInfo's free bytes, relative to the mark
    size_t f = 0, t = 0;
    static size_t mark = 0;
    e.RC(r, e.api.cuMemGetInfo(&f, &t));
    if (op == "info_mark") mark = f; else r.kv("delta", static_cast<long long>(mark) - static_cast<long long>(f));
    return true;
  }
  // noinit ENTRY: ENTRY called on a second copy of the driver loaded with dlmopen, never
  // initialized (cuInit not called): create, get_default, alloc_async, free_async, trim.
  if (op == "noinit") {
    std::string p = e.api.lib == "system" ? "libcuda.so.1" : e.api.lib + "/libcuda.so.1";
    void* h = dlmopen(LM_ID_NEWLM, p.c_str(), RTLD_NOW | RTLD_LOCAL);
    // A sanitizer runtime cannot be loaded into a second namespace: the case is skipped there.
    if (!h) { r.ks("skip", "dlmopen failed"); e.stop = true; return true; }
    auto sym = [&](const char* n) { return dlsym(h, n); };
    const std::string& w = e.a(1);
    CUmemPoolProps pp{}; pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED; pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemoryPool q = nullptr; CUdeviceptr d = 0;
    void* f = sym(w == "create" ? "cuMemPoolCreate" : w == "get_default" ? "cuDeviceGetDefaultMemPool" : w == "alloc_async" ? "cuMemAllocAsync"
                  : w == "free_async" ? "cuMemFreeAsync" : w == "trim" ? "cuMemPoolTrimTo" : "none");
    if (!f) { r.ks("missing", w); return true; }
    if (w == "create") e.RC(r, reinterpret_cast<decltype(&::cuMemPoolCreate)>(f)(&q, &pp));
    else if (w == "get_default") e.RC(r, reinterpret_cast<decltype(&::cuDeviceGetDefaultMemPool)>(f)(&q, 0));
    else if (w == "alloc_async") e.RC(r, reinterpret_cast<decltype(&::cuMemAllocAsync)>(f)(&d, 16, nullptr));
    else if (w == "free_async") e.RC(r, reinterpret_cast<decltype(&::cuMemFreeAsync)>(f)(0x1000, nullptr));
    else e.RC(r, reinterpret_cast<decltype(&::cuMemPoolTrimTo)>(f)(nullptr, 0));
    return true;  // the copy stays loaded: unloading a driver is no part of the question
  }

  // The runtime's pool entries (NVIDIA's libcudart.so.13 on NVIDIA's driver, ours on ours).
  // rt_dev_pool P def|cur DEV, rt_dev_set_pool DEV POOL, rt_pool_create P KEY=VALUE...,
  // rt_pool_destroy POOL, rt_malloc_pool P SIZE POOL STREAM, rt_malloc_async P SIZE STREAM,
  // rt_free_async P OFF STREAM, rt_last_error, rt_pool_get POOL ATTR, rt_pool_set POOL ATTR VALUE,
  // rt_pool_trim POOL N, rt_pool_get_access POOL LOC, rt_pool_set_access POOL LOC FLAGS,
  // rt_ptr_attrs P OFF, rt_memcpy DST OFF SRC OFF N KIND, rt_device_sync, rt_device_reset,
  // rt_stream_sync S.
  if (op.rfind("rt_", 0) != 0) return false;
  if (op == "rt_dev_pool") {
    void* q = Exec::sent<void*>(); int dev = static_cast<int>(value(e, e.a(3)));
    DT_RT(e, r, e.a(2) == "def" ? "cudaDeviceGetDefaultMemPool" : "cudaDeviceGetMemPool", (void**, int), nullout(1) ? nullptr : &q, dev);
    is(U(q)); e.out(r, e.rc, "out", U(q), 0, false, 1);
  } else if (op == "rt_dev_set_pool") {
    DT_RT(e, r, "cudaDeviceSetMemPool", (int, void*), static_cast<int>(value(e, e.a(1))), e.h<void*>(2));
  } else if (op == "rt_pool_create") {
    CUmemPoolProps p = props(e, 2); bool np = false;
    for (auto& w : e.t) np |= w == "props=null";
    void* q = Exec::sent<void*>();
    DT_RT(e, r, "cudaMemPoolCreate", (void**, const CUmemPoolProps*), nullout(1) ? nullptr : &q, np ? nullptr : &p);
    e.out(r, e.rc, "out", U(q), 0, false, 1);
  } else if (op == "rt_pool_destroy") {
    DT_RT(e, r, "cudaMemPoolDestroy", (void*), e.h<void*>(1));
  } else if (op == "rt_malloc_pool" || op == "rt_malloc_async") {
    void* d = Exec::sent<void*>(); uint64_t n = value(e, e.a(2));
    if (op == "rt_malloc_pool") DT_RT(e, r, "cudaMallocFromPoolAsync", (void**, size_t, void*, void*), nullout(1) ? nullptr : &d, n, e.h<void*>(3), e.h<void*>(4));
    else DT_RT(e, r, "cudaMallocAsync", (void**, size_t, void*), nullout(1) ? nullptr : &d, n, e.h<void*>(3));
    if (e.rc == 0) r.ks("near", e.npool(U(d)));
    e.out(r, e.rc, "out", U(d), n, true, 1); pooled(1);
  } else if (op == "rt_free_async") {
    DT_RT(e, r, "cudaFreeAsync", (void*, void*), reinterpret_cast<void*>(e.ptr(1)), e.h<void*>(3));
    e.frees(e.a(1));
  } else if (op == "rt_last_error") {
    DT_RT(e, r, "cudaGetLastError", (void));
  } else if (op == "rt_pool_get") {
    unsigned char b[16]; memset(b, 0xab, 16);
    DT_RT(e, r, "cudaMemPoolGetAttribute", (void*, int, void*), e.h<void*>(1), static_cast<int>(e.num(2)), e.a(3) == "null" ? nullptr : b);
    int w; uint64_t v; Exec::widthval(b, w, v); r.kv("w", w); if (w) r.ks("v", std::to_string(v));
  } else if (op == "rt_pool_set") {
    int at = static_cast<int>(e.num(2)); uint64_t v64 = value(e, e.a(3)); int v32 = static_cast<int>(v64);
    void* pv = at >= 1 && at <= 3 ? static_cast<void*>(&v32) : static_cast<void*>(&v64);
    DT_RT(e, r, "cudaMemPoolSetAttribute", (void*, int, void*), e.h<void*>(1), at, e.a(3) == "null" ? nullptr : pv);
  } else if (op == "rt_pool_trim") {
    DT_RT(e, r, "cudaMemPoolTrimTo", (void*, size_t), e.h<void*>(1), value(e, e.a(2)));
  } else if (op == "rt_pool_get_access") {
    int f = 77; CUmemLocation l = location(e, 2);
    DT_RT(e, r, "cudaMemPoolGetAccess", (int*, void*, CUmemLocation*), &f, e.h<void*>(1), &l);
    r.kv("flags", f);
  } else if (op == "rt_pool_set_access") {
    CUmemAccessDesc d{}; d.location = location(e, 2); d.flags = static_cast<CUmemAccess_flags>(e.num(3));
    DT_RT(e, r, "cudaMemPoolSetAccess", (void*, const CUmemAccessDesc*, size_t), e.h<void*>(1), &d, size_t{1});
  } else if (op == "rt_ptr_attrs") {  // cudaPointerAttributes: type, device, devicePointer, hostPointer
    struct { int type, device; void* dp; void* hp; long reserved[8]; } a;
    memset(&a, 0xab, sizeof a);
    DT_RT(e, r, "cudaPointerGetAttributes", (void*, const void*), &a, reinterpret_cast<void*>(e.ptr(1)));
    r.kv("type", a.type); r.kv("device", a.device); r.ks("dptr", e.nptr(U(a.dp))); r.ks("hptr", e.nptr(U(a.hp)));
  } else if (op == "rt_memcpy") {
    DT_RT(e, r, "cudaMemcpy", (void*, const void*, size_t, int), reinterpret_cast<void*>(e.ptr(1)), reinterpret_cast<void*>(e.ptr(3)),
          value(e, e.a(5)), static_cast<int>(e.num(6)));
  } else if (op == "rt_device_sync") { DT_RT(e, r, "cudaDeviceSynchronize", (void));
  } else if (op == "rt_device_reset") { DT_RT(e, r, "cudaDeviceReset", (void));
  } else if (op == "rt_stream_sync") { DT_RT(e, r, "cudaStreamSynchronize", (void*), e.h<void*>(1));
  } else {
    return false;
  }
  return true;
}

#undef DT_RT

}  // namespace difftest
