// Measures how NVIDIA's driver answers the memory-pool API (issue 3): every props
// field, default/current pools, stream-ordered reuse, accounting, release at sync,
// access, pointer attributes. Not part of the build: compile it on a GPU machine with
//   g++ -std=c++17 -O1 tools/probe/probe_pools.cpp -I/usr/local/cuda/include
//       -L/usr/local/cuda/lib64 -lcudart -lcuda -lpthread -o probe_pools
// and read its "key = value" lines. Cases that may crash the driver run in a child
// process (the binary re-executes itself with --risky NAME).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

static const char* nm(CUresult r) {
  const char* s = nullptr;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) {
    static char buf[64];
    snprintf(buf, sizeof buf, "CUresult(%d)", (int)r);
    return buf;
  }
  return s;
}
static const char* rn(cudaError_t e) { return cudaGetErrorName(e); }

static void out(const std::string& k, const std::string& v) {
  printf("%s = %s\n", k.c_str(), v.c_str());
  fflush(stdout);
}
static void outc(const std::string& k, CUresult r) { out(k, nm(r)); }
static void outr(const std::string& k, cudaError_t r) { out(k, rn(r)); }
static std::string u64(unsigned long long v) { return std::to_string(v); }
static std::string hex(unsigned long long v) {
  char b[32];
  snprintf(b, sizeof b, "%#llx", v);
  return b;
}

static int g_ndev = 0;
static size_t g_total = 0;
static const size_t MiB = 1 << 20;

static CUmemPoolProps base_props(int dev = 0) {
  CUmemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  return p;
}

static unsigned long long pattr(CUmemoryPool p, CUmemPool_attribute a) {
  cuuint64_t v = 0xdeadbeefdeadbeefull;
  CUresult r = cuMemPoolGetAttribute(p, a, &v);
  if (r != CUDA_SUCCESS) return 0xffffffffffffffffull;
  if (a <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES) return (unsigned)(v & 0xffffffffu);
  return v;
}
static std::string acct(CUmemoryPool p) {
  return "resC=" + u64(pattr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)) +
         " resH=" + u64(pattr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)) +
         " usedC=" + u64(pattr(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)) +
         " usedH=" + u64(pattr(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH));
}

struct Blocker {
  std::atomic<int> go{0};
  static void CUDA_CB fn(void* p) {
    auto* b = static_cast<Blocker*>(p);
    while (!b->go.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  void block(CUstream s) {
    go = 0;
    cuLaunchHostFunc(s, fn, this);
  }
  void release() { go = 1; }
};

static CUmemPoolProps pool_props_host() {
  CUmemPoolProps p = base_props();
  p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  return p;
}

static CUmemoryPool mkpool(CUmemPoolProps p) {
  CUmemoryPool pool = nullptr;
  CUresult r = cuMemPoolCreate(&pool, &p);
  if (r != CUDA_SUCCESS) {
    out("mkpool_failed", nm(r));
    return nullptr;
  }
  return pool;
}
static void set_reuse(CUmemoryPool p, int follow, int opp, int internal) {
  int v = follow;
  cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &v);
  v = opp;
  cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v);
  v = internal;
  cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &v);
}

// ---------------------------------------------------------------------------------------
static void props_case(const std::string& name, CUmemPoolProps p) {
  CUmemoryPool pool = nullptr;
  CUresult r = cuMemPoolCreate(&pool, &p);
  std::string v = nm(r);
  if (r == CUDA_SUCCESS) {
    CUdeviceptr d = 0;
    CUresult a = cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr);
    v += std::string(" alloc4096=") + nm(a);
    if (a == CUDA_SUCCESS) {
      CUresult s = cuStreamSynchronize(nullptr);
      v += std::string(" sync=") + nm(s);
      unsigned mt = 0;
      cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d);
      v += " memtype=" + u64(mt);
      cuMemFreeAsync(d, nullptr);
      cuStreamSynchronize(nullptr);
    }
    v += " " + acct(pool);
    v += std::string(" destroy=") + nm(cuMemPoolDestroy(pool));
  }
  out("create." + name, v);
}

