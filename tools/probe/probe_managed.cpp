// Measures how NVIDIA's driver answers managed (unified) memory: device attributes,
// cuMemAllocManaged (flags, sizes, failures), what managed memory looks like (host access,
// pointer attributes, copies, frees, other APIs fed a managed pointer, cuMemGetInfo),
// cuStreamAttachMemAsync (flags, lengths, pointers, streams, busy streams), cuMemAdvise and
// cuMemPrefetchAsync (the CUDA 13 CUmemLocation forms), cuMemRangeGetAttribute(s), and the
// runtime's cuda* twins for a subset. Not part of the build: compile it on a GPU machine with
//   g++ -std=c++17 -O1 tools/probe/probe_managed.cpp -I/usr/local/cuda/include
//       -L/usr/local/cuda/lib64 -lcudart -lcuda -lpthread -o probe_managed
// (or against cuda-shim: -I include/cuda_shim -L build/lib) and diff the "key = value"
// lines of two runs. Values never hold addresses, only relations (base+N, same/different),
// codes and sizes. Crash-prone cases run in children: the binary re-executes itself as
// "/proc/self/exe --child NAME"; every child has an alarm() and is reported as
// child.NAME = exit(N) | CRASH(signal N) | TIMEOUT. The whole run is bounded by a ~150 s
// deadline. PROBE_ONLY=alloc,props,attach,advise,prefetch,range,edge,risky,huge picks sections
// (attr always runs; each section ends with its runtime subset, keys "SECTION.rt.*").
// Conventions: "out=untouched|null|set" (on failure) says what the call did to the output,
// preset to a sentinel; "st{...}" is the range state read back with cuMemRangeGetAttribute:
// rm=READ_MOSTLY pl=PREFERRED_LOCATION ab=ACCESSED_BY (2 slots) lp=LAST_PREFETCH_LOCATION
// plt/pli=PREFERRED_LOCATION_TYPE/_ID lpt/lpi=LAST_PREFETCH_LOCATION_TYPE/_ID.
// probe_managed.h200.txt beside it is its output on one H200 (driver 580.159.04, CUDA 13.0,
// numaConfig 0, pageableMemoryAccess 0): 959 lines, identical over three runs (run 3 added
// the edge section). There the driver segfaults on cuStreamAttachMemAsync flags 0 (created
// and NULL stream, and through cudaStreamAttachMemAsync) and on destroyed / garbage stream
// handles given to cuStreamAttachMemAsync and cuMemPrefetchAsync.
// Managed allocations stay small (at most 64 MiB); the one huge request (1<<50) runs last,
// in a child, and is never touched.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

// ---- output ---------------------------------------------------------------------------
static const char* nm(CUresult r) {
  const char* s = nullptr;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) {
    static char buf[64];
    snprintf(buf, sizeof buf, "CUresult(%d)", (int)r);
    return buf;
  }
  return s;
}
static const char* rn(cudaError_t e) {
  const char* s = cudaGetErrorName(e);
  return s ? s : "cudaError(?)";
}
static void out(const std::string& k, const std::string& v) {
  printf("%s = %s\n", k.c_str(), v.c_str());
  fflush(stdout);
}
static void outc(const std::string& k, CUresult r) { out(k, nm(r)); }
static void outr(const std::string& k, cudaError_t r) { out(k, rn(r)); }
static std::string u64(unsigned long long v) { return std::to_string(v); }
static std::string i64(long long v) { return std::to_string(v); }
static std::string hx(unsigned long long v) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", v);
  return b;
}
static std::string cx(CUresult r, const std::string& extra) {
  return r == CUDA_SUCCESS && !extra.empty() ? std::string(nm(r)) + " " + extra : std::string(nm(r));
}
static std::string rx(cudaError_t r, const std::string& extra) {
  return r == cudaSuccess && !extra.empty() ? std::string(rn(r)) + " " + extra : std::string(rn(r));
}
// code, plus "extra" on success and "fail" text on failure
static std::string cxf(CUresult r, const std::string& ok, const std::string& fail) {
  return std::string(nm(r)) + (r == CUDA_SUCCESS ? (ok.empty() ? "" : " " + ok) : (fail.empty() ? "" : " " + fail));
}

static int g_ndev = 0;
static const size_t KiB = 1024, MiB = 1 << 20;
static Clock::time_point g_deadline;
static const char* g_only = nullptr;
static bool want(const char* n) { return !g_only || strstr(g_only, n); }
static bool late() { return Clock::now() > g_deadline; }

// v relative to base: "base+N", "null" for 0, "far" beyond 1 GiB (never a raw address)
static std::string rel(unsigned long long v, unsigned long long base) {
  if (v == 0) return "null";
  long long d = (long long)(v - base);
  if (d > (1LL << 30) || d < -(1LL << 30)) return "far";
  return std::string("base") + (d >= 0 ? "+" : "") + std::to_string(d);
}
static const unsigned long long SENT = 0xdead0000beefULL;
static std::string outp(unsigned long long v) {
  return v == SENT ? "out=untouched" : v == 0 ? "out=null" : "out=set";
}
// largest power-of-two alignment of p, capped at 2 MiB
static std::string align_of(unsigned long long p) {
  if (!p) return "null";
  unsigned long long a = 1;
  while (a < 2 * MiB && (p % (a * 2)) == 0) a *= 2;
  return a >= 2 * MiB ? ">=2MiB" : u64(a);
}
static std::string ms_since(Clock::time_point t0) {
  long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  return ms < 50 ? "<50ms" : ms < 150 ? "50-150ms" : ms < 400 ? "150-400ms" : ">=400ms";
}

// ---- guarded host access -----------------------------------------------------------------
static sigjmp_buf g_jb;
static volatile sig_atomic_t g_guard = 0;
static void on_fault(int s) {
  if (g_guard) siglongjmp(g_jb, s);
  signal(s, SIG_DFL);
  raise(s);
}
static std::string host_try(const std::function<void()>& f) {
  struct sigaction sa, o1, o2;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fault;
  sigaction(SIGSEGV, &sa, &o1);
  sigaction(SIGBUS, &sa, &o2);
  std::string res = "ok";
  int s = sigsetjmp(g_jb, 1);
  if (s == 0) {
    g_guard = 1;
    f();
  } else {
    res = "SIGNAL(" + i64(s) + ")";
  }
  g_guard = 0;
  sigaction(SIGSEGV, &o1, nullptr);
  sigaction(SIGBUS, &o2, nullptr);
  return res;
}

// ---- children --------------------------------------------------------------------------
static const int kChildAlarm = 20;
static void run_child(const std::string& name) {
  if (late()) { out("child." + name, "SKIPPED_DEADLINE"); return; }
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(kChildAlarm);  // survives exec
    execl("/proc/self/exe", "probe_managed", "--child", name.c_str(), (char*)nullptr);
    _exit(127);
  }
  if (pid < 0) { out("child." + name, "FORK_FAILED"); return; }
  int st = 0;
  auto end = Clock::now() + std::chrono::seconds(kChildAlarm + 5);
  for (;;) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0 || Clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      out("child." + name, "TIMEOUT");
      return;
    }
    usleep(2000);
  }
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) out("child." + name, "TIMEOUT");
  else if (WIFSIGNALED(st)) out("child." + name, "CRASH(signal " + i64(WTERMSIG(st)) + ")");
  else out("child." + name, "exit(" + i64(WEXITSTATUS(st)) + ")");
}

// ---- CUDA helpers ----------------------------------------------------------------------
static CUcontext g_ctx = nullptr;
static int g_numa = -1;
static CUmemLocation mkloc(int t, int id) {
  CUmemLocation l;
  memset(&l, 0, sizeof l);
  l.type = (CUmemLocationType)t;
  l.id = id;
  return l;
}
struct NamedLoc {
  const char* name;
  CUmemLocation loc;
};
static std::vector<NamedLoc> locs() {
  return {{"dev0", mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 0)},
          {"dev99", mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 99)},
          {"devM1", mkloc(CU_MEM_LOCATION_TYPE_DEVICE, -1)},
          {"host", mkloc(CU_MEM_LOCATION_TYPE_HOST, 0)},
          {"host5", mkloc(CU_MEM_LOCATION_TYPE_HOST, 5)},
          {"hostNuma", mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, g_numa < 0 ? 0 : g_numa)},
          {"hostNuma99", mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 99)},
          {"hostNumaCur", mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0)},
          {"none", mkloc(CU_MEM_LOCATION_TYPE_NONE, 0)},
          {"type99", mkloc(99, 0)}};
}
static CUmemLocation LDEV0() { return mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 0); }
static CUmemLocation LHOST() { return mkloc(CU_MEM_LOCATION_TYPE_HOST, 0); }

static CUdeviceptr mng(size_t n, unsigned flags = CU_MEM_ATTACH_GLOBAL) {
  CUdeviceptr d = 0;
  if (cuMemAllocManaged(&d, n, flags) != CUDA_SUCCESS) return 0;
  return d;
}
static std::string ri(CUresult r, int v) { return r ? std::string(nm(r)) : i64(v); }
// the range state
static std::string st(CUdeviceptr p, size_t n) {
  auto g = [&](CUmem_range_attribute a) {
    int v = -77;
    CUresult r = cuMemRangeGetAttribute(&v, 4, a, p, n);
    return ri(r, v);
  };
  int ab[2] = {-77, -77};
  CUresult r = cuMemRangeGetAttribute(ab, 8, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, n);
  std::string abs = r ? std::string(nm(r)) : "[" + i64(ab[0]) + "," + i64(ab[1]) + "]";
  return "st{rm=" + g(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) + " pl=" + g(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION) +
         " ab=" + abs + " lp=" + g(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION) +
         " plt=" + g(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE) + " pli=" + g(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID) +
         " lpt=" + g(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE) +
         " lpi=" + g(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID) + "}";
}
static std::string bytes_hex(const unsigned char* b, size_t n) {
  std::string s;
  char t[4];
  for (size_t i = 0; i < n; i++) {
    snprintf(t, sizeof t, "%02x", b[i]);
    s += t;
  }
  return s;
}

