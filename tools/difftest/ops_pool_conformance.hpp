// difftest ops of the pool_conformance family, for the probe cases in tests/probe/cases/pool_conformance*.cases
// (docs/probe.md): the questions tests/conformance/test_mempool_*.cpp ask, asked of a driver
// the same way. Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// runtime's symbol, what it records in r. Returns false for an op it does not know.
//
// Locations here are raw: "T:ID" (numbers: 1:0 device 0, 2:77 host id 77, 9:0 type 9, -1:0; ID "n" is
// the number of devices, "numa" device 0's host NUMA id),
// or "null" for a NULL location pointer. Access descriptors are "T:ID:FLAGS". An output slot
// token "null" passes a NULL output. Sizes may be "dev+N" (the device's memory plus N).
#pragma once
#include <atomic>
#include <thread>

namespace difftest {

namespace pc {
// "T:n" is id = the number of devices (one past the last device).
inline CUmemLocation rawloc(Exec& e, const std::string& s) {
  CUmemLocation l{};
  long t = 0, id = 0;
  sscanf(s.c_str(), "%ld:%ld", &t, &id);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ":n") == 0) {
    int n = 0;
    if (auto f = DT_FN(e, cuDeviceGetCount)) f(&n);
    id = n;
  }
  if (s.size() > 5 && s.compare(s.size() - 5, 5, ":numa") == 0) {  // "T:numa": device 0's host NUMA id
    int v = 0;
    if (auto f = DT_FN(e, cuDeviceGetAttribute)) f(&v, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0);
    id = v;
  }
  l.type = static_cast<CUmemLocationType>(t);
  l.id = static_cast<int>(id);
  return l;
}
inline CUmemAccessDesc rawdesc(const std::string& s) {
  CUmemAccessDesc d{};
  long t = 0, id = 0, f = 0;
  sscanf(s.c_str(), "%ld:%ld:%ld", &t, &id, &f);
  d.location.type = static_cast<CUmemLocationType>(t);
  d.location.id = static_cast<int>(id);
  d.flags = static_cast<CUmemAccess_flags>(f);
  return d;
}
inline uint64_t U(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }
template <class T> T* O(Exec& e, size_t k, T* p) { return e.a(k) == "null" ? nullptr : p; }
inline uint64_t size(Exec& e, size_t k) {
  const std::string& s = e.a(k);
  if (s.rfind("dev+", 0) == 0) return e.total + strtoull(s.c_str() + 4, nullptr, 0);
  return e.num(k);
}
// Pool props: LOC ALLOCTYPE HANDLETYPES MAXSIZE, then optional usage=N win32=N res=I:V.
inline CUmemPoolProps props(Exec& e, size_t k) {
  CUmemPoolProps p;
  memset(&p, 0, sizeof p);
  p.location = rawloc(e, e.a(k));
  p.allocType = static_cast<CUmemAllocationType>(e.num(k + 1));
  p.handleTypes = static_cast<CUmemAllocationHandleType>(e.num(k + 2));
  p.maxSize = e.num(k + 3);
  for (size_t i = k + 4; i < e.t.size(); ++i) {
    const std::string& w = e.t[i];
    if (w.rfind("usage=", 0) == 0) p.usage = static_cast<unsigned short>(strtoul(w.c_str() + 6, nullptr, 0));
    if (w.rfind("win32=", 0) == 0) p.win32SecurityAttributes = reinterpret_cast<void*>(strtoull(w.c_str() + 6, nullptr, 0));
    unsigned ri = 0, rv = 0;
    if (sscanf(w.c_str(), "res=%u:%u", &ri, &rv) == 2 && ri < sizeof p.reserved) p.reserved[ri] = static_cast<unsigned char>(rv);
  }
  return p;
}
// The runtime's entries these ops call, by name (cudaError_t is an int; its structs are the
// driver's layouts: cudaMemPoolProps, cudaMemLocation, cudaMemAccessDesc).
template <class F> F rt(Exec& e, Rec& r, const char* name) {
  auto f = reinterpret_cast<F>(e.api.rtsym(name));
  if (!f) r.ks("missing", name);
  return f;
}
}  // namespace pc

inline bool ops_pool_conformance_rt(Exec& e, Rec& r);