static void probe_props() {
  CUmemPoolProps p = base_props();
  props_case("base", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_INVALID; props_case("allocType0", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; props_case("allocTypeManaged_dev0", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; p.location.type = CU_MEM_LOCATION_TYPE_NONE; p.location.id = 0;
  props_case("allocTypeManaged_locNone", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; p.location.type = CU_MEM_LOCATION_TYPE_HOST;
  props_case("allocTypeManaged_locHost", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  props_case("allocTypeManaged_locHostNuma0", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props_case("allocTypeManaged_posixfd", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; p.maxSize = 64 * MiB;
  props_case("allocTypeManaged_maxSize64M", p);
  p = base_props(); p.allocType = (CUmemAllocationType)3; props_case("allocType3", p);
  p = base_props(); p.allocType = (CUmemAllocationType)0x7fffffff; props_case("allocType0x7fffffff", p);
  p = base_props(); p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED; p.location.type = CU_MEM_LOCATION_TYPE_NONE;
  props_case("pinned_locNone", p);

  const unsigned hts[] = {1, 2, 4, 8, 9, 3, 5, 0x10, 0x20, 0x80000000u};
  for (unsigned h : hts) {
    p = base_props(); p.handleTypes = (CUmemAllocationHandleType)h; props_case("handleTypes" + hex(h), p);
  }
  const int ids[] = {-1, 1, 2, 99};
  for (int id : ids) {
    p = base_props(); p.location.id = id; props_case("locDevice_id" + std::to_string(id), p);
  }
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST; p.location.id = 0; props_case("locHost_id0", p);
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST; p.location.id = 77; props_case("locHost_id77", p);
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST; p.location.id = -5; props_case("locHost_id-5", p);
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST; p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props_case("locHost_posixfd", p);
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST; p.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  props_case("locHost_fabric", p);
  const int nids[] = {0, 1, -1, 99};
  for (int id : nids) {
    p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; p.location.id = id;
    props_case("locHostNuma_id" + std::to_string(id), p);
  }
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props_case("locHostNuma0_posixfd", p);
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; p.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
  props_case("locHostNuma0_fabric", p);
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT; p.location.id = 0;
  props_case("locHostNumaCurrent", p);
  const int lts[] = {5, 6, 0x7fffffff, -1};
  for (int t : lts) {
    p = base_props(); p.location.type = (CUmemLocationType)t; props_case("locType" + std::to_string(t), p);
  }
  p = base_props(); p.win32SecurityAttributes = (void*)0x1234; props_case("win32SA_handleNone", p);
  p = base_props(); p.win32SecurityAttributes = (void*)0x1234; p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props_case("win32SA_posixfd", p);
  p = base_props(); p.win32SecurityAttributes = (void*)0x1234; p.handleTypes = CU_MEM_HANDLE_TYPE_WIN32;
  props_case("win32SA_win32", p);
  const size_t ms[] = {1, 512, 4096, 2 * MiB - 1, 2 * MiB, 2 * MiB + 1, 31 * MiB, 32 * MiB - 1, 32 * MiB, 64 * MiB,
                       g_total, g_total + 1, g_total * 2, size_t(1) << 40, size_t(1) << 44, size_t(1) << 46,
                       size_t(1) << 47, size_t(1) << 48, size_t(1) << 49, size_t(1) << 50, size_t(1) << 62};
  for (size_t m : ms) {
    p = base_props(); p.maxSize = m;
    auto t0 = std::chrono::steady_clock::now();
    props_case("maxSize" + u64(m), p);
    auto t1 = std::chrono::steady_clock::now();
    out("create.maxSize" + u64(m) + ".us", u64(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
  }
  // Effective capacity: 1 MiB allocations until refusal.
  const size_t caps[] = {1, 2 * MiB + 1, 32 * MiB, 33 * MiB, 40 * MiB, 64 * MiB, 64 * MiB + 1, 100 * MiB};
  for (size_t m : caps) {
    p = base_props(); p.maxSize = m;
    CUmemoryPool pool = mkpool(p);
    if (!pool) continue;
    std::vector<CUdeviceptr> v;
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < 200; ++i) {
      CUdeviceptr d = 0;
      r = cuMemAllocFromPoolAsync(&d, MiB, pool, nullptr);
      if (r) break;
      v.push_back(d);
    }
    std::string big;
    for (size_t x : v) cuMemFreeAsync(x, nullptr);
    cuStreamSynchronize(nullptr);
    CUdeviceptr d = 0;
    CUresult rb = cuMemAllocFromPoolAsync(&d, m > 8 * MiB ? m - 4 * MiB : 30 * MiB, pool, nullptr);
    if (!rb) cuMemFreeAsync(d, nullptr);
    CUresult rc = cuMemAllocFromPoolAsync(&d, m + 2 * MiB, pool, nullptr);
    if (!rc) cuMemFreeAsync(d, nullptr);
    cuStreamSynchronize(nullptr);
    out("cap.maxSize" + u64(m), "n1MiB=" + std::to_string(v.size()) + " stop=" + nm(r) + " bigMinus4M=" + nm(rb) +
                                    " plus2M=" + nm(rc) + " " + acct(pool));
    cuMemPoolDestroy(pool);
  }
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST; p.maxSize = 1; props_case("locHost_maxSize1", p);
  p = base_props(); p.location.type = CU_MEM_LOCATION_TYPE_HOST; p.maxSize = 64 * MiB; props_case("locHost_maxSize64M", p);
  const unsigned us[] = {1, 2, 3, 4, 0x8000, 0xffff};
  for (unsigned u : us) {
    p = base_props(); p.usage = (unsigned short)u; props_case("usage" + hex(u), p);
  }
  p = base_props(); p.reserved[0] = 1; props_case("reserved0", p);
  p = base_props(); p.reserved[53] = 0xff; props_case("reserved53", p);
  {
    CUmemoryPool pool = nullptr;
    p = base_props();
    outc("create.nullPool", cuMemPoolCreate(nullptr, &p));
    outc("create.nullProps", cuMemPoolCreate(&pool, nullptr));
  }
  // Limits on the number of pools.
  {
    std::vector<CUmemoryPool> v;
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < 2000; ++i) {
      CUmemoryPool pool = nullptr;
      p = base_props();
      r = cuMemPoolCreate(&pool, &p);
      if (r != CUDA_SUCCESS) break;
      v.push_back(pool);
    }
    out("create.many", std::to_string(v.size()) + " last=" + nm(r));
    for (auto x : v) cuMemPoolDestroy(x);
  }
}

// ---------------------------------------------------------------------------------------
static void probe_default_and_current() {
  CUmemoryPool def = nullptr, cur = nullptr;
  outc("defpool.get0", cuDeviceGetDefaultMemPool(&def, 0));
  outc("defpool.get-1", cuDeviceGetDefaultMemPool(&cur, -1));
  outc("defpool.get99", cuDeviceGetDefaultMemPool(&cur, 99));
  outc("defpool.getNull", cuDeviceGetDefaultMemPool(nullptr, 0));
  outc("curpool.get0", cuDeviceGetMemPool(&cur, 0));
  out("curpool.isDefault", cur == def ? "yes" : "no");
  outc("curpool.get99", cuDeviceGetMemPool(&cur, 99));
  outc("curpool.getNull", cuDeviceGetMemPool(nullptr, 0));
  out("defpool.attrs", acct(def) + " thr=" + u64(pattr(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)) +
                           " follow=" + u64(pattr(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES)) +
                           " opp=" + u64(pattr(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC)) +
                           " internal=" + u64(pattr(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)));
  {
    CUmemAccess_flags f = (CUmemAccess_flags)77;
    CUmemLocation l{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    outc("defpool.getAccessDev0", cuMemPoolGetAccess(&f, def, &l));
    out("defpool.getAccessDev0.flags", u64(f));
  }
  CUmemoryPool mine = mkpool(base_props());
  outc("setpool.own", cuDeviceSetMemPool(0, mine));
  cuDeviceGetMemPool(&cur, 0);
  out("setpool.own.isMine", cur == mine ? "yes" : "no");
  outc("setpool.dev99", cuDeviceSetMemPool(99, mine));
  outc("setpool.null", cuDeviceSetMemPool(0, nullptr));
  {
    CUmemPoolProps hp = base_props(); hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemoryPool host = mkpool(hp);
    outc("setpool.hostPool", cuDeviceSetMemPool(0, host));
    hp = base_props(); hp.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    CUmemoryPool numa = mkpool(hp);
    outc("setpool.hostNumaPool", cuDeviceSetMemPool(0, numa));
    hp = base_props(); hp.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    CUmemoryPool man = mkpool(hp);
    if (man) outc("setpool.managedPool", cuDeviceSetMemPool(0, man));
    cuDeviceGetMemPool(&cur, 0);
    out("setpool.afterRefusals.isMine", cur == mine ? "yes" : cur == host ? "host" : cur == numa ? "numa" : "other");
    // cudaMallocAsync from the current pool follows cuDeviceSetMemPool.
    CUdeviceptr d = 0;
    outc("setpool.allocAsync", cuMemAllocAsync(&d, 1000, nullptr));
    out("setpool.mine.used", u64(pattr(mine, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)));
    cuMemFreeAsync(d, nullptr);
    cuStreamSynchronize(nullptr);
    // Location forms of CUDA 13.
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemoryPool q = nullptr;
    outc("memGetDefault.dev0.pinned", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    out("memGetDefault.dev0.pinned.isDef", q == def ? "yes" : "no");
    outc("memGetMem.dev0.pinned", cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    out("memGetMem.dev0.pinned.isMine", q == mine ? "yes" : "no");
    CUmemoryPool dman = nullptr;
    outc("memGetDefault.dev0.managed", cuMemGetDefaultMemPool(&dman, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED));
    out("memGetDefault.dev0.managed.isDef", dman == def ? "yes" : dman ? "distinct" : "null");
    if (dman) out("memGetDefault.dev0.managed.attrs", acct(dman));
    outc("memGetDefault.dev0.type0", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_INVALID));
    outc("memGetDefault.dev0.type3", cuMemGetDefaultMemPool(&q, &loc, (CUmemAllocationType)3));
    loc = {CU_MEM_LOCATION_TYPE_HOST, 0};
    CUmemoryPool hdef = nullptr;
    outc("memGetDefault.host.pinned", cuMemGetDefaultMemPool(&hdef, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    out("memGetDefault.host.pinned.isDevDef", hdef == def ? "yes" : hdef ? "distinct" : "null");
    if (hdef) {
      CUdeviceptr h = 0;
      CUresult r = cuMemAllocFromPoolAsync(&h, 100, hdef, nullptr);
      out("memGetDefault.host.alloc", std::string(nm(r)) + " " + acct(hdef));
      if (!r) {
        cuStreamSynchronize(nullptr);
        unsigned mt = 0;
        cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, h);
        out("memGetDefault.host.memtype", u64(mt));
        cuMemFreeAsync(h, nullptr);
        cuStreamSynchronize(nullptr);
      }
      out("memGetDefault.host.thr", u64(pattr(hdef, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)));
      outc("memGetDefault.host.destroy", cuMemPoolDestroy(hdef));
    }
    loc = {CU_MEM_LOCATION_TYPE_HOST, 42};
    CUmemoryPool hdef42 = nullptr;
    outc("memGetDefault.host42.pinned", cuMemGetDefaultMemPool(&hdef42, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    out("memGetDefault.host42.same", hdef42 == hdef ? "yes" : "no");
    loc = {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
    CUmemoryPool ndef = nullptr;
    outc("memGetDefault.hostNuma0.pinned", cuMemGetDefaultMemPool(&ndef, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    out("memGetDefault.hostNuma0.same_as_host", ndef == hdef ? "yes" : "no");
    loc = {CU_MEM_LOCATION_TYPE_HOST_NUMA, 5};
    outc("memGetDefault.hostNuma5.pinned", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    loc = {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0};
    outc("memGetDefault.hostNumaCurrent.pinned", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    loc = {CU_MEM_LOCATION_TYPE_NONE, 0};
    outc("memGetDefault.none.pinned", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    CUmemoryPool mnone = nullptr;
    outc("memGetDefault.none.managed", cuMemGetDefaultMemPool(&mnone, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED));
    out("memGetDefault.none.managed.same_as_dev0managed", mnone == dman ? "yes" : "no");
    loc = {CU_MEM_LOCATION_TYPE_HOST, 0};
    outc("memGetDefault.host.managed", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED));
    loc = {CU_MEM_LOCATION_TYPE_DEVICE, 99};
    outc("memGetDefault.dev99.pinned", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    loc = {(CUmemLocationType)9, 0};
    outc("memGetDefault.type9.pinned", cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    outc("memGetDefault.nullLoc", cuMemGetDefaultMemPool(&q, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED));
    loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    outc("memGetDefault.nullOut", cuMemGetDefaultMemPool(nullptr, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    // cuMemGetMemPool for host / managed.
    loc = {CU_MEM_LOCATION_TYPE_HOST, 0};
    outc("memGetMem.host.pinned", cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    loc = {CU_MEM_LOCATION_TYPE_NONE, 0};
    outc("memGetMem.none.managed", cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED));
    loc = {CU_MEM_LOCATION_TYPE_NONE, 0};
    outc("memGetMem.none.pinned", cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
    // cuMemSetMemPool: matching and mismatching.
    loc = {CU_MEM_LOCATION_TYPE_HOST, 0};
    outc("memSetMem.host.pinned.hostPool", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, host));
    cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED);
    out("memSetMem.host.pinned.get_isHost", q == host ? "yes" : "no");
    outc("memSetMem.host.pinned.devPool", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, mine));
    outc("memSetMem.host.managed.hostPool", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_MANAGED, host));
    loc = {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
    outc("memSetMem.hostNuma0.pinned.numaPool", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, numa));
    outc("memSetMem.hostNuma0.pinned.hostPool", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, host));
    loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    outc("memSetMem.dev0.pinned.hostPool", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, host));
    outc("memSetMem.dev0.pinned.def", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, def));
    cuDeviceGetMemPool(&q, 0);
    out("memSetMem.dev0.pinned.def.devGet_isDef", q == def ? "yes" : "no");
    if (man) {
      outc("memSetMem.dev0.managed.man", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_MANAGED, man));
      outc("memSetMem.dev0.pinned.man", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, man));
      CUmemLocation ln{CU_MEM_LOCATION_TYPE_NONE, 0};
      outc("memSetMem.none.managed.man", cuMemSetMemPool(&ln, CU_MEM_ALLOCATION_TYPE_MANAGED, man));
    }
    outc("memSetMem.nullLoc", cuMemSetMemPool(nullptr, CU_MEM_ALLOCATION_TYPE_PINNED, def));
    outc("memSetMem.nullPool", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, nullptr));
    // Destroying the current pool reverts the device to the default pool.
    cuDeviceSetMemPool(0, mine);
    outc("destroyCurrent", cuMemPoolDestroy(mine));
    cuDeviceGetMemPool(&q, 0);
    out("destroyCurrent.nowDefault", q == def ? "yes" : "no");
    loc = {CU_MEM_LOCATION_TYPE_HOST, 0};
    outc("destroyCurrentHost", cuMemPoolDestroy(host));
    cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED);
    out("destroyCurrentHost.nowDefault", q == hdef ? "yes" : q ? "other" : "null");
    cuMemPoolDestroy(numa);
    if (man) cuMemPoolDestroy(man);
  }
  outc("destroyDefault", cuMemPoolDestroy(def));
  outc("destroyNull", cuMemPoolDestroy(nullptr));
  {
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemoryPool dman = nullptr;
    if (cuMemGetDefaultMemPool(&dman, &loc, CU_MEM_ALLOCATION_TYPE_MANAGED) == CUDA_SUCCESS)
      outc("destroyDefaultManaged", cuMemPoolDestroy(dman));
  }
  // Runtime forms.
  cudaMemPool_t rp = nullptr;
  outr("rt.getDefault0", cudaDeviceGetDefaultMemPool(&rp, 0));
  out("rt.getDefault0.same", (CUmemoryPool)rp == def ? "yes" : "no");
  outr("rt.getDefault99", cudaDeviceGetDefaultMemPool(&rp, 99));
  outr("rt.getDefault-1", cudaDeviceGetDefaultMemPool(&rp, -1));
  outr("rt.getDefaultNull", cudaDeviceGetDefaultMemPool(nullptr, 0));
  outr("rt.getMem99", cudaDeviceGetMemPool(&rp, 99));
  outr("rt.getMemNull", cudaDeviceGetMemPool(nullptr, 0));
  outr("rt.setMemNull", cudaDeviceSetMemPool(0, nullptr));
  outr("rt.setMem99", cudaDeviceSetMemPool(99, (cudaMemPool_t)def));
  {
    CUmemPoolProps hp = base_props(); hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemoryPool host = mkpool(hp);
    outr("rt.setMemHostPool", cudaDeviceSetMemPool(0, (cudaMemPool_t)host));
    cuMemPoolDestroy(host);
  }
  outr("rt.destroyDefault", cudaMemPoolDestroy((cudaMemPool_t)def));
  outr("rt.destroyNull", cudaMemPoolDestroy(nullptr));
  cudaMemPoolProps rprops{};
  rprops.allocType = cudaMemAllocationTypePinned;
  rprops.location.type = cudaMemLocationTypeDevice;
  rprops.location.id = 0;
  outr("rt.createNullOut", cudaMemPoolCreate(nullptr, &rprops));
  outr("rt.createNullProps", cudaMemPoolCreate(&rp, nullptr));
  rprops.location.id = 99;
  outr("rt.createDev99", cudaMemPoolCreate(&rp, &rprops));
  rprops.location.id = 0;
  rprops.location.type = cudaMemLocationTypeHostNumaCurrent;
  outr("rt.createHostNumaCurrent", cudaMemPoolCreate(&rp, &rprops));
  rprops.location.type = cudaMemLocationTypeDevice;
  rprops.maxSize = 32 * MiB;
  outr("rt.create32M", cudaMemPoolCreate(&rp, &rprops));
  {
    void* a = nullptr;
    outr("rt.mfpa.30M", cudaMallocFromPoolAsync(&a, 30 * MiB, rp, nullptr));
    void* b = (void*)0x1234;
    outr("rt.mfpa.4M_over", cudaMallocFromPoolAsync(&b, 4 * MiB, rp, nullptr));
    out("rt.mfpa.4M_over.ptr", hex((uintptr_t)b));
    outr("rt.mfpa.getLastError", cudaGetLastError());
    outr("rt.freeAsync", cudaFreeAsync(a, nullptr));
    cudaStreamSynchronize(nullptr);
    CUdeviceptr d = 0x1234;
    CUresult r = cuMemAllocFromPoolAsync(&d, 33 * MiB, (CUmemoryPool)rp, nullptr);
    out("cu.mfpa.33M_over", std::string(nm(r)) + " ptr=" + hex(d));
    cudaMemPoolDestroy(rp);
  }
  outr("rt.getLastErrorEnd", cudaGetLastError());
}

// ---------------------------------------------------------------------------------------
static void probe_alloc_free() {
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, 0);
  CUdeviceptr d = 0x1234;
  outc("alloc.size0", cuMemAllocAsync(&d, 0, s));
  out("alloc.size0.ptr", hex(d));
  d = 0x1234;
  outc("alloc.nullOut", cuMemAllocAsync(nullptr, 16, s));
  d = 0x1234;
  outc("alloc.huge1<<50", cuMemAllocAsync(&d, size_t(1) << 50, s));
  out("alloc.huge.ptr", hex(d));
  d = 0x1234;
  outc("alloc.total+1", cuMemAllocAsync(&d, g_total + 1, s));
  outc("alloc.SIZE_MAX", cuMemAllocAsync(&d, SIZE_MAX, s));
  outc("alloc.legacy", cuMemAllocAsync(&d, 16, CU_STREAM_LEGACY));
  outc("free.legacy", cuMemFreeAsync(d, CU_STREAM_LEGACY));
  outc("alloc.perThread", cuMemAllocAsync(&d, 16, CU_STREAM_PER_THREAD));
  outc("free.perThread", cuMemFreeAsync(d, CU_STREAM_PER_THREAD));
  outc("mfpa.nullPool", cuMemAllocFromPoolAsync(&d, 16, nullptr, s));
  outc("mfpa.size0", cuMemAllocFromPoolAsync(&d, 0, def, s));
  outc("mfpa.nullOut", cuMemAllocFromPoolAsync(nullptr, 16, def, s));
  outc("free.null", cuMemFreeAsync(0, s));
  {
    std::vector<char> host(4096);
    outc("free.pageableHost", cuMemFreeAsync((CUdeviceptr)host.data(), s));
  }
  {
    void* pinned = nullptr;
    cuMemAllocHost(&pinned, 4096);
    outc("free.pinnedHost", cuMemFreeAsync((CUdeviceptr)pinned, s));
    cuStreamSynchronize(s);
    outc("free.pinnedHost.thenFreeHost", cuMemFreeHost(pinned));
  }
  {
    CUdeviceptr m = 0;
    cuMemAlloc(&m, 4096);
    outc("free.cuMemAlloc", cuMemFreeAsync(m, s));
    cuStreamSynchronize(s);
    outc("free.cuMemAlloc.thenMemFree", cuMemFree(m));
  }
  {
    CUdeviceptr m = 0;
    cuMemAllocAsync(&m, 4096, s);
    outc("free.interior", cuMemFreeAsync(m + 256, s));
    outc("free.otherStream", cuMemFreeAsync(m, nullptr));
    outc("free.double", cuMemFreeAsync(m, s));
    cuStreamSynchronize(nullptr);
    cuStreamSynchronize(s);
    outc("free.double.afterSync", cuMemFreeAsync(m, s));
  }
  {
    CUdeviceptr m = 0;
    cuMemAllocAsync(&m, 4096, s);
    cuStreamSynchronize(s);
    outc("memFree.poolPtr", cuMemFree(m));
    out("memFree.poolPtr.used", u64(pattr(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)));
    outc("memFree.poolPtr.again", cuMemFree(m));
    outc("freeAsync.afterMemFree", cuMemFreeAsync(m, s));
  }
  {
    CUdeviceptr m = 0;
    cuMemAllocAsync(&m, 4096, s);
    outc("memFreeHost.poolPtr", cuMemFreeHost((void*)m));
    cuMemFreeAsync(m, s);
    cuStreamSynchronize(s);
  }
  {
    // cudaFree of a stream-ordered allocation.
    void* m = nullptr;
    cudaMallocAsync(&m, 4096, (cudaStream_t)s);
    outr("rt.cudaFree.poolPtr", cudaFree(m));
    void* z = (void*)0x1234;
    outr("rt.mallocAsync.size0", cudaMallocAsync(&z, 0, (cudaStream_t)s));
    out("rt.mallocAsync.size0.ptr", hex((uintptr_t)z));
    outr("rt.mallocAsync.nullOut", cudaMallocAsync(nullptr, 16, (cudaStream_t)s));
    outr("rt.freeAsync.null", cudaFreeAsync(nullptr, (cudaStream_t)s));
    std::vector<char> host(64);
    outr("rt.freeAsync.pageable", cudaFreeAsync(host.data(), (cudaStream_t)s));
    outr("rt.mallocAsync.huge", cudaMallocAsync(&z, size_t(1) << 50, (cudaStream_t)s));
    outr("rt.lastError", cudaGetLastError());
    outr("rt.mfpa.nullPool", cudaMallocFromPoolAsync(&z, 16, nullptr, (cudaStream_t)s));
    outr("rt.mfpa.size0", cudaMallocFromPoolAsync(&z, 0, (cudaMemPool_t)def, (cudaStream_t)s));
  }
  // Allocation from a pool of another location through a stream of device 0.
  {
    CUmemPoolProps hp = base_props(); hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemoryPool host = mkpool(hp);
    CUdeviceptr h = 0;
    outc("host.alloc", cuMemAllocFromPoolAsync(&h, 1000, host, s));
    cuStreamSynchronize(s);
    if (h) {
      // The host touches host-pool memory directly.
      memset((void*)h, 0x5a, 1000);
      unsigned char back[16] = {};
      outc("host.dtoh", cuMemcpyDtoH(back, h, 16));
      out("host.byte", u64(back[3]));
      outc("host.memFree", cuMemFree(h));
    }
    cuMemPoolDestroy(host);
  }
  cuStreamSynchronize(s);
  cuStreamDestroy(s);
}

// ---------------------------------------------------------------------------------------
static void probe_accounting() {
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  // Reservation for various first allocations on fresh pools.
  const size_t sizes[] = {1, 512, 2 * MiB, 31 * MiB, 32 * MiB - 1, 32 * MiB, 32 * MiB + 1, 33 * MiB, 34 * MiB + 1,
                          63 * MiB, 64 * MiB, 64 * MiB + 1, 100 * MiB, 1024 * MiB};
  for (size_t n : sizes) {
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr a = 0, b = 0;
    CUresult r = cuMemAllocFromPoolAsync(&a, n, p, s);
    std::string v = std::string(nm(r)) + " " + acct(p);
    r = cuMemAllocFromPoolAsync(&b, 1, p, s);
    v += " then1B: " + acct(p) + " delta=" + std::to_string((long long)(b - a));
    cuMemFreeAsync(a, s);
    cuMemFreeAsync(b, s);
    cuStreamSynchronize(s);
    v += " afterFreeSync: " + acct(p);
    out("acct.first" + u64(n), v);
    cuMemPoolDestroy(p);
  }
  // Spacing of consecutive small allocations.
  {
    CUmemoryPool p = mkpool(base_props());
    const size_t ns[] = {1, 1000, 513, 512, 511, 256, 1, 1024, 4096, 4097, 1, 65536, 1};
    CUdeviceptr prev = 0;
    std::string v;
    for (size_t n : ns) {
      CUdeviceptr a = 0;
      cuMemAllocFromPoolAsync(&a, n, p, s);
      v += u64(n) + "@" + (prev ? std::to_string((long long)(a - prev)) : std::string("0")) + "(mod2M=" +
           u64(a % (2 * MiB)) + ") ";
      prev = a;
    }
    out("acct.spacing", v + acct(p));
    cuStreamSynchronize(s);
    cuMemPoolDestroy(p);  // with live allocations
  }
  // Chunk growth: fill a chunk.
  {
    CUmemoryPool p = mkpool(base_props());
    std::vector<CUdeviceptr> v;
    for (int i = 0; i < 40; ++i) {
      CUdeviceptr a = 0;
      cuMemAllocFromPoolAsync(&a, MiB, p, s);
      v.push_back(a);
    }
    std::string r;
    for (int i = 1; i < 40; ++i)
      if (v[i] - v[i - 1] != MiB) r += std::to_string(i) + ":" + std::to_string((long long)(v[i] - v[i - 1])) + " ";
    out("acct.fill40x1M.jumps", r + acct(p));
    // Free all but one in the second chunk, sync, see what is released.
    for (int i = 0; i < 40; ++i)
      if (i != 35) cuMemFreeAsync(v[i], s);
    cuStreamSynchronize(s);
    out("acct.fill40x1M.keep35", acct(p));
    CUresult tr = cuMemPoolTrimTo(p, 0);
    out("acct.fill40x1M.keep35.trim0", std::string(nm(tr)) + " " + acct(p));
    cuMemFreeAsync(v[35], s);
    cuStreamSynchronize(s);
    out("acct.fill40x1M.allFree", acct(p));
    cuMemPoolDestroy(p);
  }
  // Used accounting: when does a free decrease UsedMemCurrent?
  {
    CUmemoryPool p = mkpool(base_props());
    Blocker blk;
    CUdeviceptr a = 0;
    cuMemAllocFromPoolAsync(&a, 1000, p, s);
    blk.block(s);
    cuMemFreeAsync(a, s);
    out("acct.usedAfterFreeOnBlocked", acct(p));
    blk.release();
    cuStreamSynchronize(s);
    out("acct.usedAfterRelease", acct(p));
    // UsedMemCurrent for sizes: 1, 511, 513
    CUdeviceptr x = 0, y = 0, z = 0;
    cuMemAllocFromPoolAsync(&x, 1, p, s);
    out("acct.used1", acct(p));
    cuMemAllocFromPoolAsync(&y, 511, p, s);
    out("acct.used1+511", acct(p));
    cuMemAllocFromPoolAsync(&z, 513, p, s);
    out("acct.used1+511+513", acct(p));
    cuMemFreeAsync(x, s); cuMemFreeAsync(y, s); cuMemFreeAsync(z, s);
    cuStreamSynchronize(s);
    cuMemPoolDestroy(p);
  }
  // Which synchronization releases memory (threshold 0)?
  {
    auto scenario = [&](const char* name, auto&& syncfn) {
      CUmemoryPool p = mkpool(base_props());
      CUdeviceptr a = 0;
      cuMemAllocFromPoolAsync(&a, 1000, p, s);
      cuStreamSynchronize(s);
      cuMemFreeAsync(a, s);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::string before = acct(p);
      syncfn(p);
      out(std::string("release.") + name, "before: " + before + " after: " + acct(p));
      cuMemPoolDestroy(p);
    };
    scenario("none_sleep", [&](CUmemoryPool) {});
    scenario("streamSyncSame", [&](CUmemoryPool) { cuStreamSynchronize(s); });
    scenario("streamSyncOtherIdle", [&](CUmemoryPool) {
      CUstream o; cuStreamCreate(&o, CU_STREAM_NON_BLOCKING); cuStreamSynchronize(o); cuStreamDestroy(o);
    });
    scenario("streamQuery", [&](CUmemoryPool) { cuStreamQuery(s); });
    scenario("eventSync", [&](CUmemoryPool) {
      CUevent e; cuEventCreate(&e, CU_EVENT_DISABLE_TIMING); cuEventRecord(e, s); cuEventSynchronize(e); cuEventDestroy(e);
    });
    scenario("eventQuery", [&](CUmemoryPool) {
      CUevent e; cuEventCreate(&e, CU_EVENT_DISABLE_TIMING); cuEventRecord(e, s);
      std::this_thread::sleep_for(std::chrono::milliseconds(5)); cuEventQuery(e); cuEventDestroy(e);
    });
    scenario("ctxSync", [&](CUmemoryPool) { cuCtxSynchronize(); });
    scenario("deviceSync", [&](CUmemoryPool) { cudaDeviceSynchronize(); });
    scenario("legacySync", [&](CUmemoryPool) { cuStreamSynchronize(nullptr); });
    scenario("allocAgain", [&](CUmemoryPool p) { CUdeviceptr b; cuMemAllocFromPoolAsync(&b, 64, p, s); });
    scenario("trimTo0", [&](CUmemoryPool p) { cuMemPoolTrimTo(p, 0); });
    scenario("trimTo0_afterSync", [&](CUmemoryPool p) { cuStreamSynchronize(s); cuMemPoolTrimTo(p, 0); });
  }
  // Release threshold behaviour.
  {
    CUmemoryPool p = mkpool(base_props());
    cuuint64_t thr = 40 * MiB;
    outc("thr.set40M", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
    CUdeviceptr a = 0, b = 0;
    cuMemAllocFromPoolAsync(&a, 30 * MiB, p, s);
    cuMemAllocFromPoolAsync(&b, 30 * MiB, p, s);
    out("thr.two30M", acct(p));
    cuMemFreeAsync(a, s);
    cuMemFreeAsync(b, s);
    cuStreamSynchronize(s);
    out("thr.two30M.freedSynced", acct(p));
    outc("thr.trim50M", cuMemPoolTrimTo(p, 50 * MiB));
    out("thr.trim50M.acct", acct(p));
    outc("thr.trim20M", cuMemPoolTrimTo(p, 20 * MiB));
    out("thr.trim20M.acct", acct(p));
    outc("thr.trim0", cuMemPoolTrimTo(p, 0));
    out("thr.trim0.acct", acct(p));
    thr = UINT64_MAX;
    cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr);
    cuMemAllocFromPoolAsync(&a, 1, p, s);
    cuMemFreeAsync(a, s);
    cuStreamSynchronize(s);
    out("thr.max.afterSync", acct(p));
    outc("trim.nullPool", cuMemPoolTrimTo(nullptr, 0));
    cuMemPoolDestroy(p);
  }
  // Attribute get/set rules.
  {
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr a = 0;
    cuMemAllocFromPoolAsync(&a, 5000, p, s);
    cuMemFreeAsync(a, s);
    cuMemAllocFromPoolAsync(&a, 100, p, s);
    cuStreamSynchronize(s);
    out("attr.before", acct(p));
    cuuint64_t z = 0, five = 5;
    outc("attr.setUsedHigh0", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &z));
    out("attr.setUsedHigh0.acct", acct(p));
    outc("attr.setUsedHigh5", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &five));
    outc("attr.setResHigh0", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &z));
    outc("attr.setResHigh5", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &five));
    outc("attr.setResCur0", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &z));
    outc("attr.setUsedCur0", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &z));
    int two = 2, neg = -1;
    outc("attr.setFollow2", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &two));
    out("attr.getFollow", u64(pattr(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES)));
    outc("attr.setOppNeg", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &neg));
    out("attr.getOpp", u64(pattr(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC)));
    {
      // How many bytes does a get of a reuse attribute write?
      unsigned char buf[8];
      memset(buf, 0xab, 8);
      cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, buf);
      std::string b;
      for (int i = 0; i < 8; ++i) b += hex(buf[i]) + " ";
      out("attr.getInternal.bytes", b);
      memset(buf, 0xab, 8);
      cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, buf);
      b.clear();
      for (int i = 0; i < 8; ++i) b += hex(buf[i]) + " ";
      out("attr.getThreshold.bytes", b);
    }
    outc("attr.get0", cuMemPoolGetAttribute(p, (CUmemPool_attribute)0, &z));
    outc("attr.get9", cuMemPoolGetAttribute(p, (CUmemPool_attribute)9, &z));
    outc("attr.get10", cuMemPoolGetAttribute(p, (CUmemPool_attribute)10, &z));
    outc("attr.get100", cuMemPoolGetAttribute(p, (CUmemPool_attribute)100, &z));
    outc("attr.set0", cuMemPoolSetAttribute(p, (CUmemPool_attribute)0, &z));
    outc("attr.set9", cuMemPoolSetAttribute(p, (CUmemPool_attribute)9, &z));
    outc("attr.getNullValue", cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, nullptr));
    outc("attr.getNullPool", cuMemPoolGetAttribute(nullptr, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &z));
    outc("attr.setNullPool", cuMemPoolSetAttribute(nullptr, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &z));
    cudaMemPool_t rp = (cudaMemPool_t)p;
    unsigned long long rv = 0;
    outr("rt.attr.getUsedHigh", cudaMemPoolGetAttribute(rp, cudaMemPoolAttrUsedMemHigh, &rv));
    outr("rt.attr.setUsedHigh5", cudaMemPoolSetAttribute(rp, cudaMemPoolAttrUsedMemHigh, &five));
    outr("rt.attr.get0", cudaMemPoolGetAttribute(rp, (cudaMemPoolAttr)0, &rv));
    outr("rt.attr.getNullPool", cudaMemPoolGetAttribute(nullptr, cudaMemPoolAttrUsedMemHigh, &rv));
    outr("rt.trimNull", cudaMemPoolTrimTo(nullptr, 0));
    cuMemFreeAsync(a, s);
    cuStreamSynchronize(s);
    cuMemPoolDestroy(p);
  }
  // cuMemGetInfo and pool reservations.
  {
    size_t f0 = 0, t = 0, f1 = 0, f2 = 0;
    cuMemGetInfo(&f0, &t);
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr a = 0;
    cuMemAllocFromPoolAsync(&a, 1, p, s);
    cuStreamSynchronize(s);
    cuMemGetInfo(&f1, &t);
    cuMemFreeAsync(a, s);
    cuStreamSynchronize(s);
    cuMemGetInfo(&f2, &t);
    out("meminfo.pool", "delta_alloc=" + std::to_string((long long)f0 - (long long)f1) +
                            " delta_after=" + std::to_string((long long)f0 - (long long)f2));
    cuMemPoolDestroy(p);
  }
  cuStreamDestroy(s);
}