// pointer attributes, addresses relative to base
static void ptr_attrs(const std::string& K, CUdeviceptr p, CUdeviceptr base, unsigned long long baseBufId) {
  auto a = [&](const char* n, CUpointer_attribute at) {
    unsigned long long v = 0;
    CUresult r = cuPointerGetAttribute(&v, at, p);
    out(K + n, r ? nm(r) : u64(v));
  };
  auto ra = [&](const char* n, CUpointer_attribute at) {
    unsigned long long v = 0;
    CUresult r = cuPointerGetAttribute(&v, at, p);
    out(K + n, r ? nm(r) : rel(v, base));
  };
  a("memoryType", CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
  a("deviceOrdinal", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
  a("isManaged", CU_POINTER_ATTRIBUTE_IS_MANAGED);
  a("legacyIpcCapable", CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE);
  a("allowedHandleTypes", CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES);
  a("mapped", CU_POINTER_ATTRIBUTE_MAPPED);
  a("mappingSize", CU_POINTER_ATTRIBUTE_MAPPING_SIZE);
  ra("mappingBase", CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR);
  ra("rangeStart", CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
  a("rangeSize", CU_POINTER_ATTRIBUTE_RANGE_SIZE);
  a("rdmaCapable", CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE);
  a("accessFlags", CU_POINTER_ATTRIBUTE_ACCESS_FLAGS);
  {
    unsigned v = 77;  // SYNC_MEMOPS is a 4-byte attribute
    CUresult r = cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
    out(K + "syncMemops", r ? nm(r) : u64(v));
  }
  ra("devicePointer", CU_POINTER_ATTRIBUTE_DEVICE_POINTER);
  {
    void* hp = (void*)1;
    CUresult r = cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p);
    out(K + "hostPointer", r ? nm(r) : rel((unsigned long long)(uintptr_t)hp, base));
  }
  {
    CUcontext c = (CUcontext)1;
    CUresult r = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p);
    out(K + "context", r ? nm(r) : c == nullptr ? "null" : c == g_ctx ? "primary" : "other");
  }
  {
    unsigned long long id = 0;
    CUresult r = cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p);
    out(K + "bufferId", r ? nm(r) : id == 0 ? "zero" : baseBufId == 0 ? "set" : id == baseBufId ? "sameAsBase" : "differentFromBase");
    unsigned long long blk = 0;
    r = cuPointerGetAttribute(&blk, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, p);
    out(K + "memoryBlockId", r ? nm(r) : blk == 0 ? "zero" : "set");
  }
  unsigned long long mp = 0;
  CUresult r = cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p);
  out(K + "mempool", r ? nm(r) : mp == 0 ? "null" : "set");
  CUdeviceptr b = 0;
  size_t s = 0;
  r = cuMemGetAddressRange(&b, &s, p);
  out(K + "addressRange", cx(r, rel(b, base) + " size=" + u64(s)));
  unsigned long long f = 99;
  CUmemLocation l = LDEV0();
  r = cuMemGetAccess(&f, &l, p);
  out(K + "memGetAccess", cx(r, u64(f)));
  // cuPointerGetAttributes with the common set
  CUpointer_attribute as[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                               CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  unsigned mt = 77, im = 77;
  int ord = 77;
  void* dv[3] = {&mt, &im, &ord};
  r = cuPointerGetAttributes(3, as, dv, p);
  out(K + "getAttributes", cx(r, "type=" + u64(mt) + " managed=" + u64(im) + " ordinal=" + i64(ord)));
}

static void host_sleep_200(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

// other memory kinds, shared by the sections
struct Others {
  CUdeviceptr dev = 0;
  void* pinned = nullptr;
  void* pageable = nullptr;
};
static Others g_o;
static void make_others() {
  cuMemAlloc(&g_o.dev, 1 * MiB);
  cuMemAllocHost(&g_o.pinned, 1 * MiB);
  g_o.pageable = aligned_alloc(4096, 1 * MiB);
  memset(g_o.pageable, 0, 1 * MiB);
}
// a managed allocation freed just now (no allocation may happen before it is used: the
// driver hands the same addresses out again); the chunk it sat in may still be alive
static CUdeviceptr fresh_freed() {
  CUdeviceptr f = mng(1 * MiB);
  cuMemFree(f);
  return f;
}
struct NamedPtr {
  const char* name;
  CUdeviceptr p;
};
static std::vector<NamedPtr> others() {
  return {{"dev", g_o.dev},
          {"pinned", (CUdeviceptr)(uintptr_t)g_o.pinned},
          {"pageable", (CUdeviceptr)(uintptr_t)g_o.pageable},
          {"null", 0},
          {"lowUnmapped", 0x1000},
          {"freedManaged", fresh_freed()}};
}

// =========================================================================================
static void probe_attr() {
  CUdevice d = 0;
  struct A {
    const char* n;
    CUdevice_attribute a;
  } as[] = {{"managedMemory", CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY},
            {"concurrentManagedAccess", CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS},
            {"pageableMemoryAccess", CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS},
            {"pageableUsesHostPageTables", CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES},
            {"directManagedMemAccessFromHost", CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST},
            {"hostNativeAtomicSupported", CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED},
            {"onlyPartialHostNativeAtomic", CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED},
            {"canUseHostPointerForRegisteredMem", CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM},
            {"unifiedAddressing", CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING},
            {"canMapHostMemory", CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY},
            {"hostNumaId", CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID},
            {"numaConfig", CU_DEVICE_ATTRIBUTE_NUMA_CONFIG},
            {"numaId", CU_DEVICE_ATTRIBUTE_NUMA_ID},
            {"hostRegisterSupported", CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED},
            {"memoryPoolsSupported", CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED},
            {"computePreemption", CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED}};
  for (auto& a : as) {
    int v = -77;
    CUresult r = cuDeviceGetAttribute(&v, a.a, d);
    out("attr." + std::string(a.n), ri(r, v));
    if (a.a == CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID && !r) g_numa = v;
  }
  int v = -77;
  cudaError_t e = cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, 0);
  out("attr.rt.concurrentManagedAccess", e ? rn(e) : i64(v));
  v = -77;
  e = cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, 0);
  out("attr.rt.managedMemory", e ? rn(e) : i64(v));
  v = -77;
  e = cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess, 0);
  out("attr.rt.pageableMemoryAccess", e ? rn(e) : i64(v));
  cudaDeviceProp p;
  memset(&p, 0, sizeof p);
  e = cudaGetDeviceProperties(&p, 0);
  out("attr.rt.prop", rx(e, "managedMemory=" + i64(p.managedMemory) + " concurrentManagedAccess=" +
                              i64(p.concurrentManagedAccess) + " pageableMemoryAccess=" + i64(p.pageableMemoryAccess)));
}

// =========================================================================================
static void probe_alloc() {
  const std::string K = "alloc.";
  for (unsigned f : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 0x10u, 0x80000000u}) {
    CUdeviceptr d = SENT;
    CUresult r = cuMemAllocManaged(&d, 4096, f);
    out(K + "flags." + hx(f), cxf(r, "align=" + align_of(d), outp(d)));
    if (!r) cuMemFree(d);
  }
  for (size_t n : {(size_t)0, (size_t)1, (size_t)4096, (size_t)4097, 64 * KiB + 1, 2 * MiB + 1, 3 * MiB}) {
    CUdeviceptr d = SENT;
    CUresult r = cuMemAllocManaged(&d, n, CU_MEM_ATTACH_GLOBAL);
    std::string extra;
    if (!r) {
      CUdeviceptr b = 0;
      size_t s = 0;
      CUresult q = cuMemGetAddressRange(&b, &s, d);
      extra = "align=" + align_of(d) + " range=" + cx(q, rel(b, d) + " size=" + u64(s));
      unsigned long long rs = 0;
      q = cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d);
      extra += " attrRangeSize=" + (q ? std::string(nm(q)) : u64(rs));
    }
    out(K + "size." + u64(n), cxf(r, extra, outp(d)));
    if (!r) cuMemFree(d);
  }
  // size 0 with other flags
  for (unsigned f : {2u, 4u, 8u}) {
    CUdeviceptr d = SENT;
    CUresult r = cuMemAllocManaged(&d, 0, f);
    out(K + "size0.flags." + hx(f), cxf(r, "", outp(d)));
  }
  // consecutive allocations: adjacency
  {
    CUdeviceptr a = mng(4096), b = mng(4096);
    out(K + "consecutive4k", a && b ? rel(b, a) : "allocFailed");
    cuMemFree(a);
    cuMemFree(b);
  }
  // no current context
  {
    CUcontext cur = nullptr;
    cuCtxGetCurrent(&cur);
    CUdeviceptr m = mng(64 * KiB);
    cuCtxSetCurrent(nullptr);
    CUdeviceptr d = SENT;
    CUresult r = cuMemAllocManaged(&d, 4096, 1);
    out(K + "noCtx", cxf(r, "", outp(d)));
    if (!r) { cuCtxSetCurrent(g_ctx); cuMemFree(d); cuCtxSetCurrent(nullptr); }
    outc(K + "noCtx.attachNullStream", cuStreamAttachMemAsync(nullptr, m, 0, CU_MEM_ATTACH_GLOBAL));
    outc(K + "noCtx.advise", cuMemAdvise(m, 64 * KiB, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
    outc(K + "noCtx.prefetch", cuMemPrefetchAsync(m, 64 * KiB, LDEV0(), 0, nullptr));
    int v = -77;
    CUresult q = cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 64 * KiB);
    out(K + "noCtx.rangeGet", ri(q, v));
    unsigned long long t = 0;
    q = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_IS_MANAGED, m);
    out(K + "noCtx.ptrIsManaged", q ? nm(q) : u64(t));
    outc(K + "noCtx.free", cuMemFree(m));
    cuCtxSetCurrent(cur ? cur : g_ctx);
  }
  // runtime
  for (unsigned f : {0u, 1u, 2u, 3u, 4u, 8u}) {
    void* p = (void*)SENT;
    cudaError_t e = cudaMallocManaged(&p, 4096, f);
    out(K + "rt.flags." + hx(f), e ? std::string(rn(e)) + " " + outp((uintptr_t)p) : std::string(rn(e)));
    if (!e) cudaFree(p);
    cudaGetLastError();
  }
  {
    void* p = (void*)SENT;
    cudaError_t e = cudaMallocManaged(&p, 0, cudaMemAttachGlobal);
    out(K + "rt.size0", std::string(rn(e)) + " " + outp((uintptr_t)p));
    if (!e && p) cudaFree(p);
    p = (void*)SENT;
    e = cudaMallocManaged(&p, 0, 8);
    out(K + "rt.size0.flags8", std::string(rn(e)) + " " + outp((uintptr_t)p));
    p = (void*)SENT;
    e = cudaMalloc(&p, 0);
    out(K + "rt.cudaMallocSize0", std::string(rn(e)) + " " + outp((uintptr_t)p));
    p = (void*)SENT;
    e = cudaMallocManaged(&p, 1, cudaMemAttachHost);
    out(K + "rt.size1.host", rx(e, "align=" + align_of((uintptr_t)p)));
    if (!e) cudaFree(p);
    cudaGetLastError();
  }
}

