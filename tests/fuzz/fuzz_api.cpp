// libFuzzer harness: each input is a program of driver and runtime calls. The bytes pick the
// calls and their arguments, handles included: live ones, destroyed ones, handles of another
// kind, garbage pointers, NULL; export data real, altered or random; file descriptors of every
// kind this harness owns (memfds, pipes, sockets, /dev/null, exported fds, closed numbers).
// The calls are every implemented export of libcuda.so.1 and libcudart.so.13 (the table in
// fuzz_table_*.cpp, built from emu/abi/*.def; fuzz.coverage checks it against the libraries),
// the weak NOT_SUPPORTED stubs, and hand-written stateful calls (fuzz_steps.cpp).
// After every call it checks that
//   - the code is one the driver documents: a CUresult/cudaError_t the library can name, never
//     UNKNOWN outside imports, and a failure carries its explanation (cuShimGetLastExplanation);
//   - the emulator's live handles of each kind equal what the program holds
//     (cuShimGetObjectCounts), i.e. nothing leaked or died behind its back;
//   - an fd whose ownership passed to the driver (a successful OPAQUE_FD import) is closed;
// and, after the program's cleanup, that everything is back where it started: handles, arrays,
// address ranges, charged device memory, cuMemGetInfo, logical endpoint ids, the IPC registry
// (cuShimRegistryCheck) and this process's open fds. Any breach aborts, which libFuzzer reports
// as a crash with the input that caused it. CUDA_SHIM_CHECK_POOLS=1 makes every pool re-derive
// its books after each change as well.
// Two more modes, read at start-up: CUDA_SHIM_FUZZ_LIST=file writes the entries the harness
// calls (fuzz.coverage compares them with the libraries' exports); CUDA_SHIM_FUZZ_SWEEP=n calls
// every entry n times with random bytes and fails if one was never reached.
#include <dirent.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <thread>

#include "fuzz.hpp"
#include "nvml/nvml_api.h"