// ---------------------------------------------------------------------------------------
static void probe_reuse() {
  CUstream a = nullptr, b = nullptr;
  cuStreamCreate(&a, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&b, CU_STREAM_NON_BLOCKING);
  auto run = [&](const std::string& name, int follow, int opp, int internal, int mode, size_t maxSize = 0) {
    CUmemPoolProps pp = base_props();
    pp.maxSize = maxSize;
    CUmemoryPool p = mkpool(pp);
    set_reuse(p, follow, opp, internal);
    const size_t n = maxSize ? 30 * MiB : MiB;
    CUdeviceptr x = 0, y = 0;
    Blocker blk;
    CUevent ev;
    cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
    cuMemAllocFromPoolAsync(&x, n, p, a);
    if (mode == 3 || mode == 4) blk.block(a);  // free pending behind a blocked stream
    cuMemFreeAsync(x, a);
    switch (mode) {
      case 0: break;                                                       // nothing
      case 1: std::this_thread::sleep_for(std::chrono::milliseconds(20)); break;  // completed, unobserved
      case 2: cuStreamSynchronize(a); break;                               // observed
      case 3: break;                                                       // pending
      case 4: cuEventRecord(ev, a); cuStreamWaitEvent(b, ev, 0); break;      // pending, b depends
      case 5: cuEventRecord(ev, a); cuStreamWaitEvent(b, ev, 0); break;      // b depends (a not blocked)
    }
    CUresult r = cuMemAllocFromPoolAsync(&y, n, p, b);
    std::string v = std::string(nm(r)) + (r ? "" : (y == x ? " SAME" : " DIFFERENT"));
    if (mode == 3 || mode == 4) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      v += std::string(" queryB=") + nm(cuStreamQuery(b));
      blk.release();
    }
    cuStreamSynchronize(a);
    cuStreamSynchronize(b);
    v += " " + acct(p);
    if (!r) cuMemFreeAsync(y, b);
    cuStreamSynchronize(b);
    cuEventDestroy(ev);
    cuMemPoolDestroy(p);
    out("reuse." + name, v);
  };
  const char* modes[] = {"immediate", "completedUnobserved", "synced", "pending", "pendingWithEventDep", "eventDep"};
  for (int m = 0; m < 6; ++m) {
    run(std::string(modes[m]) + ".defaults", 1, 1, 1, m);
    run(std::string(modes[m]) + ".allOff", 0, 0, 0, m);
    run(std::string(modes[m]) + ".followOnly", 1, 0, 0, m);
    run(std::string(modes[m]) + ".oppOnly", 0, 1, 0, m);
    run(std::string(modes[m]) + ".internalOnly", 0, 0, 1, m);
    run(std::string(modes[m]) + ".full32M.defaults", 1, 1, 1, m, 32 * MiB);
    run(std::string(modes[m]) + ".full32M.allOff", 0, 0, 0, m, 32 * MiB);
    run(std::string(modes[m]) + ".full32M.internalOnly", 0, 0, 1, m, 32 * MiB);
    run(std::string(modes[m]) + ".full32M.oppOnly", 0, 1, 0, m, 32 * MiB);
    run(std::string(modes[m]) + ".full32M.followOnly", 1, 0, 0, m, 32 * MiB);
  }
  // Same stream: immediate reuse; different size.
  {
    CUmemoryPool p = mkpool(base_props());
    set_reuse(p, 0, 0, 0);
    CUdeviceptr x = 0, y = 0, z = 0;
    Blocker blk;
    blk.block(a);
    cuMemAllocFromPoolAsync(&x, MiB, p, a);
    cuMemFreeAsync(x, a);
    cuMemAllocFromPoolAsync(&y, MiB, p, a);
    out("reuse.sameStream.blocked", y == x ? "SAME" : "DIFFERENT");
    cuMemFreeAsync(y, a);
    cuMemAllocFromPoolAsync(&z, 1000, p, a);
    out("reuse.sameStream.smaller", z == x ? "SAME" : "DIFFERENT");
    cuMemFreeAsync(z, a);
    blk.release();
    cuStreamSynchronize(a);
    cuMemPoolDestroy(p);
  }
  // Legacy stream: free on a blocking stream, allocate on the legacy stream.
  {
    CUstream blocking = nullptr;
    cuStreamCreate(&blocking, CU_STREAM_DEFAULT);
    CUmemoryPool p = mkpool(base_props());
    set_reuse(p, 1, 0, 0);
    CUdeviceptr x = 0, y = 0;
    Blocker blk;
    blk.block(blocking);
    cuMemAllocFromPoolAsync(&x, MiB, p, blocking);
    cuMemFreeAsync(x, blocking);
    cuMemAllocFromPoolAsync(&y, MiB, p, CU_STREAM_LEGACY);
    out("reuse.blockingToLegacy.followOnly", y == x ? "SAME" : "DIFFERENT");
    blk.release();
    cuStreamSynchronize(blocking);
    cuStreamSynchronize(CU_STREAM_LEGACY);
    cuMemFreeAsync(y, CU_STREAM_LEGACY);
    cuStreamSynchronize(CU_STREAM_LEGACY);
    cuMemPoolDestroy(p);
    cuStreamDestroy(blocking);
  }
  // Destroying a stream with a pending free.
  {
    CUstream t = nullptr;
    cuStreamCreate(&t, CU_STREAM_NON_BLOCKING);
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr x = 0;
    Blocker blk;
    cuMemAllocFromPoolAsync(&x, MiB, p, t);
    blk.block(t);
    cuMemFreeAsync(x, t);
    outc("reuse.destroyStreamPendingFree", cuStreamDestroy(t));
    blk.release();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cuCtxSynchronize();
    out("reuse.destroyStreamPendingFree.acct", acct(p));
    cuMemPoolDestroy(p);
  }
  // Destroy a pool with a live allocation, then free it.
  {
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr x = 0;
    cuMemAllocFromPoolAsync(&x, MiB, p, a);
    cuStreamSynchronize(a);
    outc("destroy.withLive", cuMemPoolDestroy(p));
    unsigned char buf[4] = {1, 2, 3, 4}, back[4] = {};
    outc("destroy.withLive.htod", cuMemcpyHtoD(x, buf, 4));
    outc("destroy.withLive.dtoh", cuMemcpyDtoH(back, x, 4));
    out("destroy.withLive.data", u64(back[3]));
    CUmemoryPool owner = nullptr;
    outc("destroy.withLive.ptrAttrPool", cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, x));
    out("destroy.withLive.ptrAttrPool.same", owner == p ? "yes" : owner ? "other" : "null");
    outc("destroy.withLive.freeAsync", cuMemFreeAsync(x, a));
    outc("destroy.withLive.sync", cuStreamSynchronize(a));
  }
  cuStreamDestroy(a);
  cuStreamDestroy(b);
}