inline bool ops_pool_conformance(Exec& e, Rec& r) {
  const std::string op = e.t[0];
  using pc::U;
  if (op == "pc_thread") {  // pc_thread OP ARGS: OP runs on a fresh thread (no current context)
    std::vector<std::string> saved = e.t;
    e.t.erase(e.t.begin());
    std::thread th([&] { e.exec(r); });
    th.join();
    e.t = saved;
    return true;
  }
  if (op == "pc_pool_create") {  // pc_pool_create P LOC|nullprops ALLOCTYPE HANDLETYPES MAXSIZE [usage= win32= res=I:V]
    CUmemPoolProps p = pc::props(e, 2);
    CUmemoryPool h = Exec::sent<CUmemoryPool>();
    DT_CALL(e, r, cuMemPoolCreate, pc::O(e, 1, &h), e.a(2) == "nullprops" ? nullptr : &p);
    e.out(r, e.rc, "out", U(h), 0, false, 1);
    return true;
  }
  if (op == "pc_pools_until_oom") {  // pc_pools_until_oom LIMIT: plain device-0 pools until one fails; its code
    std::vector<CUmemoryPool> v;
    CUmemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    auto create = DT_FN(e, cuMemPoolCreate);
    int v0 = 0;
    for (uint64_t i = 0; i < e.num(1) && v0 == 0; ++i) {
      CUmemoryPool h = nullptr;
      if ((v0 = create(&h, &p)) == 0) v.push_back(h);
    }
    e.RC(r, v0);
    for (auto h : v) e.api.cuMemPoolDestroy(h);
    return true;
  }
  if (op == "pc_set_access") {  // pc_set_access POOL COUNT null | DESC... (T:ID:FLAGS)
    std::vector<CUmemAccessDesc> d;
    for (size_t i = 3; i < e.t.size() && e.a(3) != "null"; ++i) d.push_back(pc::rawdesc(e.t[i]));
    DT_CALL(e, r, cuMemPoolSetAccess, e.h<CUmemoryPool>(1), d.empty() ? nullptr : d.data(), static_cast<size_t>(e.num(2)));
    return true;
  }
  if (op == "pc_get_access") {  // pc_get_access F|null POOL LOC|null
    CUmemAccess_flags f = static_cast<CUmemAccess_flags>(77);
    CUmemLocation l = pc::rawloc(e, e.a(3));
    DT_CALL(e, r, cuMemPoolGetAccess, pc::O(e, 1, &f), e.h<CUmemoryPool>(2), e.a(3) == "null" ? nullptr : &l);
    r.kv("flags", f);
    return true;
  }
  if (op == "pc_get_pool" || op == "pc_get_default_pool") {  // OP P LOC|null ALLOCTYPE
    CUmemoryPool h = Exec::sent<CUmemoryPool>();
    CUmemLocation l = pc::rawloc(e, e.a(2));
    auto ty = static_cast<CUmemAllocationType>(e.num(3));
    if (op == "pc_get_pool") DT_CALL(e, r, cuMemGetMemPool, pc::O(e, 1, &h), e.a(2) == "null" ? nullptr : &l, ty);
    else DT_CALL(e, r, cuMemGetDefaultMemPool, pc::O(e, 1, &h), e.a(2) == "null" ? nullptr : &l, ty);
    if (e.rc == 0) r.ks("is", e.nh(U(h)));
    e.out(r, e.rc, "out", U(h), 0, false, 1);
    return true;
  }
  if (op == "pc_set_pool") {  // pc_set_pool LOC|null ALLOCTYPE POOL
    CUmemLocation l = pc::rawloc(e, e.a(1));
    DT_CALL(e, r, cuMemSetMemPool, e.a(1) == "null" ? nullptr : &l, static_cast<CUmemAllocationType>(e.num(2)), e.h<CUmemoryPool>(3));
    return true;
  }
  if (op == "pc_alloc_async") {  // pc_alloc_async P SIZE STREAM (SIZE may be dev+N); records whether dptr was cleared
    CUdeviceptr p = kSentinel;
    DT_CALL(e, r, cuMemAllocAsync, pc::O(e, 1, &p), pc::size(e, 2), e.h<CUstream>(3));
    e.out(r, e.rc, "out", p, pc::size(e, 2), true, 1);
    return true;
  }
  if (op == "pc_wait_idle") {  // pc_wait_idle S: until the stream's work completed, unobserved (cuStreamQuery)
    auto q = DT_FN(e, cuStreamQuery);
    int v = 0;
    for (int i = 0; i < 20000 && (v = q(e.h<CUstream>(1))) == CUDA_ERROR_NOT_READY; ++i) usleep(100);
    e.RC(r, v);
    return true;
  }
  if (op == "pc_block" || op == "pc_release") {  // pc_block S: a host function holds S until pc_release
    static std::atomic<bool> open{false};
    if (op == "pc_release") { open = true; e.RC(r, 0); return true; }
    static bool released_at_exit = (atexit([] { open = true; }), true);  // before the driver's own teardown
    (void)released_at_exit;
    open = false;
    CUhostFn fn = [](void*) { while (!open.load()) usleep(50); };
    DT_CALL(e, r, cuLaunchHostFunc, e.h<CUstream>(1), fn, nullptr);
    return true;
  }
  if (op == "pc_sleep_ms") { usleep(static_cast<useconds_t>(e.num(1) * 1000)); e.RC(r, 0); return true; }
  if (op == "pc_ctx_current") {  // pc_ctx_current C: names the calling thread's current context
    CUcontext c = Exec::sent<CUcontext>();
    DT_CALL(e, r, cuCtxGetCurrent, &c);
    if (e.rc == 0) e.def(e.a(1), U(c), 0, false);
    return true;
  }
  if (op == "pc_primary_retain") {  // pc_primary_retain C DEV
    CUcontext c = Exec::sent<CUcontext>();
    DT_CALL(e, r, cuDevicePrimaryCtxRetain, &c, static_cast<CUdevice>(e.num(2)));
    e.out(r, e.rc, "out", U(c), 0, false, 1);
    return true;
  }
  return ops_pool_conformance_rt(e, r);
}