namespace fz {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_api: invariant broken: %s: %s\n", what, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

State S;
unsigned char* g_hostmem = nullptr;
int g_devnull = -1;
CUcontext g_primary[2] = {nullptr, nullptr};
unsigned long long g_ops = 0;

namespace {

// Baselines taken once the harness has set itself up; g_base's stream count moves when a
// context's teardown ends the default streams it settled (see rebase()).
CUshimObjectCounts g_base{}, g_base_init{};
size_t g_base_free = 0, g_total = 0;
int g_base_fds = 0;
std::string g_base_fd_list;
std::vector<int> g_base_fd_set;
CUlogicalEndpointId g_first_le = 0;
bool g_shared = false;  // the input made a call that uses the IPC registry

bool shares(const char* api) {
  for (const char* part : {"Ipc", "Shareable", "Pointer", "LogicalEndpoint", "Registry", "Fabric"})
    if (std::strstr(api, part)) return true;
  return false;
}

CUshimObjectCounts counts() {
  CUshimObjectCounts c{};
  if (cuShimGetObjectCounts(&c, sizeof c) != 0) die("cuShimGetObjectCounts", "failed");
  return c;
}

// This process's open fds (/proc/self/fd, less the directory's own).
std::vector<int> fd_set() {
  std::vector<int> out;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) die("setup", "/proc/self/fd");
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') out.push_back(std::atoi(e->d_name));
  int own = ::dirfd(d);
  ::closedir(d);
  erase_value(out, own);
  std::sort(out.begin(), out.end());
  return out;
}

// "fd -> what it is" for every open fd (the report of an fd leak).
std::string fd_list() {
  std::string out;
  for (int fd : fd_set()) {
    char link[256] = {}, path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(path, link, sizeof link - 1);
    out += " " + std::to_string(fd) + "->" + (n > 0 ? std::string(link, static_cast<size_t>(n)) : "?");
  }
  return out;
}

unsigned long long held_arrays() {
  unsigned long long n = 0;
  for (const Mipmap& m : S.mipmaps) n += 1 + m.levels;
  return n + S.own_arrays.size();
}

// ---- Accounting after each call ----
void check_books(const char* after) {
  CUshimObjectCounts c = counts();
  auto eq = [&](const char* what, unsigned long long have, unsigned long long base, size_t ours) {
    if (have != base + ours)
      die(after, std::string(what) + ": the emulator holds " + std::to_string(have) + ", the program " +
                     std::to_string(ours) + " (+" + std::to_string(base) + " before it started)");
  };
  eq("streams", c.streams, g_base.streams, S.streams.size());
  eq("events", c.events, g_base.events, S.events.size());
  eq("memory pools", c.memPools, g_base.memPools, S.pools.size());
  eq("VMM handles", c.vmmHandles, g_base.vmmHandles, S.vmms.size());
  eq("VMM reservations", c.vmmReservations, g_base.vmmReservations, S.res.size());
  eq("external memories", c.externalMemories, g_base.externalMemories, S.extmems.size());
  eq("external semaphores", c.externalSemaphores, g_base.externalSemaphores, S.sems.size());
  eq("contexts", c.contexts, g_base.contexts, S.ctxs.size());
  eq("arrays", c.arrays, g_base.arrays, held_arrays());
  // The fds the program owns were never closed (or replaced) behind its back.
  for (int fd : S.fds)
    if (!fd_open(fd)) die(after, "closed fd " + std::to_string(fd) + ", which the program owns:" + fd_list());
  // The emulator keeps memfds and its registry open, never a copy of a pipe, socket or device
  // the program handed it.
  for (int fd : fd_set()) {
    if (holds(S.fds, fd) || holds(g_base_fd_set, fd)) continue;
    char link[256] = {}, path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (::readlink(path, link, sizeof link - 1) > 0 &&
        (!std::strncmp(link, "pipe:", 5) || !std::strncmp(link, "socket:", 7) || !std::strcmp(link, "/dev/null")))
      die(after, "left fd " + std::to_string(fd) + " (" + link + ") open, which the program does not own");
  }
}

// A context's teardown ends the default streams the harness settled in it (legacy and
// per-thread streams are created again on first use): what the emulator holds now, less
// what the program holds, is the new base of streams.
void rebase() {
  CUshimObjectCounts c = counts();
  if (c.streams < S.streams.size()) die("teardown", "fewer streams than the program holds");
  g_base.streams = c.streams - S.streams.size();
}

// Creates what the first calls on a device create lazily (its default pool's first chunk,
// the registry, per-thread streams, the runtime's state), so the baselines hold them.
void settle(int dev) {
  CUcontext c = nullptr;
  if (cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS) die("setup", "cuDevicePrimaryCtxRetain");
  if (dev == 0) S.ctx = c;
  g_primary[dev] = c;
  cuCtxSetCurrent(c);
  CUdeviceptr p = 0;
  cuMemAllocAsync(&p, 1, nullptr);
  cuMemFreeAsync(p, nullptr);
  cuMemAllocAsync(&p, 1, CU_STREAM_PER_THREAD);
  cuMemFreeAsync(p, CU_STREAM_PER_THREAD);
  CUipcMemHandle h;
  cuMemAlloc(&p, 1);
  cuIpcGetMemHandle(&h, p);
  cuMemFree(p);
  void* host = nullptr;  // the pinned and managed arenas
  cuMemAllocHost(&host, 1);
  cuMemFreeHost(host);
  cuMemAllocManaged(&p, 1, CU_MEM_ATTACH_GLOBAL);
  cuMemFree(p);
  cuCtxSynchronize();
  cuStreamSynchronize(CU_STREAM_PER_THREAD);
}

// Every location's default pools (made on first use), each made current again (the program
// may have made one of its own current, then destroyed it).
void default_pools() {
  const CUmemLocation locs[] = {{CU_MEM_LOCATION_TYPE_NONE, 0}, {CU_MEM_LOCATION_TYPE_DEVICE, 0}, {CU_MEM_LOCATION_TYPE_DEVICE, 1},
                                {CU_MEM_LOCATION_TYPE_HOST, 0}, {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0},
                                {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0}};
  for (CUmemLocation l : locs)
    for (auto t : {CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_MANAGED}) {
      CUmemoryPool p = nullptr;
      if (cuMemGetDefaultMemPool(&p, &l, t) != CUDA_SUCCESS) continue;
      cuMemSetMemPool(&l, t, p);
      // Its attributes as they were (the program may keep memory reserved), its memory given back.
      cuuint64_t zero = 0;
      int one = 1;
      cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &zero);
      for (auto a : {CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                     CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES})
        cuMemPoolSetAttribute(p, a, &one);
      cuMemPoolTrimTo(p, 0);
      cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero);
      cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero);
      if (l.type == CU_MEM_LOCATION_TYPE_DEVICE) {  // the other device's access taken back
        CUmemAccessDesc d{{CU_MEM_LOCATION_TYPE_DEVICE, 1 - l.id}, CU_MEM_ACCESS_FLAGS_PROT_NONE};
        cuMemPoolSetAccess(p, &d, 1);
      }
    }
  cuShimGetLastExplanationCode();
}