// ---------------------------------------------------------------------------------------
static void probe_access() {
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, 0);
  CUmemoryPool p = mkpool(base_props());
  auto get = [&](const std::string& name, CUmemoryPool pool, CUmemLocationType t, int id) {
    CUmemAccess_flags f = (CUmemAccess_flags)77;
    CUmemLocation l{t, id};
    CUresult r = cuMemPoolGetAccess(&f, pool, &l);
    out("access.get." + name, std::string(nm(r)) + " flags=" + u64(f));
  };
  get("dev0", p, CU_MEM_LOCATION_TYPE_DEVICE, 0);
  get("dev1", p, CU_MEM_LOCATION_TYPE_DEVICE, 1);
  get("dev99", p, CU_MEM_LOCATION_TYPE_DEVICE, 99);
  get("dev-1", p, CU_MEM_LOCATION_TYPE_DEVICE, -1);
  get("host", p, CU_MEM_LOCATION_TYPE_HOST, 0);
  get("hostNuma0", p, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
  get("hostNumaCurrent", p, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0);
  get("none", p, CU_MEM_LOCATION_TYPE_NONE, 0);
  get("type9", p, (CUmemLocationType)9, 0);
  {
    CUmemLocation l{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    outc("access.get.nullFlags", cuMemPoolGetAccess(nullptr, p, &l));
    CUmemAccess_flags f;
    outc("access.get.nullLoc", cuMemPoolGetAccess(&f, p, nullptr));
    outc("access.get.nullPool", cuMemPoolGetAccess(&f, nullptr, &l));
  }
  auto set = [&](const std::string& name, CUmemoryPool pool, std::vector<CUmemAccessDesc> d, size_t count) {
    CUresult r = cuMemPoolSetAccess(pool, d.empty() ? nullptr : d.data(), count);
    out("access.set." + name, nm(r));
  };
  auto desc = [](CUmemLocationType t, int id, int flags) {
    CUmemAccessDesc d;
    d.location.type = t;
    d.location.id = id;
    d.flags = (CUmemAccess_flags)flags;
    return d;
  };
  set("dev0_rw", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3)}, 1);
  set("dev0_none", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0)}, 1);
  get("dev0.afterSetNone", p, CU_MEM_LOCATION_TYPE_DEVICE, 0);
  set("dev0_read", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 1)}, 1);
  get("dev0.afterSetRead", p, CU_MEM_LOCATION_TYPE_DEVICE, 0);
  set("dev0_flags2", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 2)}, 1);
  set("dev0_flags7", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 7)}, 1);
  set("dev1_rw", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 1, 3)}, 1);
  get("dev1.afterSet", p, CU_MEM_LOCATION_TYPE_DEVICE, 1);
  set("dev1_read", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 1, 1)}, 1);
  get("dev1.afterSetRead", p, CU_MEM_LOCATION_TYPE_DEVICE, 1);
  set("dev1_none", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 1, 0)}, 1);
  get("dev1.afterSetNone", p, CU_MEM_LOCATION_TYPE_DEVICE, 1);
  set("dev99_rw", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 99, 3)}, 1);
  set("host_rw", p, {desc(CU_MEM_LOCATION_TYPE_HOST, 0, 3)}, 1);
  get("host.afterSet", p, CU_MEM_LOCATION_TYPE_HOST, 0);
  set("hostNuma0_rw", p, {desc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, 3)}, 1);
  set("type9_rw", p, {desc((CUmemLocationType)9, 0, 3)}, 1);
  set("count0_null", p, {}, 0);
  set("count1_null", p, {}, 1);
  set("nullPool", nullptr, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3)}, 1);
  set("two_dev0_dev0", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3), desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3)}, 2);
  set("two_dev0ok_dev99bad", p, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3), desc(CU_MEM_LOCATION_TYPE_DEVICE, 99, 3)}, 2);
  set("defpool_dev0_rw", def, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3)}, 1);
  // Host-location pools.
  {
    CUmemPoolProps hp = base_props(); hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemoryPool h = mkpool(hp);
    get("hostPool.host", h, CU_MEM_LOCATION_TYPE_HOST, 0);
    get("hostPool.hostNuma0", h, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
    get("hostPool.dev0", h, CU_MEM_LOCATION_TYPE_DEVICE, 0);
    set("hostPool.dev0_rw", h, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3)}, 1);
    get("hostPool.dev0.afterSet", h, CU_MEM_LOCATION_TYPE_DEVICE, 0);
    set("hostPool.host_none", h, {desc(CU_MEM_LOCATION_TYPE_HOST, 0, 0)}, 1);
    set("hostPool.host_rw", h, {desc(CU_MEM_LOCATION_TYPE_HOST, 0, 3)}, 1);
    set("hostPool.dev0_none", h, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0)}, 1);
    get("hostPool.dev0.afterNone", h, CU_MEM_LOCATION_TYPE_DEVICE, 0);
    cuMemPoolDestroy(h);
    hp.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    h = mkpool(hp);
    get("numaPool.host", h, CU_MEM_LOCATION_TYPE_HOST, 0);
    get("numaPool.hostNuma0", h, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
    get("numaPool.dev0", h, CU_MEM_LOCATION_TYPE_DEVICE, 0);
    set("numaPool.dev0_rw", h, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3)}, 1);
    get("numaPool.dev0.afterSet", h, CU_MEM_LOCATION_TYPE_DEVICE, 0);
    cuMemPoolDestroy(h);
    hp = base_props(); hp.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    h = mkpool(hp);
    if (h) {
      get("managedPool.dev0", h, CU_MEM_LOCATION_TYPE_DEVICE, 0);
      get("managedPool.host", h, CU_MEM_LOCATION_TYPE_HOST, 0);
      set("managedPool.dev0_rw", h, {desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3)}, 1);
      set("managedPool.host_rw", h, {desc(CU_MEM_LOCATION_TYPE_HOST, 0, 3)}, 1);
      cuMemPoolDestroy(h);
    }
  }
  // Runtime forms.
  {
    cudaMemAccessFlags f = (cudaMemAccessFlags)77;
    cudaMemLocation l{cudaMemLocationTypeDevice, 0};
    outr("rt.access.get.dev0", cudaMemPoolGetAccess(&f, (cudaMemPool_t)p, &l));
    out("rt.access.get.dev0.flags", u64(f));
    l.id = 99;
    outr("rt.access.get.dev99", cudaMemPoolGetAccess(&f, (cudaMemPool_t)p, &l));
    cudaMemAccessDesc d{};
    d.location = {cudaMemLocationTypeDevice, 99};
    d.flags = cudaMemAccessFlagsProtReadWrite;
    outr("rt.access.set.dev99", cudaMemPoolSetAccess((cudaMemPool_t)p, &d, 1));
    d.location = {cudaMemLocationTypeDevice, 0};
    d.flags = cudaMemAccessFlagsProtNone;
    outr("rt.access.set.dev0none", cudaMemPoolSetAccess((cudaMemPool_t)p, &d, 1));
    outr("rt.access.lastError", cudaGetLastError());
  }
  cuMemPoolDestroy(p);

  if (g_ndev >= 2) {
    int can = -1;
    cuDeviceCanAccessPeer(&can, 0, 1);
    out("peer.canAccess01", u64(can));
    CUmemoryPool p0 = mkpool(base_props(0));
    CUdeviceptr x = 0;
    CUstream s0 = nullptr;
    cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING);
    cuMemAllocFromPoolAsync(&x, 4096, p0, s0);
    unsigned char buf[16] = {9, 8, 7, 6};
    cuMemcpyHtoDAsync(x, buf, 16, s0);
    cuStreamSynchronize(s0);
    // From a device-1 context, before access is granted.
    CUcontext c1 = nullptr;
    cuDevicePrimaryCtxRetain(&c1, 1);
    CUcontext c0 = nullptr;
    cuCtxGetCurrent(&c0);
    cuCtxSetCurrent(c1);
    unsigned char back[16] = {};
    outc("peer.dev1ctx.dtoh.noAccess", cuMemcpyDtoH(back, x, 16));
    out("peer.dev1ctx.dtoh.noAccess.byte", u64(back[1]));
    CUdeviceptr y = 0;
    cuMemAlloc(&y, 4096);
    outc("peer.dev1ctx.dtod.noAccess", cuMemcpyDtoD(y, x, 16));
    CUstream s1 = nullptr;
    cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
    CUdeviceptr z = 0;
    outc("peer.allocFromDev0PoolOnDev1Stream", cuMemAllocFromPoolAsync(&z, 4096, p0, s1));
    if (z) cuMemFreeAsync(z, s1);
    cuStreamSynchronize(s1);
    cuCtxSetCurrent(c0);
    outc("peer.setDevMemPool.dev1.poolOfDev0", cuDeviceSetMemPool(1, p0));
    CUmemAccessDesc d;
    d.location = {CU_MEM_LOCATION_TYPE_DEVICE, 1};
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    outc("peer.setAccess.dev1", cuMemPoolSetAccess(p0, &d, 1));
    CUmemAccess_flags f;
    CUmemLocation l{CU_MEM_LOCATION_TYPE_DEVICE, 1};
    cuMemPoolGetAccess(&f, p0, &l);
    out("peer.getAccess.dev1", u64(f));
    CUdeviceptr w = 0;
    cuMemAllocFromPoolAsync(&w, 4096, p0, s0);
    cuStreamSynchronize(s0);
    cuCtxSetCurrent(c1);
    outc("peer.dev1ctx.dtod.withAccess", cuMemcpyDtoD(y, x, 16));
    cuCtxSetCurrent(c0);
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    outc("peer.revoke.dev1", cuMemPoolSetAccess(p0, &d, 1));
    cuMemPoolGetAccess(&f, p0, &l);
    out("peer.getAccess.dev1.afterRevoke", u64(f));
    // Pointer attributes seen from device 1.
    cuCtxSetCurrent(c1);
    int ord = -5;
    outc("peer.dev1ctx.ptrOrdinal", cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, x));
    out("peer.dev1ctx.ptrOrdinal.value", std::to_string(ord));
    cuCtxSetCurrent(c0);
    cuMemFreeAsync(x, s0);
    cuMemFreeAsync(w, s0);
    cuStreamSynchronize(s0);
    cuMemPoolDestroy(p0);
    cuCtxSetCurrent(c1);
    cuMemFree(y);
    cuCtxSetCurrent(c0);
    // Pools of device 1.
    CUmemoryPool p1 = mkpool(base_props(1));
    outc("peer.setDevMemPool.dev0.poolOfDev1", cuDeviceSetMemPool(0, p1));
    CUmemLocation l1{CU_MEM_LOCATION_TYPE_DEVICE, 1};
    CUmemLocation l0{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemAccess_flags f1;
    cuMemPoolGetAccess(&f1, p1, &l1);
    out("peer.pool1.access.dev1", u64(f1));
    cuMemPoolGetAccess(&f1, p1, &l0);
    out("peer.pool1.access.dev0", u64(f1));
    CUdeviceptr q = 0;
    outc("peer.pool1.allocOnDev0Stream", cuMemAllocFromPoolAsync(&q, 4096, p1, s0));
    int qo = -5;
    cuPointerGetAttribute(&qo, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, q);
    out("peer.pool1.ptrOrdinal", std::to_string(qo));
    cuMemFreeAsync(q, s0);
    cuStreamSynchronize(s0);
    cuMemPoolDestroy(p1);
    cuStreamDestroy(s0);
  }
}