// =========================================================================================
static void probe_props() {
  const std::string K = "props.";
  const size_t N = 1 * MiB;
  CUdeviceptr m = mng(N);
  if (!m) { out(K + "alloc", "failed"); return; }
  out(K + "align", align_of(m));
  out(K + "mod4096", u64(m % 4096));
  unsigned char* h = (unsigned char*)(uintptr_t)m;
  std::string hw = host_try([&] { memset(h, 0x5a, N); });
  out(K + "hostWrite", hw);
  const bool hostOk = hw == "ok";
  if (!hostOk) { out(K + "skipped", "hostAccessFailed"); cuMemFree(m); return; }
  unsigned long long sum = 0;
  out(K + "hostRead", host_try([&] { for (size_t i = 0; i < N; i += 4096) sum += h[i]; }));
  out(K + "hostReadValue", sum == (N / 4096) * 0x5a ? "match" : "mismatch");
  std::vector<unsigned char> hb(N), e(N);
  CUresult r = cuMemcpyDtoH(hb.data(), m, N);
  out(K + "dtohAfterHostWrite", cx(r, std::count(hb.begin(), hb.end(), 0x5a) == (long)N ? "match" : "mismatch"));
  r = cuMemsetD8(m + 4096, 0x11, 4096);
  outc(K + "memsetD8", r);
  cuCtxSynchronize();
  sum = h[4096] == 0x11 && h[8191] == 0x11 && h[8192] == 0x5a ? 1 : 0;
  out(K + "hostSeesMemset", sum ? "match" : "mismatch");
  for (size_t i = 0; i < N; i++) e[i] = (unsigned char)(i * 7 + 3);
  r = cuMemcpyHtoD(m, e.data(), N);
  sum = memcmp(h, e.data(), N) == 0;
  out(K + "htod", cx(r, sum ? "hostMatch" : "hostMismatch"));
  CUdeviceptr dv = 0;
  cuMemAlloc(&dv, N);
  r = cuMemcpyDtoD(dv, m, N);
  std::fill(hb.begin(), hb.end(), 0);
  cuMemcpyDtoH(hb.data(), dv, N);
  out(K + "dtodManagedToDev", cx(r, memcmp(hb.data(), e.data(), N) ? "mismatch" : "match"));
  cuMemsetD8(dv, 0x33, N);
  r = cuMemcpyDtoD(m, dv, N);
  cuCtxSynchronize();
  out(K + "dtodDevToManaged", cx(r, h[0] == 0x33 && h[N - 1] == 0x33 ? "match" : "mismatch"));
  r = cuMemcpy(m, (CUdeviceptr)(uintptr_t)e.data(), N);
  out(K + "memcpyGenericHostToManaged", cx(r, memcmp(h, e.data(), N) ? "mismatch" : "match"));
  CUstream s = nullptr;
  cuStreamCreate(&s, 0);
  r = cuMemsetD32Async(m, 0x01020304, N / 4, s);
  outc(K + "memsetD32Async", r);
  outc(K + "memsetD32Async.sync", cuStreamSynchronize(s));
  out(K + "memsetD32Async.host", h[0] == 4 && h[3] == 1 ? "match" : "mismatch");
  r = cuMemcpyAsync(dv, m, N, s);
  outc(K + "memcpyAsyncManagedToDev", r);
  cuStreamSynchronize(s);
  CUdeviceptr m2 = mng(N);
  r = cuMemcpyDtoD(m2, m, N);
  cuCtxSynchronize();
  out(K + "dtodManagedToManaged", cx(r, memcmp((void*)(uintptr_t)m2, (void*)(uintptr_t)m, N) ? "mismatch" : "match"));
  cuMemFree(m2);

  unsigned long long bid = 0;
  cuPointerGetAttribute(&bid, CU_POINTER_ATTRIBUTE_BUFFER_ID, m);
  ptr_attrs(K + "base.", m, m, 0);
  ptr_attrs(K + "interior.", m + 4096 + 5, m, bid);
  ptr_attrs(K + "last.", m + N - 1, m, bid);
  ptr_attrs(K + "end.", m + N, m, bid);
  // ctx of the pointer when another context is current
  {
    CUcontext c2 = nullptr;
    CUresult q = cuCtxCreate(&c2, nullptr, 0, 0);
    if (!q) {
      CUcontext c = (CUcontext)1;
      q = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, m);
      out(K + "ctx2Current.context", q ? nm(q) : c == nullptr ? "null" : c == g_ctx ? "primary" : c == c2 ? "ctx2" : "other");
      unsigned long long f = 0;
      q = cuPointerGetAttribute(&f, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, m);
      out(K + "ctx2Current.accessFlags", q ? nm(q) : u64(f));
      CUdeviceptr d2 = mng(4096);
      c = (CUcontext)1;
      q = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, d2);
      out(K + "ctx2Alloc.context", q ? nm(q) : c == nullptr ? "null" : c == g_ctx ? "primary" : c == c2 ? "ctx2" : "other");
      cuCtxSetCurrent(g_ctx);
      c = (CUcontext)1;
      q = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, d2);
      out(K + "ctx2Alloc.fromPrimary.context", q ? nm(q) : c == nullptr ? "null" : c == g_ctx ? "primary" : c == c2 ? "ctx2" : "other");
      outc(K + "ctx2Alloc.freeFromPrimary", cuMemFree(d2));
      outc(K + "ctx2.destroy", cuCtxDestroy(c2));
      cuCtxSetCurrent(g_ctx);
    } else {
      outc(K + "ctx2.create", q);
    }
  }
  // runtime pointer attributes
  {
    cudaPointerAttributes pa;
    memset(&pa, 0x7f, sizeof pa);
    cudaError_t e2 = cudaPointerGetAttributes(&pa, (void*)(uintptr_t)(m + 100));
    out(K + "rt.ptrAttrs", rx(e2, "type=" + i64(pa.type) + " device=" + i64(pa.device) + " devicePointer=" +
                                      rel((uintptr_t)pa.devicePointer, m) + " hostPointer=" + rel((uintptr_t)pa.hostPointer, m)));
  }
  // other APIs fed a managed pointer
  {
    CUdeviceptr d = SENT;
    r = cuMemHostGetDevicePointer(&d, (void*)(uintptr_t)m, 0);
    out(K + "hostGetDevicePointer", cxf(r, rel(d, m), outp(d)));
    unsigned fl = 77;
    r = cuMemHostGetFlags(&fl, (void*)(uintptr_t)m);
    out(K + "hostGetFlags", cxf(r, u64(fl), fl == 77 ? "out=untouched" : "out=" + u64(fl)));
    r = cuMemHostRegister((void*)(uintptr_t)m, 64 * KiB, 0);
    outc(K + "hostRegister", r);
    if (!r) outc(K + "hostRegister.unregister", cuMemHostUnregister((void*)(uintptr_t)m));
    outc(K + "hostUnregister", cuMemHostUnregister((void*)(uintptr_t)m));
    CUipcMemHandle ih;
    memset(&ih, 0, sizeof ih);
    outc(K + "ipcGetMemHandle", cuIpcGetMemHandle(&ih, m));
    cudaIpcMemHandle_t rh;
    outr(K + "rt.ipcGetMemHandle", cudaIpcGetMemHandle(&rh, (void*)(uintptr_t)m));
    cudaGetLastError();
    CUmemGenericAllocationHandle gh = 0;
    outc(K + "retainAllocationHandle", cuMemRetainAllocationHandle(&gh, (void*)(uintptr_t)m));
    size_t gran = 0;
    (void)gran;
  }
  // frees
  {
    outc(K + "free.interior", cuMemFree(m + 4096));
    unsigned long long t = 0;
    r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_IS_MANAGED, m);
    out(K + "free.interior.stillManaged", r ? nm(r) : u64(t));
    CUdeviceptr a = mng(64 * KiB);
    outc(K + "freeHost", cuMemFreeHost((void*)(uintptr_t)a));
    r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_IS_MANAGED, a);
    out(K + "freeHost.after", r ? nm(r) : "isManaged=" + u64(t));
    if (!r) cuMemFree(a);
    a = mng(64 * KiB);
    r = cuMemFreeAsync(a, s);
    outc(K + "freeAsync", r);
    outc(K + "freeAsync.sync", cuStreamSynchronize(s));
    CUresult q = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_IS_MANAGED, a);
    out(K + "freeAsync.after", q ? nm(q) : "isManaged=" + u64(t));
    if (!q) outc(K + "freeAsync.thenFree", cuMemFree(a));
    a = mng(64 * KiB);
    outc(K + "free.once", cuMemFree(a));
    outc(K + "free.twice", cuMemFree(a));
    q = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_IS_MANAGED, a);
    out(K + "free.after.isManaged", q ? nm(q) : u64(t));
    CUdeviceptr b = 0;
    size_t bs = 0;
    outc(K + "free.after.addressRange", cuMemGetAddressRange(&b, &bs, a));
    void* rp = nullptr;
    cudaMallocManaged(&rp, 64 * KiB, cudaMemAttachGlobal);
    outr(K + "rt.cudaFreeHost", cudaFreeHost(rp));
    cudaGetLastError();
    outr(K + "rt.cudaFree.interior", cudaFree((char*)rp + 4096));
    cudaGetLastError();
    outr(K + "rt.cudaFree", cudaFree(rp));
    outr(K + "rt.cudaFree.twice", cudaFree(rp));
    cudaGetLastError();
  }
  // cuMemGetInfo around a 64 MiB managed allocation
  {
    size_t f0 = 0, t0 = 0, f1 = 0, f2 = 0, f3 = 0, f4 = 0, tt = 0;
    cuMemGetInfo(&f0, &t0);
    CUdeviceptr big = mng(64 * MiB);
    cuMemGetInfo(&f1, &tt);
    auto dm = [&](size_t a, size_t b) { return i64(((long long)a - (long long)b) / (long long)MiB) + "MiB"; };
    out(K + "memInfo.afterAlloc64M.drop", dm(f0, f1));
    out(K + "memInfo.hostTouch", host_try([&] { memset((void*)(uintptr_t)big, 1, 64 * MiB); }));
    cuMemGetInfo(&f2, &tt);
    out(K + "memInfo.afterHostTouch.drop", dm(f0, f2));
    r = cuMemPrefetchAsync(big, 64 * MiB, LDEV0(), 0, s);
    cuStreamSynchronize(s);
    cuMemGetInfo(&f3, &tt);
    out(K + "memInfo.afterPrefetchDev.drop", cx(r, dm(f0, f3)));
    cuMemFree(big);
    cuMemGetInfo(&f4, &tt);
    out(K + "memInfo.afterFree.drop", dm(f0, f4));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cuMemGetInfo(&f4, &tt);
    out(K + "memInfo.afterFree300ms.drop", dm(f0, f4));
    // again, with sleeps between the steps, and a 256 MiB device allocation for scale
    size_t g0 = 0, g = 0;
    cuMemGetInfo(&g0, &tt);
    CUdeviceptr dd = 0;
    cuMemAlloc(&dd, 64 * MiB);
    cuMemGetInfo(&g, &tt);
    out(K + "memInfo2.afterCuMemAlloc64M.drop", dm(g0, g));
    cuMemFree(dd);
    cuMemGetInfo(&g0, &tt);
    big = mng(64 * MiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cuMemGetInfo(&g, &tt);
    out(K + "memInfo2.afterManaged64M.drop", dm(g0, g));
    r = cuMemPrefetchAsync(big, 64 * MiB, LDEV0(), 0, s);
    cuStreamSynchronize(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cuMemGetInfo(&g, &tt);
    out(K + "memInfo2.afterPrefetchDev64M.drop", cx(r, dm(g0, g)));
    r = cuMemsetD8(big, 7, 64 * MiB);
    cuCtxSynchronize();
    cuMemGetInfo(&g, &tt);
    out(K + "memInfo2.afterDeviceMemset.drop", cx(r, dm(g0, g)));
    cuMemFree(big);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cuMemGetInfo(&g, &tt);
    out(K + "memInfo2.afterFree.drop", dm(g0, g));
  }
  // layout: two consecutive allocations of one size
  for (size_t n : {(size_t)1, (size_t)4096, (size_t)4097, 64 * KiB + 1, 1 * MiB, 2 * MiB, 2 * MiB + 1, 3 * MiB}) {
    CUdeviceptr a = mng(n), b = mng(n);
    unsigned long long ams = 0, bms = 0, bmb = 0;
    cuPointerGetAttribute(&ams, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, a);
    cuPointerGetAttribute(&bms, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, b);
    cuPointerGetAttribute(&bmb, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, b);
    out(K + "layout." + u64(n), "second=" + (a && b ? rel(b, a) : "allocFailed") + " firstMappingSize=" + u64(ams) +
                                     " secondMappingBase=" + rel(bmb, a) + " secondMappingSize=" + u64(bms) +
                                     " secondAlign=" + align_of(b));
    cuMemFree(a);
    cuMemFree(b);
  }
  cuStreamDestroy(s);
  cuMemFree(dv);
  cuMemFree(m);
}

// =========================================================================================
static void probe_attach() {
  const std::string K = "attach.";
  const size_t N = 1 * MiB;
  CUdeviceptr A = mng(N);
  CUstream sc = nullptr, snb = nullptr;
  cuStreamCreate(&sc, CU_STREAM_DEFAULT);
  cuStreamCreate(&snb, CU_STREAM_NON_BLOCKING);
  struct S {
    const char* n;
    CUstream s;
  } ss[] = {{"null", nullptr}, {"legacy", CU_STREAM_LEGACY}, {"perThread", CU_STREAM_PER_THREAD}, {"created", sc}, {"nonBlocking", snb}};
  struct F {
    const char* n;
    unsigned f;
  } fs[] = {{"global", CU_MEM_ATTACH_GLOBAL}, {"host", CU_MEM_ATTACH_HOST}, {"single", CU_MEM_ATTACH_SINGLE}};
  for (auto& s : ss)
    for (auto& f : fs) {
      CUresult r = cuStreamAttachMemAsync(s.s, A, 0, f.f);
      out(K + "stream." + s.n + "." + f.n, nm(r));
    }
  for (auto& s : ss) outc(K + "stream." + std::string(s.n) + ".sync", cuStreamSynchronize(s.s));
  for (unsigned f : {3u, 5u, 6u, 7u, 8u, 0x10u, 0x80000000u}) {
    outc(K + "flags." + hx(f), cuStreamAttachMemAsync(sc, A, 0, f));
  }
  outc(K + "flags.sync", cuStreamSynchronize(sc));
  // lengths
  struct Lc {
    const char* n;
    CUdeviceptr p;
    size_t len;
  } ls[] = {{"base.len0", A, 0},
            {"base.lenWhole", A, N},
            {"base.lenHalf", A, N / 2},
            {"base.lenWholePlus1", A, N + 1},
            {"base.len1", A, 1},
            {"base.len4096", A, 4096},
            {"base.lenHuge", A, (size_t)1 << 40},
            {"interior.len0", A + 4096, 0},
            {"interior.lenRemaining", A + 4096, N - 4096},
            {"interior.len4096", A + 4096, 4096},
            {"interiorOdd.len0", A + 1, 0},
            {"interiorOdd.len100", A + 1, 100},
            {"end.len0", A + N, 0},
            {"end.len4096", A + N, 4096}};
  for (auto& l : ls)
    for (unsigned f : {(unsigned)CU_MEM_ATTACH_SINGLE, (unsigned)CU_MEM_ATTACH_GLOBAL})
      outc(K + "len." + l.n + (f == CU_MEM_ATTACH_SINGLE ? ".single" : ".global"), cuStreamAttachMemAsync(sc, l.p, l.len, f));
  outc(K + "len.sync", cuStreamSynchronize(sc));
  // pointers
  {
    int stackv[2048];
    memset(stackv, 0, sizeof stackv);
    std::vector<NamedPtr> ps = others();
    ps.push_back({"stack", (CUdeviceptr)(uintptr_t)stackv});
    ps.push_back({"farUnmapped", 0x500000000000ULL});
    for (auto& p : ps) {
      for (size_t len : {(size_t)0, (size_t)4096, (size_t)1 * MiB})
        for (unsigned f : {(unsigned)CU_MEM_ATTACH_SINGLE, (unsigned)CU_MEM_ATTACH_GLOBAL, (unsigned)CU_MEM_ATTACH_HOST}) {
          if (!strcmp(p.name, "stack") && len > sizeof stackv) continue;
          CUresult r = cuStreamAttachMemAsync(sc, p.p, len, f);
          out(K + "ptr." + p.name + ".len" + u64(len) + "." + (f == 4 ? "single" : f == 1 ? "global" : "host"), nm(r));
        }
    }
    outc(K + "ptr.pageable.interior.len4096.single",
         cuStreamAttachMemAsync(sc, (CUdeviceptr)(uintptr_t)g_o.pageable + 4096, 4096, CU_MEM_ATTACH_SINGLE));
    outc(K + "ptr.sync", cuStreamSynchronize(sc));
    outc(K + "ptr.query", cuStreamQuery(sc));
    outc(K + "ptr.ctxSync", cuCtxSynchronize());
  }
  // memory allocated with ATTACH_HOST
  {
    CUdeviceptr H = mng(64 * KiB, CU_MEM_ATTACH_HOST);
    for (auto& f : fs) outc(K + "allocHost." + f.n, cuStreamAttachMemAsync(sc, H, 0, f.f));
    cuStreamSynchronize(sc);
    cuMemFree(H);
  }
  // a stream of another context
  {
    CUcontext c2 = nullptr;
    CUresult r = cuCtxCreate(&c2, nullptr, 0, 0);
    if (!r) {
      CUstream s2 = nullptr;
      cuStreamCreate(&s2, 0);
      CUdeviceptr A2 = mng(64 * KiB);
      outc(K + "otherCtx.ctx2Current.ownMem", cuStreamAttachMemAsync(s2, A2, 0, CU_MEM_ATTACH_SINGLE));
      outc(K + "otherCtx.ctx2Current.primaryMem", cuStreamAttachMemAsync(s2, A, 0, CU_MEM_ATTACH_SINGLE));
      outc(K + "otherCtx.ctx2Current.primaryStream", cuStreamAttachMemAsync(sc, A, 0, CU_MEM_ATTACH_SINGLE));
      cuCtxSetCurrent(g_ctx);
      outc(K + "otherCtx.primaryCurrent.ctx2Stream", cuStreamAttachMemAsync(s2, A, 0, CU_MEM_ATTACH_SINGLE));
      outc(K + "otherCtx.primaryCurrent.ctx2Stream.ctx2Mem", cuStreamAttachMemAsync(s2, A2, 0, CU_MEM_ATTACH_GLOBAL));
      outc(K + "otherCtx.sync", cuStreamSynchronize(s2));
      cuMemFree(A2);
      cuStreamDestroy(s2);
      cuCtxDestroy(c2);
      cuCtxSetCurrent(g_ctx);
    } else {
      outc(K + "otherCtx.create", r);
    }
  }
  // a later attach replacing an earlier one
  {
    outc(K + "replace.1single", cuStreamAttachMemAsync(sc, A, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "replace.2singleOtherStream", cuStreamAttachMemAsync(snb, A, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "replace.3globalNull", cuStreamAttachMemAsync(nullptr, A, 0, CU_MEM_ATTACH_GLOBAL));
    outc(K + "replace.4host", cuStreamAttachMemAsync(sc, A, 0, CU_MEM_ATTACH_HOST));
    outc(K + "replace.5singleSame", cuStreamAttachMemAsync(sc, A, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "replace.6singleSameAgain", cuStreamAttachMemAsync(sc, A, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "replace.query", cuStreamQuery(sc));
    outc(K + "replace.sync", cuStreamSynchronize(sc));
    outc(K + "replace.queryAfter", cuStreamQuery(sc));
    // host access while attached SINGLE to an idle stream
    out(K + "replace.hostAccessSingleIdle", host_try([&] { ((volatile unsigned char*)(uintptr_t)A)[0] = 1; }));
  }
  // SINGLE to one stream, then work on others
  {
    CUdeviceptr A6 = mng(64 * KiB);
    outc(K + "singleThen.attach", cuStreamAttachMemAsync(sc, A6, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "singleThen.prefetchOtherStream", cuMemPrefetchAsync(A6, 64 * KiB, LDEV0(), 0, snb));
    outc(K + "singleThen.memsetAsyncOtherStream", cuMemsetD8Async(A6, 1, 64 * KiB, snb));
    outc(K + "singleThen.memsetSync", cuMemsetD8(A6, 2, 64 * KiB));
    outc(K + "singleThen.adviseRM", cuMemAdvise(A6, 64 * KiB, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
    outc(K + "singleThen.syncAll", cuCtxSynchronize());
    outc(K + "singleThen.hostAttach", cuStreamAttachMemAsync(sc, A6, 0, CU_MEM_ATTACH_HOST));
    outc(K + "singleThen.hostThenPrefetchDev", cuMemPrefetchAsync(A6, 64 * KiB, LDEV0(), 0, sc));
    outc(K + "singleThen.sync", cuStreamSynchronize(sc));
    out(K + "singleThen.state", st(A6, 64 * KiB));
    cuMemFree(A6);
    CUdeviceptr H = mng(64 * KiB, CU_MEM_ATTACH_HOST);
    outc(K + "allocHostThen.prefetchDev", cuMemPrefetchAsync(H, 64 * KiB, LDEV0(), 0, sc));
    outc(K + "allocHostThen.adviseAbDev", cuMemAdvise(H, 64 * KiB, CU_MEM_ADVISE_SET_ACCESSED_BY, LDEV0()));
    outc(K + "allocHostThen.memsetD8", cuMemsetD8(H, 3, 64 * KiB));
    outc(K + "allocHostThen.sync", cuStreamSynchronize(sc));
    out(K + "allocHostThen.state", st(H, 64 * KiB));
    cuMemFree(H);
  }
  // busy stream
  {
    CUstream sb = nullptr;
    cuStreamCreate(&sb, 0);
    CUresult r = cuLaunchHostFunc(sb, host_sleep_200, nullptr);
    outc(K + "busy.hostFunc", r);
    auto t0 = Clock::now();
    r = cuStreamAttachMemAsync(sb, A, 0, CU_MEM_ATTACH_SINGLE);
    out(K + "busy.attach", std::string(nm(r)) + " took=" + ms_since(t0));
    outc(K + "busy.queryAfterAttach", cuStreamQuery(sb));
    t0 = Clock::now();
    r = cuStreamAttachMemAsync(nullptr, A, 0, CU_MEM_ATTACH_GLOBAL);
    out(K + "busy.attachNullStreamWhileBusy", std::string(nm(r)) + " took=" + ms_since(t0));
    outc(K + "busy.queryAfterNullAttach", cuStreamQuery(sb));
    t0 = Clock::now();
    r = cuStreamSynchronize(sb);
    out(K + "busy.sync", std::string(nm(r)) + " took=" + ms_since(t0));
    outc(K + "busy.queryAfterSync", cuStreamQuery(sb));
    // busy on the created stream, attach to a non-blocking one
    cuLaunchHostFunc(sb, host_sleep_200, nullptr);
    t0 = Clock::now();
    r = cuStreamAttachMemAsync(snb, A, 0, CU_MEM_ATTACH_SINGLE);
    out(K + "busy.attachOtherNonBlocking", std::string(nm(r)) + " took=" + ms_since(t0));
    outc(K + "busy.otherNonBlocking.query", cuStreamQuery(snb));
    cuStreamSynchronize(sb);
    cuStreamSynchronize(snb);
    cuStreamDestroy(sb);
  }
  // attach then destroy then free (and free then destroy)
  {
    CUstream s3 = nullptr;
    cuStreamCreate(&s3, 0);
    CUdeviceptr A3 = mng(64 * KiB);
    outc(K + "destroyThenFree.attach", cuStreamAttachMemAsync(s3, A3, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "destroyThenFree.destroy", cuStreamDestroy(s3));
    outc(K + "destroyThenFree.free", cuMemFree(A3));
    CUstream s4 = nullptr;
    cuStreamCreate(&s4, 0);
    CUdeviceptr A4 = mng(64 * KiB);
    outc(K + "freeThenDestroy.attach", cuStreamAttachMemAsync(s4, A4, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "freeThenDestroy.free", cuMemFree(A4));
    outc(K + "freeThenDestroy.query", cuStreamQuery(s4));
    outc(K + "freeThenDestroy.destroy", cuStreamDestroy(s4));
    // attach, then a memset on the stream and the host reading it
    CUstream s5 = nullptr;
    cuStreamCreate(&s5, 0);
    CUdeviceptr A5 = mng(64 * KiB);
    outc(K + "useAfterAttach.attach", cuStreamAttachMemAsync(s5, A5, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + "useAfterAttach.memsetAsync", cuMemsetD8Async(A5, 0x42, 64 * KiB, s5));
    outc(K + "useAfterAttach.sync", cuStreamSynchronize(s5));
    unsigned char v = 0;
    std::string hr = host_try([&] { v = ((volatile unsigned char*)(uintptr_t)A5)[100]; });
    out(K + "useAfterAttach.hostRead", hr + (v == 0x42 ? " match" : " mismatch"));
    cuMemFree(A5);
    cuStreamDestroy(s5);
  }
  // runtime
  {
    void* p = nullptr;
    cudaMallocManaged(&p, 1 * MiB, cudaMemAttachGlobal);
    cudaStream_t rs = nullptr;
    cudaStreamCreate(&rs);
    outr(K + "rt.default", cudaStreamAttachMemAsync(rs, p, 0, cudaMemAttachSingle));
    outr(K + "rt.global", cudaStreamAttachMemAsync(rs, p, 0, cudaMemAttachGlobal));
    outr(K + "rt.host", cudaStreamAttachMemAsync(rs, p, 0, cudaMemAttachHost));
    outr(K + "rt.flags3", cudaStreamAttachMemAsync(rs, p, 0, 3));
    cudaGetLastError();
    outr(K + "rt.flags8", cudaStreamAttachMemAsync(rs, p, 0, 8));
    cudaGetLastError();
    outr(K + "rt.lenHalf", cudaStreamAttachMemAsync(rs, p, 512 * KiB, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.lenWhole", cudaStreamAttachMemAsync(rs, p, 1 * MiB, cudaMemAttachSingle));
    outr(K + "rt.interiorLen0", cudaStreamAttachMemAsync(rs, (char*)p + 4096, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.nullStreamSingle", cudaStreamAttachMemAsync(nullptr, p, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.nullStreamGlobal", cudaStreamAttachMemAsync(nullptr, p, 0, cudaMemAttachGlobal));
    outr(K + "rt.perThreadSingle", cudaStreamAttachMemAsync(cudaStreamPerThread, p, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.legacySingle", cudaStreamAttachMemAsync(cudaStreamLegacy, p, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.devMem", cudaStreamAttachMemAsync(rs, (void*)(uintptr_t)g_o.dev, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.pinned", cudaStreamAttachMemAsync(rs, g_o.pinned, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.pageableLen0", cudaStreamAttachMemAsync(rs, g_o.pageable, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.pageableLen4096", cudaStreamAttachMemAsync(rs, g_o.pageable, 4096, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.null", cudaStreamAttachMemAsync(rs, nullptr, 0, cudaMemAttachSingle));
    cudaGetLastError();
    outr(K + "rt.sync", cudaStreamSynchronize(rs));
    outr(K + "rt.lastError", cudaGetLastError());
    cudaStreamDestroy(rs);
    cudaFree(p);
  }
  cuStreamDestroy(sc);
  cuStreamDestroy(snb);
  cuMemFree(A);
}

// =========================================================================================
static void probe_advise() {
  const std::string K = "advise.";
  const size_t N = 64 * KiB;
  CUdeviceptr f = mng(N);
  out(K + "fresh", st(f, N));
  cuMemFree(f);
  for (int adv : {0, 1, 2, 3, 4, 5, 6, 7, 100}) {
    for (auto& l : locs()) {
      CUdeviceptr m = mng(N);
      CUresult r = cuMemAdvise(m, N, (CUmem_advise)adv, l.loc);
      out(K + "m." + i64(adv) + "." + l.name, cx(r, st(m, N)));
      cuMemFree(m);
    }
  }
  // sequences on one allocation
  {
    CUdeviceptr m = mng(N);
    struct Step {
      const char* n;
      int adv;
      CUmemLocation l;
    } steps[] = {{"setRM", 1, LDEV0()},
                 {"setRMagain", 1, LDEV0()},
                 {"unsetRM", 2, LDEV0()},
                 {"prefDev0", 3, LDEV0()},
                 {"prefHost", 3, LHOST()},
                 {"prefHostNuma", 3, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, g_numa < 0 ? 0 : g_numa)},
                 {"prefHostNumaCur", 3, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0)},
                 {"unsetPrefDev99", 4, mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 99)},
                 {"unsetPref", 4, LDEV0()},
                 {"abDev0", 5, LDEV0()},
                 {"abHost", 5, LHOST()},
                 {"unsetAbDev0", 6, LDEV0()},
                 {"unsetAbHost", 6, LHOST()},
                 {"unsetAbNotSet", 6, LDEV0()},
                 {"numa.rmDev0", 1, LDEV0()},
                 {"numa.rmHostNuma", 1, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, g_numa < 0 ? 0 : g_numa)},
                 {"numa.unsetRmHostNuma", 2, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, g_numa < 0 ? 0 : g_numa)},
                 {"numa.unsetRmHostNumaCur", 2, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0)},
                 {"numa.unsetRmDev0", 2, LDEV0()},
                 {"numa.prefDev0", 3, LDEV0()},
                 {"numa.prefHostNuma", 3, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, g_numa < 0 ? 0 : g_numa)},
                 {"numa.unsetPrefHostNuma", 4, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, g_numa < 0 ? 0 : g_numa)},
                 {"numa.unsetPrefHostNuma99", 4, mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 99)},
                 {"numa.unsetPrefNone", 4, mkloc(CU_MEM_LOCATION_TYPE_NONE, 0)},
                 {"numa.unsetPrefDev0", 4, LDEV0()},
                 {"rmAndPrefAndAb.rm", 1, LDEV0()},
                 {"rmAndPrefAndAb.pref", 3, LDEV0()},
                 {"rmAndPrefAndAb.ab", 5, LDEV0()}};
    for (auto& s : steps) {
      CUresult r = cuMemAdvise(m, N, (CUmem_advise)s.adv, s.l);
      out(K + "seq." + s.n, cx(r, st(m, N)));
    }
    cuMemFree(m);
  }
  // ranges
  {
    const size_t M = 1 * MiB;
    struct Rc {
      const char* n;
      size_t off, len;
    } rs[] = {{"whole", 0, M},          {"firstHalf", 0, M / 2},      {"interior4k", 4096, 4096},
              {"len0", 0, 0},           {"wholePlus1", 0, M + 1},     {"wholePlus4096", 0, M + 4096},
              {"wholePlus1MiB", 0, 2 * M}, {"odd1len100", 1, 100},   {"len1", 0, 1},
              {"end4096", M, 4096},     {"lastByte", M - 1, 1},       {"lastByteLen2", M - 1, 2}};
    for (auto& rc : rs) {
      CUdeviceptr m = mng(M);
      CUresult r = cuMemAdvise(m + rc.off, rc.len, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0());
      out(K + "range." + rc.n + ".rm", cx(r, st(m, M)));
      r = cuMemAdvise(m + rc.off, rc.len, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, LDEV0());
      out(K + "range." + rc.n + ".pref", nm(r));
      cuMemFree(m);
    }
    // partial advice, then reading whole / halves
    CUdeviceptr m = mng(M);
    outc(K + "partial.rmFirstHalf", cuMemAdvise(m, M / 2, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
    outc(K + "partial.prefDevFirstHalf", cuMemAdvise(m, M / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, LDEV0()));
    outc(K + "partial.prefHostSecondHalf", cuMemAdvise(m + M / 2, M / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, LHOST()));
    outc(K + "partial.abFirstHalf", cuMemAdvise(m, M / 2, CU_MEM_ADVISE_SET_ACCESSED_BY, LDEV0()));
    out(K + "partial.whole", st(m, M));
    out(K + "partial.firstHalf", st(m, M / 2));
    out(K + "partial.secondHalf", st(m + M / 2, M / 2));
    out(K + "partial.straddle", st(m + M / 2 - 4096, 8192));
    out(K + "partial.oneByteInFirst", st(m + 10, 1));
    cuMemFree(m);
    // prefHost on one half, nothing on the other
    m = mng(M);
    outc(K + "partial2.prefHostFirstHalf", cuMemAdvise(m, M / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, LHOST()));
    out(K + "partial2.whole", st(m, M));
    cuMemFree(m);
    // two adjacent allocations in one call
    CUdeviceptr a = mng(64 * KiB), b = mng(64 * KiB);
    if (b == a + 64 * KiB) {
      outc(K + "spanTwoAllocs", cuMemAdvise(a, 128 * KiB, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
      out(K + "spanTwoAllocs.second", st(b, 64 * KiB));
      out(K + "spanTwoAllocs.rangeGetBoth", st(a, 128 * KiB));
    } else {
      out(K + "spanTwoAllocs", "notAdjacent " + rel(b, a));
    }
    cuMemFree(a);
    cuMemFree(b);
  }
  // non-managed memory
  for (auto& p : others()) {
    for (int adv : {1, 2, 3, 4, 5, 6}) {
      CUresult r = cuMemAdvise(p.p, 64 * KiB, (CUmem_advise)adv, LDEV0());
      out(K + "other." + p.name + "." + i64(adv), nm(r));
    }
    outc(K + "other." + std::string(p.name) + ".len0", cuMemAdvise(p.p, 0, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
    outc(K + "other." + std::string(p.name) + ".prefHost", cuMemAdvise(p.p, 64 * KiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, LHOST()));
  }
  out(K + "other.pageable.afterAll", st((CUdeviceptr)(uintptr_t)g_o.pageable, 64 * KiB));
  // runtime
  {
    void* p = nullptr;
    cudaMallocManaged(&p, 64 * KiB, cudaMemAttachGlobal);
    auto rl = [](int t, int id) {
      cudaMemLocation l;
      memset(&l, 0, sizeof l);
      l.type = (cudaMemLocationType)t;
      l.id = id;
      return l;
    };
    outr(K + "rt.rmDev0", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetReadMostly, rl(1, 0)));
    outr(K + "rt.prefDev0", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetPreferredLocation, rl(1, 0)));
    outr(K + "rt.prefDev99", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetPreferredLocation, rl(1, 99)));
    cudaGetLastError();
    outr(K + "rt.prefDevM1", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetPreferredLocation, rl(1, -1)));
    cudaGetLastError();
    outr(K + "rt.prefHost", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetPreferredLocation, rl(2, 0)));
    outr(K + "rt.prefNone", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetPreferredLocation, rl(0, 0)));
    cudaGetLastError();
    outr(K + "rt.prefType99", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetPreferredLocation, rl(99, 0)));
    cudaGetLastError();
    outr(K + "rt.abHost", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetAccessedBy, rl(2, 0)));
    cudaGetLastError();
    outr(K + "rt.advice0", cudaMemAdvise(p, 64 * KiB, (cudaMemoryAdvise)0, rl(1, 0)));
    cudaGetLastError();
    outr(K + "rt.advice100", cudaMemAdvise(p, 64 * KiB, (cudaMemoryAdvise)100, rl(1, 0)));
    cudaGetLastError();
    outr(K + "rt.len0", cudaMemAdvise(p, 0, cudaMemAdviseSetReadMostly, rl(1, 0)));
    cudaGetLastError();
    outr(K + "rt.beyondEnd", cudaMemAdvise(p, 128 * KiB, cudaMemAdviseSetReadMostly, rl(1, 0)));
    cudaGetLastError();
    outr(K + "rt.devMem", cudaMemAdvise((void*)(uintptr_t)g_o.dev, 64 * KiB, cudaMemAdviseSetReadMostly, rl(1, 0)));
    cudaGetLastError();
    outr(K + "rt.pinned", cudaMemAdvise(g_o.pinned, 64 * KiB, cudaMemAdviseSetReadMostly, rl(1, 0)));
    cudaGetLastError();
    outr(K + "rt.pageable", cudaMemAdvise(g_o.pageable, 64 * KiB, cudaMemAdviseSetReadMostly, rl(1, 0)));
    cudaGetLastError();
    outr(K + "rt.null", cudaMemAdvise(nullptr, 64 * KiB, cudaMemAdviseSetReadMostly, rl(1, 0)));
    cudaGetLastError();
    cudaFree(p);
  }
}

// =========================================================================================
static void probe_prefetch() {
  const std::string K = "prefetch.";
  const size_t N = 1 * MiB;
  CUstream sc = nullptr, snb = nullptr;
  cuStreamCreate(&sc, 0);
  cuStreamCreate(&snb, CU_STREAM_NON_BLOCKING);
  for (auto& l : locs()) {
    CUdeviceptr m = mng(N);
    CUresult r = cuMemPrefetchAsync(m, N, l.loc, 0, sc);
    CUresult q = cuStreamSynchronize(sc);
    out(K + "loc." + l.name, cx(r, "sync=" + std::string(nm(q)) + " " + st(m, N)));
    cuMemFree(m);
  }
  for (unsigned f : {1u, 2u, 0x80000000u}) {
    CUdeviceptr m = mng(N);
    CUresult r = cuMemPrefetchAsync(m, N, LDEV0(), f, sc);
    cuStreamSynchronize(sc);
    out(K + "flags." + hx(f), cx(r, st(m, N)));
    cuMemFree(m);
  }
  struct Rc {
    const char* n;
    size_t off, len;
  } rs[] = {{"whole", 0, N},      {"len0", 0, 0},         {"wholePlus1", 0, N + 1}, {"wholePlus4096", 0, N + 4096},
            {"half", 0, N / 2},   {"interior4k", 4096, 4096}, {"odd1len100", 1, 100}, {"end4096", N, 4096}};
  for (auto& rc : rs) {
    CUdeviceptr m = mng(N);
    CUresult r = cuMemPrefetchAsync(m + rc.off, rc.len, LDEV0(), 0, sc);
    CUresult q = cuStreamSynchronize(sc);
    out(K + "range." + rc.n, cx(r, "sync=" + std::string(nm(q)) + " " + st(m, N)));
    if (!r && rc.len != N) out(K + "range." + rc.n + ".subrange", st(m + rc.off, rc.len));
    cuMemFree(m);
  }
  for (auto& p : others()) {
    outc(K + "other." + std::string(p.name) + ".dev0", cuMemPrefetchAsync(p.p, 64 * KiB, LDEV0(), 0, sc));
    outc(K + "other." + std::string(p.name) + ".host", cuMemPrefetchAsync(p.p, 64 * KiB, LHOST(), 0, sc));
    outc(K + "other." + std::string(p.name) + ".len0", cuMemPrefetchAsync(p.p, 0, LDEV0(), 0, sc));
  }
  outc(K + "other.sync", cuStreamSynchronize(sc));
  {
    CUdeviceptr m = mng(N);
    struct S {
      const char* n;
      CUstream s;
    } ss[] = {{"null", nullptr}, {"legacy", CU_STREAM_LEGACY}, {"perThread", CU_STREAM_PER_THREAD}, {"created", sc}, {"nonBlocking", snb}};
    for (auto& s : ss) {
      CUresult r = cuMemPrefetchAsync(m, N, LDEV0(), 0, s.s);
      out(K + "stream." + s.n, cx(r, "sync=" + std::string(nm(cuStreamSynchronize(s.s)))));
    }
    CUcontext c2 = nullptr;
    if (!cuCtxCreate(&c2, nullptr, 0, 0)) {
      CUstream s2 = nullptr;
      cuStreamCreate(&s2, 0);
      cuCtxSetCurrent(g_ctx);
      CUresult r = cuMemPrefetchAsync(m, N, LDEV0(), 0, s2);
      out(K + "stream.otherCtx", nm(r));
      cuCtxSetCurrent(c2);
      cuStreamSynchronize(s2);
      cuStreamDestroy(s2);
      cuCtxDestroy(c2);
      cuCtxSetCurrent(g_ctx);
    }
    cuMemFree(m);
  }
  // a sequence on one allocation
  {
    CUdeviceptr m = mng(N);
    out(K + "seq.fresh", st(m, N));
    std::string ht = host_try([&] { memset((void*)(uintptr_t)m, 1, N); });
    out(K + "seq.hostTouch", ht + " " + st(m, N));
    struct Step {
      const char* n;
      CUmemLocation l;
      size_t off, len;
    } steps[] = {{"dev0", LDEV0(), 0, N},
                 {"host", LHOST(), 0, N},
                 {"hostNuma", mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA, g_numa < 0 ? 0 : g_numa), 0, N},
                 {"hostNumaCur", mkloc(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0), 0, N},
                 {"dev0again", LDEV0(), 0, N},
                 {"hostFirstHalf", LHOST(), 0, N / 2}};
    for (auto& s : steps) {
      CUresult r = cuMemPrefetchAsync(m + s.off, s.len, s.l, 0, sc);
      cuStreamSynchronize(sc);
      out(K + "seq." + s.n, cx(r, st(m, N)));
    }
    out(K + "seq.hostFirstHalf.firstHalf", st(m, N / 2));
    out(K + "seq.hostFirstHalf.secondHalf", st(m + N / 2, N / 2));
    // host touch after a prefetch to the device: does lp change?
    cuMemPrefetchAsync(m, N, LDEV0(), 0, sc);
    cuStreamSynchronize(sc);
    ht = host_try([&] { memset((void*)(uintptr_t)m, 2, N); });
    out(K + "seq.dev0ThenHostTouch", ht + " " + st(m, N));
    // on a busy stream: is lp visible before the prefetch runs?
    cuMemPrefetchAsync(m, N, LHOST(), 0, sc);
    cuStreamSynchronize(sc);
    cuLaunchHostFunc(sc, host_sleep_200, nullptr);
    auto t0 = Clock::now();
    CUresult r = cuMemPrefetchAsync(m, N, LDEV0(), 0, sc);
    out(K + "busy.call", std::string(nm(r)) + " took=" + ms_since(t0));
    out(K + "busy.beforeRun", st(m, N));
    outc(K + "busy.query", cuStreamQuery(sc));
    cuStreamSynchronize(sc);
    out(K + "busy.afterSync", st(m, N));
    cuMemFree(m);
  }
  // prefetch after advice
  {
    CUdeviceptr m = mng(N);
    cuMemAdvise(m, N, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, LHOST());
    CUresult r = cuMemPrefetchAsync(m, N, LDEV0(), 0, sc);
    cuStreamSynchronize(sc);
    out(K + "afterPrefHost.dev0", cx(r, st(m, N)));
    cuMemAdvise(m, N, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0());
    r = cuMemPrefetchAsync(m, N, LDEV0(), 0, sc);
    cuStreamSynchronize(sc);
    out(K + "afterRM.dev0", cx(r, st(m, N)));
    cuMemFree(m);
  }
  // runtime
  {
    void* p = nullptr;
    cudaMallocManaged(&p, N, cudaMemAttachGlobal);
    cudaStream_t rs = nullptr;
    cudaStreamCreate(&rs);
    auto rl = [](int t, int id) {
      cudaMemLocation l;
      memset(&l, 0, sizeof l);
      l.type = (cudaMemLocationType)t;
      l.id = id;
      return l;
    };
    outr(K + "rt.dev0", cudaMemPrefetchAsync(p, N, rl(1, 0), 0, rs));
    outr(K + "rt.host", cudaMemPrefetchAsync(p, N, rl(2, 0), 0, rs));
    outr(K + "rt.dev99", cudaMemPrefetchAsync(p, N, rl(1, 99), 0, rs));
    cudaGetLastError();
    outr(K + "rt.devM1", cudaMemPrefetchAsync(p, N, rl(1, -1), 0, rs));
    cudaGetLastError();
    outr(K + "rt.none", cudaMemPrefetchAsync(p, N, rl(0, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.type99", cudaMemPrefetchAsync(p, N, rl(99, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.flags1", cudaMemPrefetchAsync(p, N, rl(1, 0), 1, rs));
    cudaGetLastError();
    outr(K + "rt.len0", cudaMemPrefetchAsync(p, 0, rl(1, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.beyondEnd", cudaMemPrefetchAsync(p, N + 4096, rl(1, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.devMem", cudaMemPrefetchAsync((void*)(uintptr_t)g_o.dev, 4096, rl(1, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.pinned", cudaMemPrefetchAsync(g_o.pinned, 4096, rl(1, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.pageable", cudaMemPrefetchAsync(g_o.pageable, 4096, rl(1, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.null", cudaMemPrefetchAsync(nullptr, 4096, rl(1, 0), 0, rs));
    cudaGetLastError();
    outr(K + "rt.sync", cudaStreamSynchronize(rs));
    cudaStreamDestroy(rs);
    cudaFree(p);
  }
  cuStreamDestroy(sc);
  cuStreamDestroy(snb);
}

// =========================================================================================
static void probe_range() {
  const std::string K = "range.";
  const size_t N = 1 * MiB;
  CUdeviceptr m = mng(N);
  cuMemAdvise(m, N, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, LDEV0());
  cuMemAdvise(m, N, CU_MEM_ADVISE_SET_ACCESSED_BY, LDEV0());
  cuMemAdvise(m, N, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0());
  cuMemPrefetchAsync(m, N, LDEV0(), 0, nullptr);
  cuCtxSynchronize();
  out(K + "state", st(m, N));
  unsigned char buf[32];
  auto probe_sz = [&](const std::string& k, int attr, size_t ds, CUdeviceptr p, size_t n) {
    memset(buf, 0xab, sizeof buf);
    CUresult r = cuMemRangeGetAttribute(buf, ds, (CUmem_range_attribute)attr, p, n);
    out(k, std::string(nm(r)) + " bytes=" + bytes_hex(buf, std::max<size_t>(ds, 4) <= 24 ? std::max<size_t>(ds, 4) + 4 : 24));
  };
  for (int a : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100}) {
    for (size_t ds : {(size_t)0, (size_t)2, (size_t)3, (size_t)4, (size_t)8, (size_t)16}) {
      probe_sz(K + "attr" + i64(a) + ".ds" + u64(ds), a, ds, m, N);
    }
  }
  probe_sz(K + "accessedBy.ds6", 3, 6, m, N);
  probe_sz(K + "accessedBy.ds12", 3, 12, m, N);
  probe_sz(K + "accessedBy.ds20", 3, 20, m, N);
  // counts and pointers
  struct Rc {
    const char* n;
    CUdeviceptr p;
    size_t len;
  } rs[] = {{"count0", m, 0},         {"count1", m, 1},         {"countPlus1", m, N + 1},   {"countPlus4096", m, N + 4096},
            {"interior", m + 4096, 4096}, {"odd1len100", m + 1, 100}, {"end4096", m + N, 4096}, {"lastByte", m + N - 1, 1},
            {"huge", m, (size_t)1 << 40}};
  for (auto& rc : rs) {
    probe_sz(K + "count." + rc.n + ".rm", 1, 4, rc.p, rc.len);
    probe_sz(K + "count." + rc.n + ".ab", 3, 8, rc.p, rc.len);
  }
  for (auto& p : others()) {
    for (int a : {1, 2, 3, 4, 5, 6, 7, 8}) probe_sz(K + "other." + p.name + ".attr" + i64(a), a, a == 3 ? 8 : 4, p.p, 64 * KiB);
    probe_sz(K + "other." + std::string(p.name) + ".rm.count0", 1, 4, p.p, 0);
  }
  // plural
  {
    int v1 = -77, v2 = -77;
    void* data[2] = {&v1, &v2};
    size_t sizes[2] = {4, 4};
    CUmem_range_attribute as[2] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION};
    CUresult r = cuMemRangeGetAttributes(data, sizes, as, 2, m, N);
    out(K + "plural.two", cx(r, i64(v1) + "," + i64(v2)));
    v1 = v2 = -77;
    r = cuMemRangeGetAttributes(data, sizes, as, 0, m, N);
    out(K + "plural.num0", std::string(nm(r)) + " " + i64(v1) + "," + i64(v2));
    sizes[1] = 3;
    v1 = v2 = -77;
    r = cuMemRangeGetAttributes(data, sizes, as, 2, m, N);
    out(K + "plural.secondSize3", std::string(nm(r)) + " " + i64(v1) + "," + i64(v2));
    sizes[1] = 4;
    as[1] = (CUmem_range_attribute)100;
    v1 = v2 = -77;
    r = cuMemRangeGetAttributes(data, sizes, as, 2, m, N);
    out(K + "plural.secondBadAttr", std::string(nm(r)) + " " + i64(v1) + "," + i64(v2));
    as[1] = CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY;
    int ab[4] = {-77, -77, -77, -77};
    data[1] = ab;
    sizes[1] = 16;
    v1 = -77;
    r = cuMemRangeGetAttributes(data, sizes, as, 2, m, N);
    out(K + "plural.accessedBy16", cx(r, i64(v1) + ",[" + i64(ab[0]) + "," + i64(ab[1]) + "," + i64(ab[2]) + "," + i64(ab[3]) + "]"));
    v1 = -77;
    r = cuMemRangeGetAttributes(data, sizes, as, 2, g_o.dev, 4096);
    out(K + "plural.devMem", std::string(nm(r)) + " " + i64(v1));
    as[0] = as[1] = CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY;
    sizes[1] = 4;
    data[1] = &v2;
    v1 = v2 = -77;
    r = cuMemRangeGetAttributes(data, sizes, as, 2, m, N);
    out(K + "plural.sameTwice", cx(r, i64(v1) + "," + i64(v2)));
  }
  // runtime
  {
    int v = -77;
    cudaError_t e = cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, (void*)(uintptr_t)m, N);
    out(K + "rt.rm", rx(e, i64(v)));
    e = cudaMemRangeGetAttribute(&v, 8, cudaMemRangeAttributeReadMostly, (void*)(uintptr_t)m, N);
    out(K + "rt.rm.ds8", rn(e));
    cudaGetLastError();
    e = cudaMemRangeGetAttribute(&v, 4, (cudaMemRangeAttribute)100, (void*)(uintptr_t)m, N);
    out(K + "rt.attr100", rn(e));
    cudaGetLastError();
    e = cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, (void*)(uintptr_t)m, 0);
    out(K + "rt.count0", rn(e));
    cudaGetLastError();
    e = cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, (void*)(uintptr_t)m, N + 4096);
    out(K + "rt.beyondEnd", rn(e));
    cudaGetLastError();
    e = cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, (void*)(uintptr_t)g_o.dev, 4096);
    out(K + "rt.devMem", rn(e));
    cudaGetLastError();
    e = cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, g_o.pageable, 4096);
    out(K + "rt.pageable", rn(e));
    cudaGetLastError();
    e = cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, nullptr, 4096);
    out(K + "rt.nullPtr", rn(e));
    cudaGetLastError();
    int ab[4] = {-77, -77, -77, -77};
    e = cudaMemRangeGetAttribute(ab, 16, cudaMemRangeAttributeAccessedBy, (void*)(uintptr_t)m, N);
    out(K + "rt.accessedBy16", rx(e, "[" + i64(ab[0]) + "," + i64(ab[1]) + "," + i64(ab[2]) + "," + i64(ab[3]) + "]"));
    cudaGetLastError();
  }
  cuMemFree(m);
}

// =========================================================================================
// the requested size (4097) against the 512-byte rounded one (4608) the driver packs by
static void probe_edge() {
  const std::string K = "edge.";
  CUdeviceptr a = mng(4097);
  if (!a) { out(K + "alloc", "failed"); return; }
  for (size_t len : {(size_t)4097, (size_t)4608, (size_t)8192})
    outc(K + "attach.len" + u64(len), cuStreamAttachMemAsync(CU_STREAM_LEGACY, a, len, CU_MEM_ATTACH_GLOBAL));
  for (size_t len : {(size_t)4097, (size_t)4608, (size_t)8192})
    outc(K + "adviseRM.len" + u64(len), cuMemAdvise(a, len, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
  for (size_t len : {(size_t)4097, (size_t)4608})
    out(K + "rangeGet.len" + u64(len), st(a, len));
  for (size_t len : {(size_t)4097, (size_t)4608})
    outc(K + "prefetch.len" + u64(len), cuMemPrefetchAsync(a, len, LDEV0(), 0, nullptr));
  outc(K + "prefetch.sync", cuCtxSynchronize());
  for (size_t off : {(size_t)4096, (size_t)4097, (size_t)4607, (size_t)4608}) {
    unsigned long long t = 0;
    CUresult r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_IS_MANAGED, a + off);
    CUdeviceptr b = 0;
    size_t bs = 0;
    CUresult q = cuMemGetAddressRange(&b, &bs, a + off);
    out(K + "ptr.off" + u64(off), std::string("isManaged=") + (r ? nm(r) : u64(t)) + " addressRange=" + cx(q, rel(b, a) + " size=" + u64(bs)));
  }
  std::vector<unsigned char> hb(8192);
  for (size_t len : {(size_t)4097, (size_t)4608}) {
    outc(K + "memsetD8.len" + u64(len), cuMemsetD8(a, 0, len));
    outc(K + "dtoh.len" + u64(len), cuMemcpyDtoH(hb.data(), a, len));
  }
  unsigned fl = 77;
  CUresult r = cuMemHostGetFlags(&fl, (void*)(uintptr_t)(a + 100));
  out(K + "hostGetFlags.interior", cx(r, u64(fl)));
  cuMemFree(a);
  void* p = nullptr;
  cudaMallocManaged(&p, 64 * KiB, cudaMemAttachGlobal);
  cudaMemLocation l;
  memset(&l, 0, sizeof l);
  l.type = cudaMemLocationTypeHostNuma;
  l.id = g_numa < 0 ? 0 : g_numa;
  outr(K + "rt.adviseRMHostNuma", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetReadMostly, l));
  outr(K + "rt.advisePrefHostNuma", cudaMemAdvise(p, 64 * KiB, cudaMemAdviseSetPreferredLocation, l));
  out(K + "rt.afterHostNuma", st((CUdeviceptr)(uintptr_t)p, 64 * KiB));
  l.type = cudaMemLocationTypeHostNumaCurrent;
  outr(K + "rt.prefetchHostNumaCur", cudaMemPrefetchAsync(p, 64 * KiB, l, 0, nullptr));
  cudaDeviceSynchronize();
  out(K + "rt.afterPrefetchHostNumaCur", st((CUdeviceptr)(uintptr_t)p, 64 * KiB));
  cudaGetLastError();
  cudaFree(p);
}

// =========================================================================================
static const char* kRisky[] = {"preinit",          "attachFlags0",     "attachFlags0Null", "attachDestroyedStream",
                               "attachGarbageStream", "rtAttachFlags0", "allocNullDptr",    "rtAllocNullPtr",
                               "rangeNullData",    "pluralNullArrays", "prefetchDestroyedStream", "prefetchGarbageStream",
                               "adviseFreedThenHost", "hostAccessFreed", "hostAccessFreedBig"};
static void child_risky(const std::string& n) {
  const std::string K = "risky." + n;
  CUdeviceptr m = mng(64 * KiB);
  if (n == "attachFlags0") {
    CUstream s = nullptr;
    cuStreamCreate(&s, 0);
    outc(K, cuStreamAttachMemAsync(s, m, 0, 0));
    outc(K + ".sync", cuStreamSynchronize(s));
  } else if (n == "attachFlags0Null") {
    outc(K, cuStreamAttachMemAsync(nullptr, m, 0, 0));
    outc(K + ".sync", cuCtxSynchronize());
  } else if (n == "attachDestroyedStream") {
    CUstream s = nullptr;
    cuStreamCreate(&s, 0);
    cuStreamDestroy(s);
    outc(K, cuStreamAttachMemAsync(s, m, 0, CU_MEM_ATTACH_SINGLE));
    outc(K + ".global", cuStreamAttachMemAsync(s, m, 0, CU_MEM_ATTACH_GLOBAL));
  } else if (n == "attachGarbageStream") {
    outc(K, cuStreamAttachMemAsync((CUstream)(uintptr_t)0x12345678, m, 0, CU_MEM_ATTACH_SINGLE));
  } else if (n == "rtAttachFlags0") {
    cudaStream_t s = nullptr;
    cudaStreamCreate(&s);
    outr(K, cudaStreamAttachMemAsync(s, (void*)(uintptr_t)m, 0, 0));
    outr(K + ".sync", cudaStreamSynchronize(s));
  } else if (n == "allocNullDptr") {
    outc(K, cuMemAllocManaged(nullptr, 4096, CU_MEM_ATTACH_GLOBAL));
    outc(K + ".size0", cuMemAllocManaged(nullptr, 0, CU_MEM_ATTACH_GLOBAL));
    outc(K + ".badFlags", cuMemAllocManaged(nullptr, 4096, 8));
  } else if (n == "rtAllocNullPtr") {
    outr(K, cudaMallocManaged(nullptr, 4096, cudaMemAttachGlobal));
  } else if (n == "rangeNullData") {
    outc(K, cuMemRangeGetAttribute(nullptr, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 64 * KiB));
    outc(K + ".ds0", cuMemRangeGetAttribute(nullptr, 0, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 64 * KiB));
    int v = 0;
    cudaError_t e = cudaMemRangeGetAttribute(nullptr, 4, cudaMemRangeAttributeReadMostly, (void*)(uintptr_t)m, 64 * KiB);
    outr(K + ".rt", e);
    (void)v;
  } else if (n == "pluralNullArrays") {
    int v = 0;
    void* data[1] = {&v};
    size_t sizes[1] = {4};
    CUmem_range_attribute as[1] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY};
    outc(K + ".nullData", cuMemRangeGetAttributes(nullptr, sizes, as, 1, m, 64 * KiB));
    outc(K + ".nullSizes", cuMemRangeGetAttributes(data, nullptr, as, 1, m, 64 * KiB));
    outc(K + ".nullAttrs", cuMemRangeGetAttributes(data, sizes, nullptr, 1, m, 64 * KiB));
    outc(K + ".allNullNum0", cuMemRangeGetAttributes(nullptr, nullptr, nullptr, 0, m, 64 * KiB));
    void* dn[1] = {nullptr};
    outc(K + ".nullElement", cuMemRangeGetAttributes(dn, sizes, as, 1, m, 64 * KiB));
  } else if (n == "prefetchDestroyedStream") {
    CUstream s = nullptr;
    cuStreamCreate(&s, 0);
    cuStreamDestroy(s);
    outc(K, cuMemPrefetchAsync(m, 64 * KiB, LDEV0(), 0, s));
  } else if (n == "prefetchGarbageStream") {
    outc(K, cuMemPrefetchAsync(m, 64 * KiB, LDEV0(), 0, (CUstream)(uintptr_t)0x12345678));
  } else if (n == "adviseFreedThenHost") {
    CUdeviceptr f = mng(64 * KiB);
    cuMemFree(f);
    outc(K + ".advise", cuMemAdvise(f, 64 * KiB, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
    outc(K + ".prefetch", cuMemPrefetchAsync(f, 64 * KiB, LDEV0(), 0, nullptr));
    outc(K + ".attach", cuStreamAttachMemAsync(nullptr, f, 0, CU_MEM_ATTACH_GLOBAL));
  } else if (n == "hostAccessFreedBig") {
    CUdeviceptr f = mng(8 * MiB);  // its own chunk
    out(K + ".beforeFree", host_try([&] { ((volatile unsigned char*)(uintptr_t)f)[4 * MiB] = 1; }));
    cuMemFree(f);
    out(K, host_try([&] { ((volatile unsigned char*)(uintptr_t)f)[4 * MiB] = 1; }));
    unsigned long long t = 0;
    CUresult r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_IS_MANAGED, f);
    out(K + ".isManaged", r ? nm(r) : u64(t));
  } else if (n == "hostAccessFreed") {
    CUdeviceptr f = mng(64 * KiB);
    cuMemFree(f);
    out(K, host_try([&] { ((volatile unsigned char*)(uintptr_t)f)[0] = 1; }));
  }
  out(K + ".end", "reached");
}

static void child_preinit() {
  const std::string K = "risky.preinit";
  CUdeviceptr d = SENT;
  CUresult r = cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL);
  out(K + ".alloc", cxf(r, "", outp(d)));
  outc(K + ".attach", cuStreamAttachMemAsync(nullptr, 0x10000, 0, CU_MEM_ATTACH_GLOBAL));
  outc(K + ".advise", cuMemAdvise(0x10000, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, LDEV0()));
  outc(K + ".prefetch", cuMemPrefetchAsync(0x10000, 4096, LDEV0(), 0, nullptr));
  int v = -77;
  r = cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, 0x10000, 4096);
  out(K + ".rangeGet", ri(r, v));
  out(K + ".end", "reached");
}

static void child_huge() {
  const std::string K = "huge";
  for (size_t n : {(size_t)1 << 50, ~(size_t)0}) {
    CUdeviceptr d = SENT;
    auto t0 = Clock::now();
    CUresult r = cuMemAllocManaged(&d, n, CU_MEM_ATTACH_GLOBAL);
    out(K + (n == ~(size_t)0 ? ".sizeMax" : ".1shl50"), cxf(r, "took=" + ms_since(t0), outp(d)));
    if (!r) cuMemFree(d);  // never touched
  }
  void* p = (void*)SENT;
  cudaError_t e = cudaMallocManaged(&p, (size_t)1 << 50, cudaMemAttachGlobal);
  out(K + ".rt.1shl50", std::string(rn(e)) + (e ? " " + outp((uintptr_t)p) : ""));
  if (!e) cudaFree(p);
  out(K + ".end", "reached");
}

static int child_main(const std::string& name) {
  g_deadline = Clock::now() + std::chrono::seconds(kChildAlarm - 2);
  alarm(kChildAlarm);
  if (name == "risky.preinit") {
    child_preinit();
    return 0;
  }
  CUresult r = cuInit(0);
  if (r) { outc(name + ".init", r); return 1; }
  cuDevicePrimaryCtxRetain(&g_ctx, 0);
  cuCtxSetCurrent(g_ctx);
  cudaSetDevice(0);
  make_others();
  if (name.rfind("risky.", 0) == 0) child_risky(name.substr(6));
  else if (name == "huge") child_huge();
  else out(name + ".unknown", "yes");
  fflush(stdout);
  return 0;
}

static void on_watchdog(int) {
  const char m[] = "watchdog = fired\n";
  if (write(1, m, sizeof m - 1) < 0) {}
  _exit(3);
}

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--child") return child_main(argv[2]);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGALRM, on_watchdog);
  alarm(200);
  g_deadline = Clock::now() + std::chrono::seconds(150);
  g_only = getenv("PROBE_ONLY");
  CUresult r = cuInit(0);
  outc("init", r);
  if (r) { out("done", "1"); return 0; }
  cuDeviceGetCount(&g_ndev);
  out("devices", i64(g_ndev));
  int dv = 0;
  cuDriverGetVersion(&dv);
  out("driver", i64(dv));
  cuDevicePrimaryCtxRetain(&g_ctx, 0);
  cuCtxSetCurrent(g_ctx);
  cudaSetDevice(0);
  make_others();
  probe_attr();  // always: sets g_numa
  if (want("alloc")) probe_alloc();
  if (want("props")) probe_props();
  if (want("attach")) probe_attach();
  if (want("advise")) probe_advise();
  if (want("prefetch")) probe_prefetch();
  if (want("range")) probe_range();
  if (want("edge")) probe_edge();
  if (want("risky"))
    for (const char* n : kRisky) run_child(std::string("risky.") + n);
  out("sticky.ctxSync", nm(cuCtxSynchronize()));
  out("sticky.rtLastError", rn(cudaGetLastError()));
  if (want("huge")) run_child("huge");  // last: the one request beyond the card's memory
  out("done", "1");
  return 0;
}