// The runtime's reference to device 0's primary and the harness's to both: the same counts
// whichever retains first (after a reset the runtime retains again on first use).
void settle_all() {
  cudaSetDevice(0);
  cudaFree(nullptr);
  cudaGetLastError();
  settle(1);
  settle(0);
  default_pools();
  cuCtxSetCurrent(S.ctx);
}

}  // namespace

bool fd_open(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) != -1; }

void remember_dead(void* h) {
  if (S.dead.size() > 32) S.dead.erase(S.dead.begin());
  S.dead.push_back(h);
}

void forget_alloc(CUdeviceptr p) {
  for (size_t i = 0; i < S.allocs.size(); ++i)
    if (S.allocs[i].p == p) {
      S.allocs.erase(S.allocs.begin() + static_cast<long>(i));
      break;
    }
  if (S.dead_ptrs.size() > 16) S.dead_ptrs.erase(S.dead_ptrs.begin());
  S.dead_ptrs.push_back(p);
}

void keep_fd(int fd) {
  if (fd >= 0) S.fds.push_back(fd);
}

void add_vmm(CUmemGenericAllocationHandle h, size_t size) {
  for (Vmm& v : S.vmms)
    if (v.h == h) {
      ++v.refs;
      return;
    }
  S.vmms.push_back({h, size, 1});
}

bool release_vmm(CUmemGenericAllocationHandle h) {
  for (size_t i = 0; i < S.vmms.size(); ++i)
    if (S.vmms[i].h == h) {
      if (--S.vmms[i].refs) return false;
      S.vmms.erase(S.vmms.begin() + static_cast<long>(i));
      return true;
    }
  return true;
}

void prune() {
  auto drop = [](auto& v, auto dead) {
    for (size_t i = v.size(); i-- > 0;)
      if (dead(v[i])) {
        remember_dead(reinterpret_cast<void*>(v[i]));
        v.erase(v.begin() + static_cast<long>(i));
      }
  };
  drop(S.streams, [](CUstream s) { return cuStreamQuery(s) == CUDA_ERROR_INVALID_HANDLE; });
  drop(S.ctxs, [](CUcontext c) {
    unsigned v = 0;
    return cuCtxGetApiVersion(c, &v) != CUDA_SUCCESS;
  });
  drop(S.modules, [](CUmodule m) {
    unsigned n = 0;
    return cuModuleGetFunctionCount(&n, m) != CUDA_SUCCESS;
  });
  drop(S.lib_modules, [](CUmodule m) {
    unsigned n = 0;
    return cuModuleGetFunctionCount(&n, m) != CUDA_SUCCESS;
  });
  drop(S.libs, [](CUlibrary l) {
    unsigned n = 0;
    return cuLibraryGetKernelCount(&n, l) != CUDA_SUCCESS;
  });
  drop(S.funcs, [](CUfunction f) {
    const char* n = nullptr;
    return cuFuncGetName(&n, f) != CUDA_SUCCESS;
  });
  drop(S.kernels, [](CUkernel k) {
    const char* n = nullptr;
    return cuKernelGetName(&n, k) != CUDA_SUCCESS;
  });
  drop(S.arrays, [](CUarray a) {
    CUDA_ARRAY3D_DESCRIPTOR d;
    return cuArray3DGetDescriptor(&d, a) != CUDA_SUCCESS;
  });
  cuShimGetLastExplanationCode();
}

void release_waits() {
  for (int fd : S.sem_object_fds)
    if (fd_open(fd)) cuShimExportableSemaphoreSignal(fd, ~0ull >> 1);
}

// Lets every stream drain: semaphore waits nobody will signal are released first.
void drain() {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    release_waits();
    bool busy = false;
    for (CUstream s : S.streams)
      if (cuStreamQuery(s) == CUDA_ERROR_NOT_READY) busy = true;
    for (CUstream s : {CUstream{nullptr}, CU_STREAM_PER_THREAD})
      if (cuStreamQuery(s) == CUDA_ERROR_NOT_READY) busy = true;
    if (!busy) break;
    if (std::chrono::steady_clock::now() > until) die("cleanup", "a stream never drained");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // A sticky error would be a bug: no kernel runs here.
  if (cuCtxSynchronize() != CUDA_SUCCESS) die("cuCtxSynchronize", "failed at cleanup");
}