// ---------------------------------------------------------------------------------------
static void probe_ptr_attrs() {
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  struct K {
    const char* name;
    CUmemAllocationType t;
    CUmemLocationType lt;
    int id;
  } kinds[] = {{"device", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 0},
               {"host", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, 0},
               {"hostNuma", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0},
               {"managedDev", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, 0},
               {"managedNone", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_NONE, 0},
               {"devicePosixFd", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 0},
               {"default", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 0}};
  for (auto& k : kinds) {
    CUmemPoolProps pp = base_props();
    pp.allocType = k.t;
    pp.location.type = k.lt;
    pp.location.id = k.id;
    if (std::string(k.name) == "devicePosixFd") pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemoryPool p = nullptr;
    if (std::string(k.name) == "default") cuDeviceGetDefaultMemPool(&p, 0);
    else p = mkpool(pp);
    if (!p) continue;
    std::string pre = std::string("ptr.") + k.name + ".";
    CUdeviceptr x = 0, x2 = 0;
    outc(pre + "alloc", cuMemAllocFromPoolAsync(&x, 1000, p, s));
    cuMemAllocFromPoolAsync(&x2, 1000, p, s);
    cuStreamSynchronize(s);
    CUpointer_attribute attrs[] = {
        CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
        CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, CU_POINTER_ATTRIBUTE_BUFFER_ID,
        CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID,
        CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE};
    const char* an[] = {"CONTEXT", "MEMORY_TYPE", "DEVICE_POINTER", "HOST_POINTER", "SYNC_MEMOPS", "BUFFER_ID",
                        "IS_MANAGED", "DEVICE_ORDINAL", "IS_LEGACY_IPC", "RANGE_START", "RANGE_SIZE", "MAPPED",
                        "ALLOWED_HANDLE_TYPES", "RDMA", "ACCESS_FLAGS", "MEMPOOL_HANDLE", "MAPPING_SIZE",
                        "MAPPING_BASE", "BLOCK_ID", "HW_DECOMP"};
    CUdeviceptr q = x + 100;
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i) {
      unsigned long long v = 0xdeadbeefdeadbeefull;
      CUresult r = cuPointerGetAttribute(&v, attrs[i], q);
      std::string val = hex(v);
      if (attrs[i] == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR || attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ||
          attrs[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER || attrs[i] == CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR)
        val = "x+" + std::to_string((long long)(v - x));
      if (attrs[i] == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE) val = (CUmemoryPool)v == p ? "pool" : hex(v);
      if (attrs[i] == CU_POINTER_ATTRIBUTE_CONTEXT) {
        CUcontext c = nullptr;
        cuCtxGetCurrent(&c);
        val = (CUcontext)v == c ? "current" : hex(v);
      }
      out(pre + an[i], std::string(nm(r)) + " " + val);
    }
    {
      unsigned long long b1 = 0, b2 = 0;
      cuPointerGetAttribute(&b1, CU_POINTER_ATTRIBUTE_BUFFER_ID, x);
      cuPointerGetAttribute(&b2, CU_POINTER_ATTRIBUTE_BUFFER_ID, x2);
      out(pre + "bufferIdDistinct", b1 != b2 ? "yes" : "no");
      cuPointerGetAttribute(&b1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, x);
      cuPointerGetAttribute(&b2, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, x2);
      out(pre + "blockIdDistinct", b1 != b2 ? "yes" : "no");
    }
    {
      CUdeviceptr base = 0;
      size_t size = 0;
      CUresult r = cuMemGetAddressRange(&base, &size, q);
      out(pre + "getAddressRange", std::string(nm(r)) + " base=x+" + std::to_string((long long)(base - x)) +
                                       " size=" + u64(size));
    }
    {
      cudaPointerAttributes pa;
      memset(&pa, 0xab, sizeof pa);
      cudaError_t e = cudaPointerGetAttributes(&pa, (void*)q);
      out(pre + "rtAttrs", std::string(rn(e)) + " type=" + std::to_string((int)pa.type) + " device=" +
                               std::to_string(pa.device) + " dptr=x+" +
                               std::to_string((long long)((CUdeviceptr)pa.devicePointer - x)) + " hptr=" +
                               (pa.hostPointer ? "x+" + std::to_string((long long)((CUdeviceptr)pa.hostPointer - x))
                                               : std::string("null")));
    }
    {
      // A copy running past the 1000-byte allocation (the chunk goes on).
      std::vector<unsigned char> buf(4096, 7);
      outc(pre + "htodOverrun2000", cuMemcpyHtoD(x, buf.data(), 2000));
      outc(pre + "dtohOverrun2000", cuMemcpyDtoH(buf.data(), x, 2000));
      outc(pre + "memsetOverrun2000", cuMemsetD8(x, 1, 2000));
      outc(pre + "htodInGap", cuMemcpyHtoD(x + 1000, buf.data(), 8));
    }
    if (k.lt != CU_MEM_LOCATION_TYPE_DEVICE || k.t == CU_MEM_ALLOCATION_TYPE_MANAGED) {
      // Host access.
      ((volatile unsigned char*)x)[5] = 0x77;
      unsigned char back = 0;
      cuMemcpyDtoH(&back, x + 5, 1);
      out(pre + "hostWriteThenDtoH", u64(back));
    }
    {
      // Free, then attributes of the freed pointer.
      cuMemFreeAsync(x, s);
      cuStreamSynchronize(s);
      unsigned mt = 77;
      CUresult r = cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, x);
      out(pre + "afterFree.memtype", std::string(nm(r)) + " " + u64(mt));
      CUdeviceptr base = 0;
      size_t size = 0;
      r = cuMemGetAddressRange(&base, &size, x);
      out(pre + "afterFree.addrRange", std::string(nm(r)));
      unsigned char b = 0;
      r = cuMemcpyDtoH(&b, x, 1);
      out(pre + "afterFree.dtoh", std::string(nm(r)));
    }
    cuMemFreeAsync(x2, s);
    cuStreamSynchronize(s);
    if (std::string(k.name) != "default") cuMemPoolDestroy(p);
  }
  cuStreamDestroy(s);
}