// The runtime forms (rt_ the runtime's spelling): NVIDIA's libcudart.so.13 on NVIDIA's driver.
inline bool ops_pool_conformance_rt(Exec& e, Rec& r) {
  const std::string& op = e.t[0];
  using pc::U;
  using pc::rt;
  if (op.rfind("pc_rt_", 0) != 0) return false;
  auto pool = [&](size_t k) { return e.h<void*>(k); };
  auto strm = [&](size_t k) { return e.h<void*>(k); };
  if (op == "pc_rt_last_error") {
    if (auto f = rt<int (*)()>(e, r, "cudaGetLastError")) e.RC(r, f());
  } else if (op == "pc_rt_dev_default_pool" || op == "pc_rt_dev_get_pool") {  // OP P DEV
    void* h = Exec::sent<void*>();
    auto f = rt<int (*)(void**, int)>(e, r, op == "pc_rt_dev_get_pool" ? "cudaDeviceGetMemPool" : "cudaDeviceGetDefaultMemPool");
    if (f) { e.RC(r, f(pc::O(e, 1, &h), static_cast<int>(e.num(2)))); e.out(r, e.rc, "out", U(h), 0, false, 1); }
  } else if (op == "pc_rt_dev_set_pool") {  // pc_rt_dev_set_pool DEV POOL
    if (auto f = rt<int (*)(int, void*)>(e, r, "cudaDeviceSetMemPool")) e.RC(r, f(static_cast<int>(e.num(1)), pool(2)));
  } else if (op == "pc_rt_pool_destroy") {
    if (auto f = rt<int (*)(void*)>(e, r, "cudaMemPoolDestroy")) e.RC(r, f(pool(1)));
  } else if (op == "pc_rt_get_pool" || op == "pc_rt_get_default_pool") {  // OP P LOC ALLOCTYPE
    void* h = Exec::sent<void*>();
    CUmemLocation l = pc::rawloc(e, e.a(2));
    auto f = rt<int (*)(void**, void*, int)>(e, r, op == "pc_rt_get_pool" ? "cudaMemGetMemPool" : "cudaMemGetDefaultMemPool");
    if (f) { e.RC(r, f(pc::O(e, 1, &h), &l, static_cast<int>(e.num(3)))); e.out(r, e.rc, "out", U(h), 0, false, 1); }
  } else if (op == "pc_rt_pool_create") {  // pc_rt_pool_create P LOC|nullprops ALLOCTYPE HANDLETYPES MAXSIZE
    CUmemPoolProps p = pc::props(e, 2);
    void* h = Exec::sent<void*>();
    if (auto f = rt<int (*)(void**, const void*)>(e, r, "cudaMemPoolCreate")) {
      e.RC(r, f(pc::O(e, 1, &h), e.a(2) == "nullprops" ? nullptr : &p));
      e.out(r, e.rc, "out", U(h), 0, false, 1);
    }
  } else if (op == "pc_rt_malloc_async") {  // pc_rt_malloc_async P SIZE STREAM
    void* p = Exec::sent<void*>();
    if (auto f = rt<int (*)(void**, size_t, void*)>(e, r, "cudaMallocAsync")) {
      e.RC(r, f(pc::O(e, 1, &p), pc::size(e, 2), strm(3)));
      e.out(r, e.rc, "out", U(p), pc::size(e, 2), true, 1);
    }
  } else if (op == "pc_rt_malloc_pool_async") {  // pc_rt_malloc_pool_async P POOL SIZE STREAM
    void* p = Exec::sent<void*>();
    if (auto f = rt<int (*)(void**, size_t, void*, void*)>(e, r, "cudaMallocFromPoolAsync")) {
      e.RC(r, f(pc::O(e, 1, &p), e.num(3), pool(2), strm(4)));
      e.out(r, e.rc, "out", U(p), e.num(3), true, 1);
    }
  } else if (op == "pc_rt_free_async") {  // pc_rt_free_async PTR OFF STREAM
    if (auto f = rt<int (*)(void*, void*)>(e, r, "cudaFreeAsync")) e.RC(r, f(reinterpret_cast<void*>(e.ptr(1)), strm(3)));
  } else if (op == "pc_rt_stream_sync") {
    if (auto f = rt<int (*)(void*)>(e, r, "cudaStreamSynchronize")) e.RC(r, f(strm(1)));
  } else if (op == "pc_rt_get_access") {  // pc_rt_get_access POOL LOC
    int fl = 77;
    CUmemLocation l = pc::rawloc(e, e.a(2));
    if (auto f = rt<int (*)(int*, void*, void*)>(e, r, "cudaMemPoolGetAccess")) { e.RC(r, f(&fl, pool(1), &l)); r.kv("flags", fl); }
  } else if (op == "pc_rt_set_access") {  // pc_rt_set_access POOL DESC (T:ID:FLAGS)
    CUmemAccessDesc d = pc::rawdesc(e.a(2));
    if (auto f = rt<int (*)(void*, const void*, size_t)>(e, r, "cudaMemPoolSetAccess")) e.RC(r, f(pool(1), &d, 1));
  } else if (op == "pc_rt_pool_get_attr" || op == "pc_rt_pool_set_attr") {  // OP POOL ATTR [VALUE]
    unsigned long long v = e.num(3);
    const char* n = op == "pc_rt_pool_get_attr" ? "cudaMemPoolGetAttribute" : "cudaMemPoolSetAttribute";
    if (auto f = rt<int (*)(void*, int, void*)>(e, r, n)) e.RC(r, f(pool(1), static_cast<int>(e.num(2)), &v));
  } else if (op == "pc_rt_pool_trim") {
    if (auto f = rt<int (*)(void*, size_t)>(e, r, "cudaMemPoolTrimTo")) e.RC(r, f(pool(1), e.num(2)));
  } else if (op == "pc_rt_memcpy") {  // pc_rt_memcpy DST OFF SRC OFF N KIND (slots; "hbuf" is a 4 KiB host buffer of the runner's)
    static std::vector<unsigned char> hbuf(4096, 7);
    auto at = [&](size_t k) { return e.a(k) == "hbuf" ? static_cast<void*>(hbuf.data() + e.num(k + 1)) : reinterpret_cast<void*>(e.ptr(k)); };
    if (auto f = rt<int (*)(void*, const void*, size_t, int)>(e, r, "cudaMemcpy")) e.RC(r, f(at(1), at(3), e.num(5), static_cast<int>(e.num(6))));
  } else {
    r.ks("error", "unknown op");
  }
  return true;
}

}  // namespace difftest