namespace {

void same_counts(const char* when, const CUshimObjectCounts& base) {
  CUshimObjectCounts c = counts();
  auto same = [&](const char* what, unsigned long long now, unsigned long long was) {
    if (now != was)
      die(when, std::string(what) + ": " + std::to_string(now) + " live, " + std::to_string(was) + " before");
  };
  same("contexts", c.contexts, base.contexts);
  same("streams", c.streams, base.streams);
  same("events", c.events, base.events);
  same("memory pools", c.memPools, base.memPools);
  same("VMM handles", c.vmmHandles, base.vmmHandles);
  same("VMM reservations", c.vmmReservations, base.vmmReservations);
  same("external memories", c.externalMemories, base.externalMemories);
  same("external semaphores", c.externalSemaphores, base.externalSemaphores);
  same("arrays", c.arrays, base.arrays);
  same("address ranges", c.addressRanges, base.addressRanges);
  same("device bytes charged", c.deviceBytesCharged, base.deviceBytesCharged);
  size_t free_now = 0, total = 0;
  if (CUresult r = cuMemGetInfo(&free_now, &total); r != CUDA_SUCCESS) die(when, "cuMemGetInfo failed: " + std::to_string(r));
  if (free_now != g_base_free)
    die(when, "cuMemGetInfo free " + std::to_string(free_now) + " != " + std::to_string(g_base_free));
}

// Releases everything the program holds, then checks that the emulator is back to the start.
void cleanup() {
  // The thread's context stack back to the harness's context, the primaries active again.
  CUcontext c = nullptr;
  while (cuCtxPopCurrent(&c) == CUDA_SUCCESS) {
  }
  for (int dev = 0; dev < 2; ++dev) {
    unsigned flags = 0;
    int active = 0;
    cuDevicePrimaryCtxGetState(dev, &flags, &active);
    if (!active) {  // released or reset: back for the cleanup, and reset again after it
      cuDevicePrimaryCtxRetain(&c, dev);
      S.touched = true;
    }
  }
  cuCtxSetCurrent(S.ctx);
  release_waits();
  for (CUcontext x : S.ctxs) cuCtxDestroy(x);
  drain();
  default_pools();
  le_cleanup();
  for (auto& rv : S.res)
    for (size_t i = 0; i < rv.mapped.size(); ++i) cuMemUnmap(rv.mapped[i], rv.mapped_size[i]);
  for (auto& rv : S.res) cuMemAddressFree(rv.base, rv.size);
  for (auto& v : S.vmms)
    for (unsigned i = 0; i < v.refs; ++i) cuMemRelease(v.h);
  // Allocations before their pools; a pointer may be gone already (its pool or memory died).
  for (auto& a : S.allocs) {
    switch (a.kind) {
      case Alloc::host: cuMemFreeHost(reinterpret_cast<void*>(a.p)); break;
      case Alloc::ipc_opened: cuIpcCloseMemHandle(a.p); break;
      case Alloc::registered: cuMemHostUnregister(reinterpret_cast<void*>(a.p)); break;
      case Alloc::global: break;  // goes with its module
      case Alloc::pool: case Alloc::pool_imported: cuMemFreeAsync(a.p, nullptr); break;
      default: cuMemFree(a.p); break;
    }
  }
  drain();
  if (S.memop_word) cuMemFreeHost(S.memop_word);  // every wait on it has ended: the streams drained
  for (CUmodule m : S.modules) cuModuleUnload(m);
  for (CUlibrary l : S.libs) cuLibraryUnload(l);
  for (CUlinkState l : S.links) cuLinkDestroy(l);
  for (void** f : S.fatbins) __cudaUnregisterFatBinary(f);
  for (const Mipmap& m : S.mipmaps) cuMipmappedArrayDestroy(m.h);
  for (unsigned long long t : S.textures) cuTexObjectDestroy(t);
  for (unsigned long long t : S.surfaces) cuSurfObjectDestroy(t);
  for (CUarray a : S.own_arrays) cuArrayDestroy(a);
  for (CUmemoryPool p : S.pools) cuMemPoolDestroy(p);
  for (CUexternalMemory m : S.extmems) cuDestroyExternalMemory(m);
  for (auto& s : S.sems) cuDestroyExternalSemaphore(s.h);
  for (CUevent e : S.events) cuEventDestroy(e);
  for (CUstream s : S.streams) cuStreamDestroy(s);
  drain();
  for (int fd : S.fds) ::close(fd);
  default_pools();
  // A primary the program reset, released or re-flagged (or the runtime moved) starts the next
  // input afresh; otherwise the program's own references to the primaries go.
  const bool touched = S.touched;
  if (!touched)
    for (int dev = 0; dev < 2; ++dev)
      for (; S.primary_net[dev] > 0; --S.primary_net[dev]) cuDevicePrimaryCtxRelease(dev);
  S = State{S.ctx};
  cudaGetLastError();
  cuCtxSetCurrent(S.ctx);
  same_counts("after cleanup", g_base);
  if (touched) {
    cuDevicePrimaryCtxReset(0);
    cuDevicePrimaryCtxReset(1);
    settle_all();
    same_counts("after cleanup and a reset of the primary contexts", g_base_init);
  }
  g_base = g_base_init;
  // Logical endpoint ids all back (the lowest free run starts where it did) and the registry sound.
  CUlogicalEndpointId le = 0;
  if (cuLogicalEndpointIdReserve(&le, 1) != CUDA_SUCCESS || le != g_first_le)
    die("after cleanup", "logical endpoint ids were left reserved (the first free id is " + std::to_string(le) + ")");
  cuLogicalEndpointIdRelease(le, 1);
  // The registry sound, when the program shared anything (a full check is slow).
  char buf[512];
  if (g_shared && cuShimRegistryCheck(buf, sizeof buf) != 0) die("cuShimRegistryCheck", buf);
  g_shared = false;
  // As many as before (the emulator may replace a memfd of its own as an arena grows).
  std::vector<int> fds = fd_set();
  if (fds.size() != g_base_fd_set.size()) {
    std::string before;
    for (int fd : g_base_fd_set) before += " " + std::to_string(fd);
    die("after cleanup", "open fds " + std::to_string(fds.size()) + " != " + std::to_string(g_base_fds) + ":" + fd_list() +
                             "; before:" + before);
  }
}

// Calls that end objects they do not name, and calls that tear a context down.
const std::set<std::string> kPruneAfter = {
    "cuCtxDestroy", "cuCtxDestroy_v2", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2", "cudaDeviceReset", "cuModuleUnload", "cuLibraryUnload",
    "__cudaUnregisterFatBinary", "cuMipmappedArrayDestroy", "cudaFreeMipmappedArray"};
const std::set<std::string> kTeardown = {
    "cuCtxDestroy", "cuCtxDestroy_v2", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2", "cudaDeviceReset"};

// CUDA_SHIM_FUZZ_TRACE=1: each call's name on stderr (to read a crash's input).
const bool g_trace = std::getenv("CUDA_SHIM_FUZZ_TRACE") != nullptr;

void step(Picker& pk) {
  FuzzedDataProvider& in = pk.in;
  const unsigned k = in.ConsumeIntegralInRange(0u, 15u);
  if (k < 4) {
    const char* api = step_stateful(pk);
    g_shared = g_shared || shares(api);
    if (g_trace) std::fprintf(stderr, "fuzz_api: trace: %s\n", api);
    check_books(api);
    return;
  }
  if (k == 4) {
    call_stub(pk);
    check_books("a NOT_SUPPORTED stub");
    return;
  }
  Entry& e = table()[in.ConsumeIntegralInRange<size_t>(0, table().size() - 1)];
  ++e.calls;
  g_shared = g_shared || shares(e.name);
  if (g_trace) std::fprintf(stderr, "fuzz_api: trace: %s\n", e.name);
  e.run(pk, e);
  if (kPruneAfter.count(e.name)) {
    prune();
    if (kTeardown.count(e.name)) rebase();
  }
  check_books(e.name);
}

// One input: the fds open before it (libFuzzer's own come and go between inputs: its
// symbolizer's pipes), the fds it may use (it owns them), its calls, the cleanup checks.
void run_input(const uint8_t* data, size_t size) {
  g_base_fd_set = fd_set();
  g_base_fds = static_cast<int>(g_base_fd_set.size());
  g_base_fd_list.clear();  // made when an fd leaks (readlink of each is slow)
  int sv[2], pp[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || ::pipe2(pp, O_CLOEXEC) != 0) die("setup", "fds");
  int mfd = ::memfd_create("fuzz-plain", MFD_CLOEXEC);
  if (mfd < 0 || ::ftruncate(mfd, 4 << 20) != 0) die("setup", "memfd");
  S.fds = {sv[0], sv[1], pp[0], pp[1], mfd};
  FuzzedDataProvider in(data, size);
  Picker pk{in};
  make_fixtures(pk);
  check_books("the fixtures");
  for (int n = 0; n < 64 && in.remaining_bytes() > 0; ++n) step(pk);
  cleanup();
}

// CUDA_SHIM_FUZZ_SWEEP=n: every table entry n times, each after a few random calls that make
// objects to call it on; fails when an entry was never reached.
int sweep(unsigned rounds) {
  std::mt19937_64 rng(12345);
  std::vector<uint8_t> bytes(512);
  for (size_t i = 0; i < table().size(); ++i) {
    for (unsigned r = 0; r < rounds; ++r) {
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
      g_base_fd_set = fd_set();
      g_base_fds = static_cast<int>(g_base_fd_set.size());
      int sv[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) die("setup", "fds");
      S.fds = {sv[0], sv[1]};
      FuzzedDataProvider in(bytes.data(), bytes.size());
      Picker pk{in};
      make_fixtures(pk);
      for (int n = 0; n < 8; ++n) step(pk);
      Entry& e = table()[i];
      ++e.calls;
      e.run(pk, e);
      if (kPruneAfter.count(e.name)) {
        prune();
        if (kTeardown.count(e.name)) rebase();
      }
      check_books(e.name);
      cleanup();
    }
  }
  int missing = 0;
  for (const Entry& e : table())
    if (!e.calls) {
      std::fprintf(stderr, "fuzz_api: sweep never reached %s\n", e.name);
      ++missing;
    }
  std::fprintf(stderr, "fuzz_api: sweep: %zu entries, %d never reached, %llu calls checked\n", table().size(), missing,
               g_ops);
  return missing ? 1 : 0;
}

}  // namespace
}  // namespace fz