// ---------------------------------------------------------------------------------------
static void probe_misc() {
  // cudaMallocAsync on the per-thread stream, and implicit context creation.
  void* p = nullptr;
  outr("misc.mallocAsync.ptsz", cudaMallocAsync(&p, 100, cudaStreamPerThread));
  outr("misc.freeAsync.ptsz", cudaFreeAsync(p, cudaStreamPerThread));
  cudaStreamSynchronize(cudaStreamPerThread);
  // Many live allocations and scrambled frees: timing and reserved memory.
  CUstream s = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, 0);
  std::vector<CUdeviceptr> v(10000);
  auto t0 = std::chrono::steady_clock::now();
  for (auto& x : v) cuMemAllocAsync(&x, 256, s);
  auto t1 = std::chrono::steady_clock::now();
  out("misc.10k256.acct", acct(def));
  unsigned long long st = 12345;
  for (size_t i = v.size() - 1; i > 0; --i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(v[i], v[(st >> 33) % (i + 1)]);
  }
  auto t2 = std::chrono::steady_clock::now();
  for (auto x : v) cuMemFreeAsync(x, s);
  auto t3 = std::chrono::steady_clock::now();
  cuStreamSynchronize(s);
  out("misc.10k256.ns_per_alloc", u64(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count() / 10000));
  out("misc.10k256.ns_per_free", u64(std::chrono::duration_cast<std::chrono::nanoseconds>(t3 - t2).count() / 10000));
  out("misc.10k256.afterFree", acct(def));
  auto t4 = std::chrono::steady_clock::now();
  for (int i = 0; i < 100000; ++i) {
    CUdeviceptr x;
    cuMemAllocAsync(&x, 256, s);
    cuMemFreeAsync(x, s);
  }
  auto t5 = std::chrono::steady_clock::now();
  out("misc.pair256.ns", u64(std::chrono::duration_cast<std::chrono::nanoseconds>(t5 - t4).count() / 100000));
  cuStreamSynchronize(s);
  cuStreamDestroy(s);
  // Device attributes relevant to pools.
  int v1 = -1;
  cuDeviceGetAttribute(&v1, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0);
  out("misc.attr.handleTypes", u64(v1));
  cuDeviceGetAttribute(&v1, CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, 0);
  out("misc.attr.hostPools", u64(v1));
}


static void probe_followup() {
  CUstream s = nullptr, o = nullptr;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&o, CU_STREAM_NON_BLOCKING);
  // Host-location pools: copies from a device context with and without access.
  for (int numa = 0; numa < 2; ++numa) {
    CUmemPoolProps hp = base_props();
    hp.location.type = numa ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_HOST;
    CUmemoryPool h = mkpool(hp);
    std::string pre = numa ? "fu.numaPool." : "fu.hostPool.";
    CUdeviceptr x = 0;
    cuMemAllocFromPoolAsync(&x, 4096, h, s);
    cuStreamSynchronize(s);
    unsigned char buf[64] = {1, 2, 3}, back[64] = {};
    ((volatile unsigned char*)x)[7] = 0x42;
    outc(pre + "noAccess.dtoh", cuMemcpyDtoH(back, x, 64));
    outc(pre + "noAccess.htod", cuMemcpyHtoD(x, buf, 64));
    outc(pre + "noAccess.memset", cuMemsetD8(x, 1, 64));
    outc(pre + "noAccess.cuMemcpy", cuMemcpy((CUdeviceptr)back, x, 64));
    outr(pre + "noAccess.cudaMemcpyDefault", cudaMemcpy(back, (void*)x, 64, cudaMemcpyDefault));
    outr(pre + "noAccess.cudaMemcpyD2H", cudaMemcpy(back, (void*)x, 64, cudaMemcpyDeviceToHost));
    outr(pre + "noAccess.cudaMemcpyH2H", cudaMemcpy(back, (void*)x, 64, cudaMemcpyHostToHost));
    out(pre + "noAccess.byte7", u64(back[7]));
    CUmemAccessDesc d;
    d.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    outc(pre + "grant.dev0", cuMemPoolSetAccess(h, &d, 1));
    memset(back, 0, sizeof back);
    outc(pre + "access.dtoh", cuMemcpyDtoH(back, x, 64));
    out(pre + "access.byte7", u64(back[7]));
    outc(pre + "access.htod", cuMemcpyHtoD(x, buf, 64));
    out(pre + "access.hostSees", u64(((volatile unsigned char*)x)[1]));
    CUdeviceptr y = 0;
    cuMemAllocFromPoolAsync(&y, 4096, h, s);
    cuStreamSynchronize(s);
    outc(pre + "access.newAlloc.dtoh", cuMemcpyDtoH(back, y, 64));
    outc(pre + "cuMemFree", cuMemFree(x));
    outr(pre + "cudaFree", cudaFree((void*)y));
    CUdeviceptr z = 0;
    cuMemAllocFromPoolAsync(&z, 4096, h, s);
    cuStreamSynchronize(s);
    outc(pre + "cuMemFreeHost", cuMemFreeHost((void*)z));
    outr(pre + "cudaFreeHost", cudaFreeHost((void*)z));
    outc(pre + "freeAsyncAfter", cuMemFreeAsync(z, s));
    cuStreamSynchronize(s);
    out(pre + "end", acct(h));
    cuMemPoolDestroy(h);
  }
  // Current host pool after destroying it.
  {
    CUmemPoolProps hp = base_props(); hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemoryPool host = mkpool(hp);
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_HOST, 0};
    CUmemoryPool hdef = nullptr, q = nullptr;
    cuMemGetDefaultMemPool(&hdef, &loc, CU_MEM_ALLOCATION_TYPE_PINNED);
    outc("fu.hostCurrent.set", cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, host));
    outc("fu.hostCurrent.destroy", cuMemPoolDestroy(host));
    CUresult r = cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED);
    out("fu.hostCurrent.get", std::string(nm(r)) + (q == hdef ? " default" : q == host ? " destroyed" : q ? " other" : " null"));
    CUmemoryPool man = nullptr, mdef = nullptr;
    hp = base_props(); hp.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    man = mkpool(hp);
    CUmemLocation dl{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    cuMemGetDefaultMemPool(&mdef, &dl, CU_MEM_ALLOCATION_TYPE_MANAGED);
    cuMemSetMemPool(&dl, CU_MEM_ALLOCATION_TYPE_MANAGED, man);
    cuMemPoolDestroy(man);
    r = cuMemGetMemPool(&q, &dl, CU_MEM_ALLOCATION_TYPE_MANAGED);
    out("fu.managedCurrent.get", std::string(nm(r)) + (q == mdef ? " default" : q == man ? " destroyed" : q ? " other" : " null"));
    // cuDeviceSetMemPool(0, managed pool): what do the two getters say?
    man = mkpool(hp);
    CUmemoryPool def = nullptr;
    cuDeviceGetDefaultMemPool(&def, 0);
    cuDeviceSetMemPool(0, man);
    cuDeviceGetMemPool(&q, 0);
    out("fu.devSetManaged.devGet", q == man ? "managed" : q == def ? "default" : "other");
    cuMemGetMemPool(&q, &dl, CU_MEM_ALLOCATION_TYPE_PINNED);
    out("fu.devSetManaged.memGetPinned", q == man ? "managed" : q == def ? "default" : "other");
    cuMemGetMemPool(&q, &dl, CU_MEM_ALLOCATION_TYPE_MANAGED);
    out("fu.devSetManaged.memGetManaged", q == man ? "managed" : q == mdef ? "mdefault" : "other");
    CUdeviceptr x = 0;
    outc("fu.devSetManaged.allocAsync", cuMemAllocAsync(&x, 100, s));
    int ism = -1;
    cuPointerGetAttribute(&ism, CU_POINTER_ATTRIBUTE_IS_MANAGED, x);
    out("fu.devSetManaged.isManaged", std::to_string(ism));
    cuMemFreeAsync(x, s);
    cuStreamSynchronize(s);
    cuDeviceSetMemPool(0, def);
    cuMemPoolDestroy(man);
  }
  // Does a successful cuStreamQuery observe a free (trim, cross-stream reuse with all policies off)?
  {
    CUmemoryPool p = mkpool(base_props());
    set_reuse(p, 0, 0, 0);
    CUdeviceptr x = 0, y = 0;
    cuMemAllocFromPoolAsync(&x, MiB, p, s);
    cuStreamSynchronize(s);
    cuMemFreeAsync(x, s);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    outc("fu.query.query", cuStreamQuery(s));
    cuMemAllocFromPoolAsync(&y, MiB, p, o);
    out("fu.query.reuseOther", y == x ? "SAME" : "DIFFERENT");
    cuMemFreeAsync(y, o);
    cuStreamSynchronize(o);
    cuMemPoolTrimTo(p, 0);
    out("fu.query.afterTrim", acct(p));
    cuMemPoolDestroy(p);
  }
  // Event synchronize of an event recorded on another stream that waited on the freeing stream.
  {
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr x = 0;
    CUevent e1, e2;
    cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING);
    cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING);
    cuMemAllocFromPoolAsync(&x, MiB, p, s);
    cuMemFreeAsync(x, s);
    cuEventRecord(e1, s);
    cuStreamWaitEvent(o, e1, 0);
    cuEventRecord(e2, o);
    cuEventSynchronize(e2);
    out("fu.transitiveEventSync", acct(p));
    cuStreamSynchronize(o);
    out("fu.transitiveStreamSync", acct(p));
    cuStreamSynchronize(s);
    out("fu.directStreamSync", acct(p));
    cuEventDestroy(e1);
    cuEventDestroy(e2);
    cuMemPoolDestroy(p);
  }
  // TrimTo with three chunks.
  {
    CUmemoryPool p = mkpool(base_props());
    cuuint64_t thr = UINT64_MAX;
    cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr);
    CUdeviceptr a = 0, b = 0, c = 0;
    cuMemAllocFromPoolAsync(&a, 30 * MiB, p, s);
    cuMemAllocFromPoolAsync(&b, 30 * MiB, p, s);
    cuMemAllocFromPoolAsync(&c, 30 * MiB, p, s);
    out("fu.trim3.addrs", "b-a=" + std::to_string((long long)(b - a)) + " c-a=" + std::to_string((long long)(c - a)));
    cuMemFreeAsync(b, s);
    cuStreamSynchronize(s);
    cuMemPoolTrimTo(p, 0);
    out("fu.trim3.middleFreed.trim0", acct(p));
    cuMemFreeAsync(a, s);
    cuMemFreeAsync(c, s);
    cuStreamSynchronize(s);
    CUdeviceptr d1 = 0, d2 = 0, d3 = 0;
    cuMemAllocFromPoolAsync(&d1, 30 * MiB, p, s);
    cuMemAllocFromPoolAsync(&d2, 30 * MiB, p, s);
    cuMemAllocFromPoolAsync(&d3, 30 * MiB, p, s);
    out("fu.trim3.realloc", "d1-a=" + std::to_string((long long)(d1 - a)) + " d2-a=" + std::to_string((long long)(d2 - a)) +
                                " d3-a=" + std::to_string((long long)(d3 - a)) + " " + acct(p));
    cuMemFreeAsync(d1, s); cuMemFreeAsync(d2, s); cuMemFreeAsync(d3, s);
    cuStreamSynchronize(s);
    out("fu.trim3.allFree", acct(p));
    cuMemPoolTrimTo(p, 40 * MiB);
    out("fu.trim3.trim40", acct(p));
    cuMemPoolTrimTo(p, 33 * MiB);
    out("fu.trim3.trim33", acct(p));
    cuMemPoolTrimTo(p, 32 * MiB);
    out("fu.trim3.trim32", acct(p));
    cuMemPoolTrimTo(p, 1);
    out("fu.trim3.trim1", acct(p));
    // A big chunk reused by smaller allocations.
    CUdeviceptr big = 0, s1 = 0, s2 = 0, s3 = 0;
    cuMemAllocFromPoolAsync(&big, 100 * MiB, p, s);
    cuMemFreeAsync(big, s);
    cuStreamSynchronize(s);
    cuMemAllocFromPoolAsync(&s1, 40 * MiB, p, s);
    cuMemAllocFromPoolAsync(&s2, 40 * MiB, p, s);
    cuMemAllocFromPoolAsync(&s3, 40 * MiB, p, s);
    out("fu.bigReuse", "s1-big=" + std::to_string((long long)(s1 - big)) + " s2-big=" + std::to_string((long long)(s2 - big)) +
                           " s3-big=" + std::to_string((long long)(s3 - big)) + " " + acct(p));
    cuMemFreeAsync(s1, s); cuMemFreeAsync(s2, s); cuMemFreeAsync(s3, s);
    cuStreamSynchronize(s);
    cuMemPoolDestroy(p);
  }
  // Free order: fragment and refill.
  {
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr v[6];
    for (auto& x : v) cuMemAllocFromPoolAsync(&x, 1000, p, s);
    cuMemFreeAsync(v[1], s);
    cuMemFreeAsync(v[2], s);
    cuMemFreeAsync(v[4], s);
    CUdeviceptr a = 0, b = 0, c = 0;
    cuMemAllocFromPoolAsync(&a, 2000, p, s);
    cuMemAllocFromPoolAsync(&b, 1000, p, s);
    cuMemAllocFromPoolAsync(&c, 1000, p, s);
    auto rel = [&](CUdeviceptr q) { return std::to_string((long long)(q - v[0])); };
    out("fu.frag.sameStream", "a=" + rel(a) + " b=" + rel(b) + " c=" + rel(c));
    cuStreamSynchronize(s);
    cuMemPoolDestroy(p);
  }
  {
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr v[6];
    for (auto& x : v) cuMemAllocFromPoolAsync(&x, 1000, p, s);
    cuMemFreeAsync(v[1], s);
    cuMemFreeAsync(v[2], s);
    cuMemFreeAsync(v[4], s);
    cuStreamSynchronize(s);
    CUdeviceptr a = 0, b = 0, c = 0;
    cuMemAllocFromPoolAsync(&a, 2000, p, s);
    cuMemAllocFromPoolAsync(&b, 1000, p, s);
    cuMemAllocFromPoolAsync(&c, 1000, p, s);
    auto rel = [&](CUdeviceptr q) { return std::to_string((long long)(q - v[0])); };
    out("fu.frag.synced", "a=" + rel(a) + " b=" + rel(b) + " c=" + rel(c));
    cuStreamSynchronize(s);
    cuMemPoolDestroy(p);
  }
  // Device memory info with pools.
  {
    size_t f0 = 0, t = 0, f1 = 0, f2 = 0;
    cuMemGetInfo(&f0, &t);
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr a = 0;
    cuMemAllocFromPoolAsync(&a, 1, p, s);
    cuStreamSynchronize(s);
    cuMemGetInfo(&f1, &t);
    cuMemFreeAsync(a, s);
    cuStreamSynchronize(s);
    cuMemGetInfo(&f2, &t);
    out("fu.meminfo.pool", "delta_alloc=" + std::to_string((long long)f0 - (long long)f1) +
                               " delta_after=" + std::to_string((long long)f0 - (long long)f2));
    cuMemPoolDestroy(p);
  }
  // Streams of device 1 with the device-0 default pool (cudaMallocAsync uses the stream's device).
  if (g_ndev >= 2) {
    CUcontext c0 = nullptr, c1 = nullptr;
    cuCtxGetCurrent(&c0);
    cuDevicePrimaryCtxRetain(&c1, 1);
    cuCtxSetCurrent(c1);
    CUstream s1 = nullptr;
    cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
    cuCtxSetCurrent(c0);
    CUdeviceptr x = 0;
    outc("fu.dev1stream.allocAsync", cuMemAllocAsync(&x, 100, s1));
    int ord = -5;
    cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, x);
    out("fu.dev1stream.ordinal", std::to_string(ord));
    outc("fu.dev1stream.freeOnDev0Stream", cuMemFreeAsync(x, s));
    cuStreamSynchronize(s);
    cuStreamSynchronize(s1);
    cuStreamDestroy(s1);
  }
  outc("fu.attr.getNullPool", cuMemPoolGetAttribute(nullptr, CU_MEMPOOL_ATTR_USED_MEM_HIGH, nullptr));
  {
    CUmemoryPool def = nullptr;
    cuDeviceGetDefaultMemPool(&def, 0);
    cuuint64_t z = 0;
    outc("fu.attr.getNullPool2", cuMemPoolGetAttribute(nullptr, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &z));
    outc("fu.attr.setNullPool", cuMemPoolSetAttribute(nullptr, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &z));
    unsigned long long rv = 0, five = 5;
    outr("fu.rt.attr.getUsedHigh", cudaMemPoolGetAttribute((cudaMemPool_t)def, cudaMemPoolAttrUsedMemHigh, &rv));
    outr("fu.rt.attr.setUsedHigh5", cudaMemPoolSetAttribute((cudaMemPool_t)def, cudaMemPoolAttrUsedMemHigh, &five));
    outr("fu.rt.attr.get0", cudaMemPoolGetAttribute((cudaMemPool_t)def, (cudaMemPoolAttr)0, &rv));
    outr("fu.rt.attr.getNullPool", cudaMemPoolGetAttribute(nullptr, cudaMemPoolAttrUsedMemHigh, &rv));
    outr("fu.rt.trimNull", cudaMemPoolTrimTo(nullptr, 0));
    outr("fu.rt.lastError", cudaGetLastError());
  }
  cuStreamDestroy(s);
  cuStreamDestroy(o);
}


// Which pool is current after destroying the current pools of several locations?
static void probe_current2() {
  CUmemLocation h{CU_MEM_LOCATION_TYPE_HOST, 0}, d{CU_MEM_LOCATION_TYPE_DEVICE, 0}, n{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
  CUmemoryPool dev_def = nullptr, host_def = nullptr, man_def = nullptr, numa_def = nullptr;
  cuDeviceGetDefaultMemPool(&dev_def, 0);
  cuMemGetDefaultMemPool(&host_def, &h, CU_MEM_ALLOCATION_TYPE_PINNED);
  cuMemGetDefaultMemPool(&man_def, &d, CU_MEM_ALLOCATION_TYPE_MANAGED);
  cuMemGetDefaultMemPool(&numa_def, &n, CU_MEM_ALLOCATION_TYPE_PINNED);
  auto run = [&](const char* name, bool set_host, bool set_man, bool set_numa, bool set_dev, const char* destroy_order) {
    CUmemoryPool host = mkpool(pool_props_host()), man = nullptr, numa = nullptr, dev = mkpool(base_props());
    CUmemPoolProps mp = base_props(); mp.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED; man = mkpool(mp);
    CUmemPoolProps np = base_props(); np.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; numa = mkpool(np);
    if (set_host) cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_PINNED, host);
    if (set_man) cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_MANAGED, man);
    if (set_numa) cuMemSetMemPool(&n, CU_MEM_ALLOCATION_TYPE_PINNED, numa);
    if (set_dev) cuDeviceSetMemPool(0, dev);
    for (const char* c = destroy_order; *c; ++c) {
      if (*c == 'h') cuMemPoolDestroy(host);
      if (*c == 'm') cuMemPoolDestroy(man);
      if (*c == 'n') cuMemPoolDestroy(numa);
      if (*c == 'd') cuMemPoolDestroy(dev);
    }
    auto who = [&](CUmemoryPool q) -> std::string {
      if (q == dev_def) return "devDefault";
      if (q == host_def) return "hostDefault";
      if (q == man_def) return "managedDefault";
      if (q == numa_def) return "numaDefault";
      if (q == host) return "host(destroyed?)";
      if (q == man) return "managed(destroyed?)";
      if (q == numa) return "numa(destroyed?)";
      if (q == dev) return "dev(destroyed?)";
      return "unknown " + hex((uintptr_t)q);
    };
    CUmemoryPool q = nullptr;
    CUresult r1 = cuMemGetMemPool(&q, &h, CU_MEM_ALLOCATION_TYPE_PINNED);
    std::string v = std::string("host:") + nm(r1) + "/" + who(q);
    r1 = cuMemGetMemPool(&q, &d, CU_MEM_ALLOCATION_TYPE_MANAGED);
    v += std::string(" managed:") + nm(r1) + "/" + who(q);
    r1 = cuMemGetMemPool(&q, &n, CU_MEM_ALLOCATION_TYPE_PINNED);
    v += std::string(" numa:") + nm(r1) + "/" + who(q);
    r1 = cuDeviceGetMemPool(&q, 0);
    v += std::string(" dev:") + nm(r1) + "/" + who(q);
    out(std::string("cur2.") + name, v);
    // Clean: restore defaults, destroy leftovers.
    cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_PINNED, host_def);
    cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_MANAGED, man_def);
    cuMemSetMemPool(&n, CU_MEM_ALLOCATION_TYPE_PINNED, numa_def);
    cuDeviceSetMemPool(0, dev_def);
    for (CUmemoryPool p : {host, man, numa, dev})
      if (!strchr(destroy_order, p == host ? 'h' : p == man ? 'm' : p == numa ? 'n' : 'd')) cuMemPoolDestroy(p);
  };
  run("hostOnly_destroyH", true, false, false, false, "h");
  run("manOnly_destroyM", false, true, false, false, "m");
  run("host+man_destroyH", true, true, false, false, "h");
  run("host+man_destroyM", true, true, false, false, "m");
  run("host+man_destroyHM", true, true, false, false, "hm");
  run("host+man_destroyMH", true, true, false, false, "mh");
  run("host+numa_destroyH", true, false, true, false, "h");
  run("host+dev_destroyH", true, false, false, true, "h");
  run("host+dev_destroyD", true, false, false, true, "d");
  run("all_destroyHMND", true, true, true, true, "hmnd");
  run("hostSetNotDestroyed_destroyM", true, false, false, false, "m");
}