using namespace fz;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Settings are read at the first call: two devices, an IMEX channel for fabric handles,
  // logical endpoints (driver 13.3), launches that complete as no-ops, pool books verified
  // after every change, a registry of our own.
  setenv("CUDA_SHIM_DEVICES", "2", 0);
  setenv("CUDA_SHIM_IMEX_CHANNEL", "0", 0);
  setenv("CUDA_SHIM_DRIVER_VERSION", "13030", 0);
  setenv("CUDA_SHIM_KERNELS", "skip", 0);
  setenv("CUDA_SHIM_CHECK_POOLS", "1", 0);
  static std::string reg = "cuda-shim-fuzz-" + std::to_string(getpid());
  setenv("CUDA_SHIM_REGISTRY", reg.c_str(), 0);
  setenv("CUDA_SHIM_MANAGED_FAULT", "quiet", 0);
  register_driver_entries();
  register_runtime_entries();
  register_extra_entries();
  if (const char* f = std::getenv("CUDA_SHIM_FUZZ_LIST")) {
    FILE* o = std::fopen(f, "w");
    if (!o) die("CUDA_SHIM_FUZZ_LIST", f);
    for (const Entry& e : table()) std::fprintf(o, "covered %s\n", e.name);
    for (bool rt : {false, true})
      for (const std::string& n : stub_names(rt)) std::fprintf(o, "stub %s\n", n.c_str());
    std::fclose(o);
    std::exit(0);
  }
  void* m = ::mmap(nullptr, kHostBytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED || ::mprotect(static_cast<char*>(m) + kHostBytes, 4096, PROT_NONE) != 0) die("setup", "host buffer");
  g_hostmem = static_cast<unsigned char*>(m);
  if (cuInit(0) != CUDA_SUCCESS) die("setup", "cuInit");
  if (nvmlInit_v2() != NVML_SUCCESS) die("setup", "nvmlInit_v2 failed");
  g_devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  settle_all();
  if (cuLogicalEndpointIdReserve(&g_first_le, 1) != CUDA_SUCCESS) die("setup", "no logical endpoint ids");
  cuLogicalEndpointIdRelease(g_first_le, 1);
  g_base = g_base_init = counts();
  cuMemGetInfo(&g_base_free, &g_total);
  std::atexit([] {
    std::fprintf(stderr, "fuzz_api: %llu calls checked\n", g_ops);
    dump_codes();
  });
  if (const char* n = std::getenv("CUDA_SHIM_FUZZ_SWEEP")) std::exit(sweep(static_cast<unsigned>(std::atoi(n))));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run_input(data, size);
  return 0;
}