// Cases that may crash the real driver: one per child process.
static int risky(const std::string& name) {
  cuInit(0);
  CUcontext c = nullptr;
  cuDevicePrimaryCtxRetain(&c, 0);
  cuCtxSetCurrent(c);
  if (name == "destroyTwice") {
    CUmemoryPool p = mkpool(base_props());
    outc("risky.destroyTwice.first", cuMemPoolDestroy(p));
    outc("risky.destroyTwice.second", cuMemPoolDestroy(p));
  } else if (name == "useDestroyed") {
    CUmemoryPool p = mkpool(base_props());
    cuMemPoolDestroy(p);
    cuuint64_t v = 0;
    outc("risky.useDestroyed.getAttr", cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
    CUdeviceptr d = 0;
    outc("risky.useDestroyed.alloc", cuMemAllocFromPoolAsync(&d, 16, p, nullptr));
  } else if (name == "useDestroyedWithLive") {
    CUmemoryPool p = mkpool(base_props());
    CUdeviceptr d = 0;
    cuMemAllocFromPoolAsync(&d, 16, p, nullptr);
    cuMemPoolDestroy(p);
    cuuint64_t v = 0;
    outc("risky.useDestroyedWithLive.getAttr", cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
    out("risky.useDestroyedWithLive.used", u64(v));
    CUdeviceptr e = 0;
    outc("risky.useDestroyedWithLive.alloc", cuMemAllocFromPoolAsync(&e, 16, p, nullptr));
    outc("risky.useDestroyedWithLive.trim", cuMemPoolTrimTo(p, 0));
    outc("risky.useDestroyedWithLive.setDev", cuDeviceSetMemPool(0, p));
    outc("risky.useDestroyedWithLive.destroyAgain", cuMemPoolDestroy(p));
    outc("risky.useDestroyedWithLive.free", cuMemFreeAsync(d, nullptr));
    outc("risky.useDestroyedWithLive.sync", cuStreamSynchronize(nullptr));
  } else if (name == "garbagePool") {
    CUmemoryPool g = (CUmemoryPool)0x12345678;
    cuuint64_t v = 0;
    outc("risky.garbagePool.getAttr", cuMemPoolGetAttribute(g, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
  } else if (name == "garbagePoolAlloc") {
    CUdeviceptr d = 0;
    outc("risky.garbagePoolAlloc", cuMemAllocFromPoolAsync(&d, 16, (CUmemoryPool)0x12345678, nullptr));
  } else if (name == "garbagePoolDestroy") {
    outc("risky.garbagePoolDestroy", cuMemPoolDestroy((CUmemoryPool)0x12345678));
  } else if (name == "garbagePoolSetDev") {
    outc("risky.garbagePoolSetDev", cuDeviceSetMemPool(0, (CUmemoryPool)0x12345678));
  } else if (name == "freeAfterStreamDestroyed") {
    CUstream s = nullptr;
    cuStreamCreate(&s, 0);
    CUdeviceptr d = 0;
    cuMemAllocAsync(&d, 16, s);
    cuStreamDestroy(s);
    outc("risky.freeAfterStreamDestroyed.freeOnDestroyed", cuMemFreeAsync(d, s));
    outc("risky.freeAfterStreamDestroyed.freeOnLegacy", cuMemFreeAsync(d, nullptr));
  } else if (name == "garbageStreamAlloc") {
    CUdeviceptr d = 0;
    outc("risky.garbageStreamAlloc", cuMemAllocAsync(&d, 16, (CUstream)0x1234560));
  } else if (name == "setAttrNullValue") {
    CUmemoryPool p = mkpool(base_props());
    outc("risky.setAttrNullValue", cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr));
  } else if (name == "cur3a" || name == "cur3b" || name == "cur3c") {
    // cur3a: host default looked up first; cur3b: device default first; cur3c: neither.
    CUmemLocation h{CU_MEM_LOCATION_TYPE_HOST, 0};
    CUmemoryPool hdef = nullptr, ddef = nullptr, q = nullptr;
    if (name == "cur3a") cuMemGetDefaultMemPool(&hdef, &h, CU_MEM_ALLOCATION_TYPE_PINNED);
    if (name == "cur3b") cuDeviceGetDefaultMemPool(&ddef, 0);
    CUmemoryPool host = mkpool(pool_props_host());
    outc("risky." + name + ".set", cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_PINNED, host));
    CUmemoryPool before = nullptr;
    cuMemGetMemPool(&before, &h, CU_MEM_ALLOCATION_TYPE_PINNED);
    outc("risky." + name + ".destroy", cuMemPoolDestroy(host));
    outc("risky." + name + ".get", cuMemGetMemPool(&q, &h, CU_MEM_ALLOCATION_TYPE_PINNED));
    if (!hdef) cuMemGetDefaultMemPool(&hdef, &h, CU_MEM_ALLOCATION_TYPE_PINNED);
    if (!ddef) cuDeviceGetDefaultMemPool(&ddef, 0);
    out("risky." + name + ".is", q == hdef ? "hostDefault" : q == ddef ? "devDefault" : q == host ? "destroyedPool" : "other");
    out("risky." + name + ".before_was_set", before == host ? "yes" : "no");
    // Allocating from the location's current pool afterwards: what memory is it?
    CUdeviceptr x = 0;
    outc("risky." + name + ".allocFromCurrent", cuMemAllocFromPoolAsync(&x, 64, q, nullptr));
    unsigned t = 0;
    cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, x);
    out("risky." + name + ".memtype", u64(t));
    cuMemFreeAsync(x, nullptr);
    cuStreamSynchronize(nullptr);
  } else if (name == "maxSizeMax") {
    CUmemPoolProps p = base_props();
    p.maxSize = SIZE_MAX;
    CUmemoryPool pool = nullptr;
    outc("risky.maxSizeMax", cuMemPoolCreate(&pool, &p));
  } else if (name == "ctxDestroyWithLive") {
    CUcontext mine = nullptr;
    CUctxCreateParams* cp = nullptr;
    cuCtxCreate(&mine, cp, 0, 0);
    CUdeviceptr d = 0;
    outc("risky.ctxDestroyWithLive.alloc", cuMemAllocAsync(&d, 4096, nullptr));
    cuCtxSynchronize();
    CUmemoryPool def = nullptr;
    cuDeviceGetDefaultMemPool(&def, 0);
    out("risky.ctxDestroyWithLive.before", acct(def));
    outc("risky.ctxDestroyWithLive.destroy", cuCtxDestroy(mine));
    cuCtxSetCurrent(c);
    out("risky.ctxDestroyWithLive.after", acct(def));
    unsigned char b = 0;
    outc("risky.ctxDestroyWithLive.dtoh", cuMemcpyDtoH(&b, d, 1));
    outc("risky.ctxDestroyWithLive.free", cuMemFreeAsync(d, nullptr));
    cuCtxSynchronize();
    out("risky.ctxDestroyWithLive.afterFree", acct(def));
  } else if (name == "primaryResetWithLive") {
    void* d = nullptr;
    outr("risky.resetWithLive.alloc", cudaMallocAsync(&d, 4096, nullptr));
    cudaDeviceSynchronize();
    cudaMemPool_t def = nullptr;
    cudaDeviceGetDefaultMemPool(&def, 0);
    out("risky.resetWithLive.before", acct((CUmemoryPool)def));
    CUmemoryPool mine = mkpool(base_props());
    cuDeviceSetMemPool(0, mine);
    outr("risky.resetWithLive.reset", cudaDeviceReset());
    cudaMemPool_t def2 = nullptr;
    outr("risky.resetWithLive.getDefault", cudaDeviceGetDefaultMemPool(&def2, 0));
    out("risky.resetWithLive.sameDefault", def2 == def ? "yes" : "no");
    out("risky.resetWithLive.after", acct((CUmemoryPool)def2));
    cudaMemPool_t cur = nullptr;
    cudaDeviceGetMemPool(&cur, 0);
    out("risky.resetWithLive.currentIsMine", (CUmemoryPool)cur == mine ? "yes" : (cur == def2 ? "default" : "other"));
    cuuint64_t v = 0;
    outc("risky.resetWithLive.minePoolAttr", cuMemPoolGetAttribute(mine, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
    outr("risky.resetWithLive.freeOld", cudaFreeAsync(d, nullptr));
    outr("risky.resetWithLive.sync", cudaDeviceSynchronize());
  }
  return 0;
}

static void run_risky(const char* self, const char* name) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    execl(self, self, "--risky", name, (char*)nullptr);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFSIGNALED(st)) out(std::string("risky.") + name + ".crashed", "signal " + std::to_string(WTERMSIG(st)));
  else out(std::string("risky.") + name + ".exit", std::to_string(WEXITSTATUS(st)));
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--risky") return risky(argv[2]);
  if (argc == 2 && std::string(argv[1]) == "--noinit") {
    CUmemoryPool p = nullptr;
    CUmemPoolProps pp = base_props();
    outc("noinit.create", cuMemPoolCreate(&p, &pp));
    outc("noinit.getDefault", cuDeviceGetDefaultMemPool(&p, 0));
    CUdeviceptr d = 0;
    outc("noinit.allocAsync", cuMemAllocAsync(&d, 16, nullptr));
    outc("noinit.freeAsync", cuMemFreeAsync(0x1000, nullptr));
    outc("noinit.trim", cuMemPoolTrimTo(nullptr, 0));
    cuInit(0);
    outc("noCtx.allocAsync.null", cuMemAllocAsync(&d, 16, nullptr));
    outc("noCtx.create", cuMemPoolCreate(&p, &pp));
    outc("noCtx.getDefault", cuDeviceGetDefaultMemPool(&p, 0));
    if (p) {
      outc("noCtx.mfpa.null", cuMemAllocFromPoolAsync(&d, 16, p, nullptr));
      cuuint64_t v;
      outc("noCtx.getAttr", cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
    }
    return 0;
  }
  const char* only = getenv("PROBE_ONLY");
  auto want = [&](const char* n) { return !only || std::string(only).find(n) != std::string::npos; };
  if (want("noinit")) {
    pid_t pid = fork();
    if (pid == 0) {
      execl(argv[0], argv[0], "--noinit", (char*)nullptr);
      _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
  }
  cuInit(0);
  cuDeviceGetCount(&g_ndev);
  cuDeviceTotalMem(&g_total, 0);
  out("devices", std::to_string(g_ndev));
  int dv = 0;
  cuDriverGetVersion(&dv);
  out("driver", std::to_string(dv));
  CUcontext c = nullptr;
  cuDevicePrimaryCtxRetain(&c, 0);
  cuCtxSetCurrent(c);
  if (want("props")) probe_props();
  if (want("default")) probe_default_and_current();
  if (want("alloc")) probe_alloc_free();
  if (want("acct")) probe_accounting();
  if (want("reuse")) probe_reuse();
  if (want("access")) probe_access();
  if (want("ptr")) probe_ptr_attrs();
  if (want("misc")) probe_misc();
  if (want("followup")) probe_followup();
  if (want("current2")) probe_current2();
  const char* risky_names[] = {"destroyTwice", "useDestroyed", "useDestroyedWithLive", "garbagePool",
                               "garbagePoolAlloc", "garbagePoolDestroy", "garbagePoolSetDev",
                               "freeAfterStreamDestroyed", "ctxDestroyWithLive", "primaryResetWithLive",
                               "maxSizeMax", "garbageStreamAlloc", "setAttrNullValue", "cur3a", "cur3b", "cur3c"};
  if (want("risky"))
    for (auto* n : risky_names) run_risky(argv[0], n);
  if (const char* r = getenv("PROBE_RISKY")) run_risky(argv[0], r);
  out("done", "yes");
  return 0;
}
