// libFuzzer harness: each input is a program of driver and runtime calls. The bytes pick the
// calls and their arguments, handles included: live ones, destroyed ones, handles of another
// kind, garbage pointers, NULL; export data real, altered or random; file descriptors of every
// kind this harness owns (memfds, pipes, sockets, /dev/null, exported fds, closed numbers).
// After every call it checks that
//   - the code is one the driver documents: a CUresult/cudaError_t the library can name, never
//     UNKNOWN outside imports, and a failure carries its explanation (cuShimGetLastExplanation);
//   - the emulator's live handles of each kind equal what the program holds
//     (cuShimGetObjectCounts), i.e. nothing leaked or died behind its back;
//   - an fd whose ownership passed to the driver (a successful OPAQUE_FD import) is closed;
// and, after the program's cleanup, that everything is back where it started: handles, address
// ranges, charged device memory, cuMemGetInfo and this process's open fds. Any breach aborts,
// which libFuzzer reports as a crash with the input that caused it. CUDA_SHIM_CHECK_POOLS=1
// makes every pool re-derive its books after each change as well.
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda.h"
#include "cuda_runtime_api.h"
#include "cuda_shim_ext.h"
#include "nvml/nvml_api.h"

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_api: invariant broken: %s: %s\n", what, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

// ---- What the program holds ----
struct Alloc {
  CUdeviceptr p;
  size_t size;
  enum Kind { device, host, managed, pool, ipc_opened, pool_imported, ext_buffer } kind;
};
struct Vmm {
  CUmemGenericAllocationHandle h;
  size_t size;
};
struct Reservation {
  CUdeviceptr base;
  size_t size;
  std::vector<CUdeviceptr> mapped;  // mapping bases (whole allocations)
  std::vector<size_t> mapped_size;
};
struct Sem {
  CUexternalSemaphore h;
  int object_fd;  // our end: cuShimExportableSemaphore*
  // What lets a wait end. A wait no signal satisfies blocks its stream for good, and every
  // synchronizing call after it (as on a GPU), so waits go only where they will end: on a
  // handle imported as its fresh object's own type (`clean`), whose object no other import
  // reached, for at most the lowest value signaled (timeline: a signal stores its value, and
  // signals on several streams land in any order) or once per signal (binary).
  bool clean = false, timeline = false;
  unsigned long long floor = 0;  // timeline: the lowest value signaled, once `pending`
  bool pending = false;          // a signal was enqueued (binary: and no wait consumed it)
};

struct State {
  CUcontext ctx = nullptr;
  std::vector<Alloc> allocs;
  std::vector<CUstream> streams;
  std::vector<CUevent> events;
  std::vector<CUmemoryPool> pools;  // created or imported
  std::vector<Vmm> vmms;
  std::vector<Reservation> res;
  std::vector<CUexternalMemory> extmems;
  std::vector<Sem> sems;
  std::vector<int> fds;                           // fds this program owns
  std::vector<std::vector<unsigned char>> blobs;  // 64-byte export data seen
  std::vector<void*> dead;                        // handles destroyed (any kind)
  std::vector<CUdeviceptr> dead_ptrs;
  std::vector<int> sem_object_fds;
  std::set<int> tainted_sem_objects;  // imported other than cleanly (see Sem)                // to signal at cleanup (also in fds)
} S;

// Baselines taken once the harness has set itself up.
CUshimObjectCounts g_base{};
size_t g_base_free = 0, g_total = 0;
int g_base_fds = 0;
std::string g_base_fd_list;
std::vector<int> g_base_fd_set;
unsigned char g_host[1 << 20];  // host side of copies
int g_devnull = -1;
unsigned long long g_ops = 0;

CUshimObjectCounts counts() {
  CUshimObjectCounts c{};
  if (cuShimGetObjectCounts(&c, sizeof c) != 0) die("cuShimGetObjectCounts", "failed");
  return c;
}

int open_fds() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd)
    if (fcntl(fd, F_GETFD) != -1) ++n;
  return n;
}

// "fd -> what it is" for every open fd (the report of an fd leak).
std::string fd_list() {
  std::string out;
  for (int fd = 0; fd < 4096; ++fd) {
    if (fcntl(fd, F_GETFD) == -1) continue;
    char link[256] = {}, path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(path, link, sizeof link - 1);
    out += " " + std::to_string(fd) + "->" + (n > 0 ? std::string(link, static_cast<size_t>(n)) : "?");
  }
  return out;
}

bool fd_open(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) != -1; }

template <class T>
void erase_value(std::vector<T>& v, const T& x) {
  v.erase(std::remove(v.begin(), v.end(), x), v.end());
}
void remember_dead(void* h) {
  if (S.dead.size() > 32) S.dead.erase(S.dead.begin());
  S.dead.push_back(h);
}

// ---- Codes ----
std::set<std::pair<std::string, int>> g_seen;  // (call, code) pairs, for CUDA_SHIM_FUZZ_CODES

// What each call may return besides success: the codes its NVIDIA documentation lists, plus
// the ones measured on driver 580 where it crashes or answers otherwise (INVALID_HANDLE for
// dead handles, UNKNOWN for foreign descriptors; README). A code outside its call's list
// breaks the run.
constexpr int V = CUDA_ERROR_INVALID_VALUE, H = CUDA_ERROR_INVALID_HANDLE, M = CUDA_ERROR_OUT_OF_MEMORY,
              NS = CUDA_ERROR_NOT_SUPPORTED, UNK = CUDA_ERROR_UNKNOWN, DEV = CUDA_ERROR_INVALID_DEVICE,
              NP = CUDA_ERROR_NOT_PERMITTED, NF = CUDA_ERROR_NOT_FOUND, CTX = CUDA_ERROR_INVALID_CONTEXT,
              MAP = CUDA_ERROR_MAP_FAILED, AM = CUDA_ERROR_ALREADY_MAPPED, NR = CUDA_ERROR_NOT_READY,
              ILL = CUDA_ERROR_ILLEGAL_STATE,
              PEER = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, SNR = CUDA_ERROR_SYSTEM_NOT_READY;
const std::map<std::string, std::vector<int>> kAllowed = {
    {"cuMemAlloc", {V, M}},
    {"cuMemFree", {V}},
    {"cuMemAllocHost", {V, M}},
    {"cuMemFreeHost", {V}},
    {"cuMemAllocManaged", {V, M, NS}},
    {"cuStreamAttachMemAsync", {V, H, NS}},
    {"cuStreamCreate", {V}},
    {"cuStreamDestroy", {V, H}},
    {"cuStreamSynchronize/Query", {H, NR}},
    {"cuEventCreate", {V}},
    {"cuEventDestroy", {V, H}},
    {"cuEventRecord", {V, H}},
    {"cuEventQuery/ElapsedTime", {V, H, NR}},
    {"cuStreamWaitEvent", {V, H}},
    {"cuMemPoolCreate", {V, M, NS, DEV, NP}},
    {"cuMemPoolDestroy", {V, H}},
    {"cuMemPoolGet/SetAttribute", {V, H}},
    {"cuMemPoolTrimTo", {V, H}},
    {"cuMemAllocAsync/FromPoolAsync", {V, H, M, NS}},
    {"cuMemFreeAsync", {V, H, NS}},
    {"cuMemcpyHtoD", {V, H}},
    {"cuMemcpyDtoH", {V, H}},
    {"cuMemcpyDtoDAsync", {V, H}},
    {"cuMemsetD8Async", {V, H}},
    {"cuMemCreate", {V, M, NS, DEV, NP}},
    {"cuMemRelease", {V, H}},
    {"cuMemAddressReserve", {V, M}},
    {"cuMemAddressFree", {V}},
    {"cuMemMap", {V, H, M, NS, AM}},
    {"cuMemUnmap", {V, H}},
    {"cuMemSetAccess", {V, NS, DEV}},
    {"cuMemExportToShareableHandle", {V, H, NS, NP, SNR}},
    {"cuMemImportFromShareableHandle", {V, NS, NP, UNK, SNR}},
    {"cuMemGetAllocationPropertiesFromHandle", {V}},
    {"cuMemPoolExportToShareableHandle", {V, H, NS, NP, SNR}},
    {"cuMemPoolImportFromShareableHandle", {V, NS, NP, UNK, M, SNR}},
    {"cuMemPoolExportPointer", {V}},
    {"cuMemPoolImportPointer", {V, H, M, AM, NS}},
    {"cuIpcGetMemHandle", {V}},
    {"cuIpcOpenMemHandle", {V, H, M, MAP, PEER, CTX}},
    {"cuIpcGetEventHandle/OpenEventHandle", {V, H, CTX, MAP, M}},
    {"cuImportExternalMemory", {V, M, NS, UNK}},
    {"cuExternalMemoryGetMappedBuffer", {V, H, M}},
    {"cuDestroyExternalMemory", {V, H}},
    {"cuImportExternalSemaphore", {V, NS, UNK}},
    {"cuSignal/WaitExternalSemaphoresAsync", {V, H, NS}},
    {"cuDestroyExternalSemaphore", {V, H}},
    {"cuPointerGetAttribute/cuMemGetAddressRange", {V, NF}},
    {"cudaMalloc", {cudaErrorInvalidValue, cudaErrorMemoryAllocation}},
    {"cudaFree", {cudaErrorInvalidValue}},
    {"cudaStreamCreateWithFlags", {cudaErrorInvalidValue}},
    {"cudaStreamDestroy", {cudaErrorInvalidValue, cudaErrorInvalidResourceHandle}},
    {"cudaEventCreateWithFlags", {cudaErrorInvalidValue}},
    {"cudaEventDestroy", {cudaErrorInvalidValue, cudaErrorInvalidResourceHandle}},
    {"cudaMallocAsync", {cudaErrorInvalidValue, cudaErrorMemoryAllocation, cudaErrorInvalidResourceHandle, cudaErrorNotSupported}},
    {"cudaFreeAsync", {cudaErrorInvalidValue, cudaErrorInvalidResourceHandle, cudaErrorNotSupported}},
    // NVML (its own codes): bad handles and NULLs, short buffers, wrong struct versions (measured:
    // FUNCTION_NOT_FOUND for the memory struct, ARGUMENT_VERSION_MISMATCH for PCI info).
    {"nvmlDeviceGetHandleByIndex_v2", {NVML_ERROR_INVALID_ARGUMENT}},
    {"nvmlDeviceGetName/UUID/Serial", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_INSUFFICIENT_SIZE}},
    {"nvmlDeviceGetMemoryInfo", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_FUNCTION_NOT_FOUND}},
    {"nvmlDeviceGetPciInfoExt", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_ARGUMENT_VERSION_MISMATCH}},
    {"nvmlDeviceGetComputeRunningProcesses_v3", {NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_INSUFFICIENT_SIZE}},
};

void check_allowed(const char* api, int code, const char* name) {
  auto it = kAllowed.find(api);
  if (it == kAllowed.end()) die(api, "has no list of allowed codes in the harness");
  if (std::find(it->second.begin(), it->second.end(), code) == it->second.end())
    die(api, std::string("returned ") + name + ", which is not among the codes it may return");
}

void check_cu(const char* api, CUresult r) {
  ++g_ops;
  g_seen.emplace(api, static_cast<int>(r));
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
    die(api, "returned " + std::to_string(r) + ", a code the driver does not define");
  check_allowed(api, r, name);
  if (cuShimGetLastExplanationCode() != static_cast<int>(r))
    die(api, std::string("failed with ") + name + " but recorded no explanation for it");
}

void check_rt(const char* api, cudaError_t r) {
  ++g_ops;
  g_seen.emplace(api, static_cast<int>(r));
  if (r == cudaSuccess) return;
  const char* name = cudaGetErrorName(r);
  if (!name || std::strstr(name, "unrecognized")) die(api, "returned cudaError_t " + std::to_string(r) + ", undefined");
  check_allowed(api, r, name);
  cudaGetLastError();  // the runtime's sticky-until-read error: read it, as programs do
}

void check_nvml(const char* api, nvmlReturn_t r) {
  ++g_ops;
  g_seen.emplace(api, static_cast<int>(r));
  if (r != NVML_SUCCESS) check_allowed(api, r, nvmlErrorString(r));
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
  eq("contexts", c.contexts, g_base.contexts, 0);
  // The fds the program owns were never closed (or replaced) behind its back.
  for (int fd : S.fds)
    if (!fd_open(fd)) die(after, "closed fd " + std::to_string(fd) + ", which the program owns:" + fd_list());
  // The emulator keeps memfds and its registry open, never a copy of a pipe, socket or device
  // the program handed it.
  for (int fd = 0; fd < 256; ++fd) {
    if (!fd_open(fd) || std::find(S.fds.begin(), S.fds.end(), fd) != S.fds.end() ||
        std::find(g_base_fd_set.begin(), g_base_fd_set.end(), fd) != g_base_fd_set.end())
      continue;
    char link[256] = {}, path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (::readlink(path, link, sizeof link - 1) > 0 &&
        (!std::strncmp(link, "pipe:", 5) || !std::strncmp(link, "socket:", 7) || !std::strcmp(link, "/dev/null")))
      die(after, "left fd " + std::to_string(fd) + " (" + link + ") open, which the program does not own");
  }
}

// ---- Argument pickers ----
struct Picker {
  FuzzedDataProvider& in;

  // A garbage pointer for a handle: small numbers, all ones, a stack or freed heap address, a
  // handle of another kind.
  void* garbage() {
    static int on_stack;
    switch (in.ConsumeIntegralInRange(0, 7)) {
      case 0: return reinterpret_cast<void*>(uintptr_t{0x1234});
      case 1: return reinterpret_cast<void*>(~uintptr_t{0});
      case 2: return &on_stack;
      case 3: {
        void* p = std::malloc(64);
        std::free(p);
        return p;
      }
      case 4: return S.events.empty() ? nullptr : S.events[in.ConsumeIntegral<size_t>() % S.events.size()];
      case 5: return S.streams.empty() ? nullptr : S.streams[in.ConsumeIntegral<size_t>() % S.streams.size()];
      case 6: return S.pools.empty() ? nullptr : S.pools[in.ConsumeIntegral<size_t>() % S.pools.size()];
      default: return reinterpret_cast<void*>(in.ConsumeIntegral<uintptr_t>());
    }
  }
  void* dead() { return S.dead.empty() ? garbage() : S.dead[in.ConsumeIntegral<size_t>() % S.dead.size()]; }

  // live (mostly), destroyed, garbage or NULL
  template <class H>
  H pick(const std::vector<H>& live) {
    int k = in.ConsumeIntegralInRange(0, 15);
    if (k < 11 && !live.empty()) return live[in.ConsumeIntegral<size_t>() % live.size()];
    if (k < 13) return static_cast<H>(dead());
    if (k < 15) return static_cast<H>(garbage());
    return nullptr;
  }
  CUstream stream() {
    switch (in.ConsumeIntegralInRange(0, 7)) {
      case 0: return nullptr;
      case 1: return CU_STREAM_LEGACY;
      case 2: return CU_STREAM_PER_THREAD;
      default: return pick(S.streams);
    }
  }
  size_t size() {
    switch (in.ConsumeIntegralInRange(0, 9)) {
      case 0: return 0;
      case 1: return in.ConsumeIntegral<size_t>();                  // anything, huge included
      case 2: return size_t(2) << 20;                                // one granule
      case 3: return (size_t(2) << 20) * in.ConsumeIntegralInRange(1, 4);
      default: return in.ConsumeIntegralInRange<size_t>(1, 1 << 16);
    }
  }
  // A device address: a live allocation plus an offset, a freed one, or anything.
  CUdeviceptr dptr(size_t* room = nullptr) {
    int k = in.ConsumeIntegralInRange(0, 9);
    if (k < 7 && !S.allocs.empty()) {
      const Alloc& a = S.allocs[in.ConsumeIntegral<size_t>() % S.allocs.size()];
      size_t off = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<size_t>(0, a.size);
      if (room) *room = a.size - off;
      return a.p + off;
    }
    if (room) *room = 4096;
    if (k < 9 && !S.dead_ptrs.empty()) return S.dead_ptrs[in.ConsumeIntegral<size_t>() % S.dead_ptrs.size()];
    return in.ConsumeBool() ? 0 : in.ConsumeIntegral<CUdeviceptr>();
  }
  // A byte count for a copy: within the host buffer, mostly within `room`.
  size_t copy_bytes(size_t room) {
    size_t n = in.ConsumeBool() ? std::min(room, sizeof g_host) : in.ConsumeIntegralInRange<size_t>(0, 8192);
    return std::min(n, sizeof g_host);
  }
  // An fd this program owns (never one of libFuzzer's or the emulator's own), a closed number
  // or a negative one.
  int fd() {
    int k = in.ConsumeIntegralInRange(0, 9);
    if (k < 6 && !S.fds.empty()) return S.fds[in.ConsumeIntegral<size_t>() % S.fds.size()];
    if (k < 8) {  // a number that is closed right now
      int f = ::dup(g_devnull);
      ::close(f);
      return f;
    }
    return k == 8 ? -1 : g_devnull;
  }
  std::vector<unsigned char> blob() {
    std::vector<unsigned char> b(64);
    int k = in.ConsumeIntegralInRange(0, 3);
    if (k < 3 && !S.blobs.empty()) {
      b = S.blobs[in.ConsumeIntegral<size_t>() % S.blobs.size()];
      if (k == 2) b[in.ConsumeIntegralInRange(0, 63)] ^= static_cast<unsigned char>(1u << in.ConsumeIntegralInRange(0, 7));
    } else {
      for (auto& x : b) x = in.ConsumeIntegral<unsigned char>();
    }
    return b;
  }
  void keep_blob(const void* p) {
    if (S.blobs.size() > 16) S.blobs.erase(S.blobs.begin());
    S.blobs.emplace_back(static_cast<const unsigned char*>(p), static_cast<const unsigned char*>(p) + 64);
  }
  CUmemLocation location() {
    CUmemLocation l{};
    static const CUmemLocationType types[] = {CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST,
                                              CU_MEM_LOCATION_TYPE_HOST_NUMA, CU_MEM_LOCATION_TYPE_INVALID};
    int k = in.ConsumeIntegralInRange(0, 6);
    l.type = k < 4 ? types[k == 3 ? 0 : k] : (k == 4 ? types[3] : static_cast<CUmemLocationType>(in.ConsumeIntegral<int>()));
    l.id = in.ConsumeIntegralInRange(0, 3) == 0 ? in.ConsumeIntegral<int>() : in.ConsumeIntegralInRange(0, 1);
    return l;
  }
  CUmemAllocationHandleType handle_types() {
    static const CUmemAllocationHandleType t[] = {CU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                                  CU_MEM_HANDLE_TYPE_FABRIC, CU_MEM_HANDLE_TYPE_WIN32};
    int k = in.ConsumeIntegralInRange(0, 4);
    return k < 4 ? t[k] : static_cast<CUmemAllocationHandleType>(in.ConsumeIntegral<int>());
  }
};

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

// A destroy through a handle that may name a live object of ours (a stale value the allocator
// gave to a new object): on success the object is gone, whichever entry held it.
template <class H>
void destroyed(std::vector<H>& live, H h) {
  erase_value(live, h);
  remember_dead(reinterpret_cast<void*>(h));
}

// ---- One call ----
void step(Picker& pk) {
  FuzzedDataProvider& in = pk.in;
  const char* api = "?";
  switch (in.ConsumeIntegralInRange(0, 47)) {
    case 0: {
      api = "cuMemAlloc";
      CUdeviceptr p = 0;
      size_t n = pk.size();
      CUresult r = cuMemAlloc(&p, n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, n, Alloc::device});
      break;
    }
    case 1: {
      api = "cuMemFree";
      CUdeviceptr p = pk.dptr();
      CUresult r = cuMemFree(p);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) forget_alloc(p);
      break;
    }
    case 2: {
      api = "cuMemAllocHost";
      void* p = nullptr;
      size_t n = pk.size() % (1 << 22);
      CUresult r = cuMemAllocHost(&p, n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({reinterpret_cast<CUdeviceptr>(p), n, Alloc::host});
      break;
    }
    case 3: {
      api = "cuMemFreeHost";
      CUdeviceptr p = pk.dptr();
      CUresult r = cuMemFreeHost(reinterpret_cast<void*>(p));
      check_cu(api, r);
      if (r == CUDA_SUCCESS) forget_alloc(p);
      break;
    }
    case 4: {
      api = "cuMemAllocManaged";
      CUdeviceptr p = 0;
      size_t n = pk.size() % (1 << 22);
      unsigned flags = in.ConsumeBool() ? CU_MEM_ATTACH_GLOBAL : in.ConsumeIntegral<unsigned>() % 8;
      CUresult r = cuMemAllocManaged(&p, n, flags);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, n, Alloc::managed});
      break;
    }
    case 5: {
      api = "cuStreamAttachMemAsync";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      size_t len = in.ConsumeBool() ? 0 : pk.size();
      unsigned flags = in.ConsumeBool() ? (1u << in.ConsumeIntegralInRange(0, 2)) : in.ConsumeIntegral<unsigned>();
      check_cu(api, cuStreamAttachMemAsync(pk.stream(), p, len, flags));
      break;
    }
    case 6: {
      api = "cuStreamCreate";
      CUstream s = nullptr;
      unsigned flags = in.ConsumeBool() ? CU_STREAM_NON_BLOCKING : in.ConsumeIntegral<unsigned>() % 4;
      CUresult r = in.ConsumeBool() ? cuStreamCreate(&s, flags)
                                    : cuStreamCreateWithPriority(&s, flags, in.ConsumeIntegralInRange(-8, 8));
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.streams.push_back(s);
      break;
    }
    case 7: {
      api = "cuStreamDestroy";
      CUstream s = pk.pick(S.streams);
      CUresult r = cuStreamDestroy(s);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.streams, s);
      break;
    }
    case 8: {
      api = "cuStreamSynchronize/Query";
      // Never on a stream that may wait on a semaphore nobody signals: query instead.
      CUstream s = pk.stream();
      CUresult r = S.sems.empty() && in.ConsumeBool() ? cuStreamSynchronize(s) : cuStreamQuery(s);
      check_cu(api, r);
      break;
    }
    case 9: {
      api = "cuEventCreate";
      CUevent e = nullptr;
      unsigned flags = in.ConsumeBool() ? CU_EVENT_DISABLE_TIMING : in.ConsumeIntegral<unsigned>() % 16;
      CUresult r = cuEventCreate(&e, flags);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.events.push_back(e);
      break;
    }
    case 10: {
      api = "cuEventDestroy";
      CUevent e = pk.pick(S.events);
      CUresult r = cuEventDestroy(e);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.events, e);
      break;
    }
    case 11: {
      api = "cuEventRecord";
      check_cu(api, cuEventRecord(pk.pick(S.events), pk.stream()));
      break;
    }
    case 12: {
      api = "cuEventQuery/ElapsedTime";
      float ms = 0;
      CUresult r = in.ConsumeBool() ? cuEventQuery(pk.pick(S.events))
                                    : cuEventElapsedTime(&ms, pk.pick(S.events), pk.pick(S.events));
      check_cu(api, r);
      break;
    }
    case 13: {
      api = "cuStreamWaitEvent";
      check_cu(api, cuStreamWaitEvent(pk.stream(), pk.pick(S.events), in.ConsumeBool() ? 0 : in.ConsumeIntegral<unsigned>()));
      break;
    }
    case 14: {
      api = "cuMemPoolCreate";
      CUmemPoolProps p{};
      p.allocType = in.ConsumeIntegralInRange(0, 7) ? CU_MEM_ALLOCATION_TYPE_PINNED
                                                    : static_cast<CUmemAllocationType>(in.ConsumeIntegral<int>());
      p.handleTypes = pk.handle_types();
      p.location = pk.location();
      p.maxSize = in.ConsumeBool() ? 0 : pk.size();
      if (!in.ConsumeIntegralInRange(0, 7)) p.reserved[in.ConsumeIntegralInRange(0, 53)] = 1;
      CUmemoryPool pool = nullptr;
      CUresult r = cuMemPoolCreate(&pool, &p);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.pools.push_back(pool);
      break;
    }
    case 15: {
      api = "cuMemPoolDestroy";
      CUmemoryPool pool = pk.pick(S.pools);
      CUresult r = cuMemPoolDestroy(pool);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.pools, pool);
      break;
    }
    case 16: {
      api = "cuMemPoolGet/SetAttribute";
      CUmemoryPool pool = pk.pick(S.pools);
      auto attr = static_cast<CUmemPool_attribute>(in.ConsumeIntegralInRange(0, 10));
      cuuint64_t v = in.ConsumeBool() ? 0 : in.ConsumeIntegral<cuuint64_t>();
      int iv = in.ConsumeIntegralInRange(0, 1);
      bool int_attr = attr >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES && attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
      void* val = int_attr ? static_cast<void*>(&iv) : static_cast<void*>(&v);
      if (!in.ConsumeIntegralInRange(0, 15)) val = nullptr;
      check_cu(api, in.ConsumeBool() ? cuMemPoolGetAttribute(pool, attr, val) : cuMemPoolSetAttribute(pool, attr, val));
      break;
    }
    case 17: {
      api = "cuMemPoolTrimTo";
      check_cu(api, cuMemPoolTrimTo(pk.pick(S.pools), in.ConsumeBool() ? 0 : pk.size()));
      break;
    }
    case 18: {
      api = "cuMemAllocAsync/FromPoolAsync";
      CUdeviceptr p = 0;
      size_t n = pk.size();
      CUresult r = in.ConsumeBool() ? cuMemAllocAsync(&p, n, pk.stream())
                                    : cuMemAllocFromPoolAsync(&p, n, pk.pick(S.pools), pk.stream());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, n, Alloc::pool});
      break;
    }
    case 19: {
      api = "cuMemFreeAsync";
      CUdeviceptr p = pk.dptr();
      CUresult r = cuMemFreeAsync(p, pk.stream());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) forget_alloc(p);
      break;
    }
    case 20: {
      api = "cuMemcpyHtoD";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      check_cu(api, cuMemcpyHtoD(p, g_host, pk.copy_bytes(room)));
      break;
    }
    case 21: {
      api = "cuMemcpyDtoH";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      check_cu(api, cuMemcpyDtoH(g_host, p, pk.copy_bytes(room)));
      break;
    }
    case 22: {
      api = "cuMemcpyDtoDAsync";
      size_t r1 = 0, r2 = 0;
      CUdeviceptr a = pk.dptr(&r1), b = pk.dptr(&r2);
      check_cu(api, cuMemcpyDtoDAsync(a, b, pk.copy_bytes(std::min(r1, r2)), pk.stream()));
      break;
    }
    case 23: {
      api = "cuMemsetD8Async";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      check_cu(api, cuMemsetD8Async(p, in.ConsumeIntegral<unsigned char>(), pk.copy_bytes(room), pk.stream()));
      break;
    }
    case 24: {
      api = "cuMemCreate";
      CUmemAllocationProp p{};
      p.type = in.ConsumeIntegralInRange(0, 7) ? CU_MEM_ALLOCATION_TYPE_PINNED
                                               : static_cast<CUmemAllocationType>(in.ConsumeIntegral<int>());
      p.requestedHandleTypes = pk.handle_types();
      p.location = pk.location();
      size_t n = pk.size();
      CUmemGenericAllocationHandle h = 0;
      CUresult r = cuMemCreate(&h, n, &p, in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned long long>());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.vmms.push_back({h, n});
      break;
    }
    case 25: {
      api = "cuMemRelease";
      CUmemGenericAllocationHandle h =
          !S.vmms.empty() && in.ConsumeIntegralInRange(0, 3) ? S.vmms[in.ConsumeIntegral<size_t>() % S.vmms.size()].h
                                                             : reinterpret_cast<CUmemGenericAllocationHandle>(pk.dead());
      CUresult r = cuMemRelease(h);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        S.vmms.erase(std::remove_if(S.vmms.begin(), S.vmms.end(), [&](const Vmm& v) { return v.h == h; }), S.vmms.end());
        remember_dead(reinterpret_cast<void*>(h));
      }
      break;
    }
    case 26: {
      api = "cuMemAddressReserve";
      CUdeviceptr base = 0;
      size_t n = pk.size();
      CUresult r = cuMemAddressReserve(&base, n, in.ConsumeBool() ? 0 : pk.size(), 0, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.res.push_back({base, n, {}, {}});
      break;
    }
    case 27: {
      api = "cuMemAddressFree";
      CUdeviceptr base = !S.res.empty() && in.ConsumeBool() ? S.res[in.ConsumeIntegral<size_t>() % S.res.size()].base : pk.dptr();
      size_t n = 0;
      for (auto& r : S.res)
        if (r.base == base) n = r.size;
      if (!n || !in.ConsumeIntegralInRange(0, 7)) n = pk.size();
      CUresult r = cuMemAddressFree(base, n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS)
        S.res.erase(std::remove_if(S.res.begin(), S.res.end(), [&](const Reservation& x) { return x.base == base; }), S.res.end());
      break;
    }
    case 28: {
      api = "cuMemMap";
      if (S.res.empty() || S.vmms.empty()) break;
      Reservation& rv = S.res[in.ConsumeIntegral<size_t>() % S.res.size()];
      const Vmm& v = S.vmms[in.ConsumeIntegral<size_t>() % S.vmms.size()];
      size_t off = (size_t(2) << 20) * in.ConsumeIntegralInRange(0, 3);
      size_t n = in.ConsumeIntegralInRange(0, 3) ? v.size : pk.size();
      CUresult r = cuMemMap(rv.base + off, n, in.ConsumeIntegralInRange(0, 7) ? 0 : pk.size(), v.h, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        rv.mapped.push_back(rv.base + off);
        rv.mapped_size.push_back(n);
      }
      break;
    }
    case 29: {
      api = "cuMemUnmap";
      if (S.res.empty()) break;
      Reservation& rv = S.res[in.ConsumeIntegral<size_t>() % S.res.size()];
      if (rv.mapped.empty()) break;
      size_t i = in.ConsumeIntegral<size_t>() % rv.mapped.size();
      size_t n = in.ConsumeIntegralInRange(0, 7) ? rv.mapped_size[i] : pk.size();
      CUresult r = cuMemUnmap(rv.mapped[i], n);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        rv.mapped.erase(rv.mapped.begin() + static_cast<long>(i));
        rv.mapped_size.erase(rv.mapped_size.begin() + static_cast<long>(i));
      }
      break;
    }
    case 30: {
      api = "cuMemSetAccess";
      if (S.res.empty()) break;
      Reservation& rv = S.res[in.ConsumeIntegral<size_t>() % S.res.size()];
      CUmemAccessDesc d{};
      d.location = pk.location();
      d.flags = static_cast<CUmemAccess_flags>(in.ConsumeIntegralInRange(0, 4));
      check_cu(api, cuMemSetAccess(rv.base, in.ConsumeBool() ? rv.size : pk.size(), &d, in.ConsumeIntegralInRange(0, 7) ? 1 : 0));
      break;
    }
    case 31: {
      api = "cuMemExportToShareableHandle";
      CUmemGenericAllocationHandle h =
          !S.vmms.empty() && in.ConsumeIntegralInRange(0, 3) ? S.vmms[in.ConsumeIntegral<size_t>() % S.vmms.size()].h
                                                             : reinterpret_cast<CUmemGenericAllocationHandle>(pk.garbage());
      unsigned char out[64] = {};
      int fd = -1;
      auto type = pk.handle_types();
      void* dst = type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ? static_cast<void*>(&fd) : static_cast<void*>(out);
      CUresult r = cuMemExportToShareableHandle(dst, h, type, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) keep_fd(fd);
        else pk.keep_blob(out);
      }
      break;
    }
    case 32: {
      api = "cuMemImportFromShareableHandle";
      CUmemGenericAllocationHandle h = 0;
      auto type = pk.handle_types();
      int fd = pk.fd();
      std::vector<unsigned char> b = pk.blob();
      bool was_open = fd_open(fd);
      void* src = type == CU_MEM_HANDLE_TYPE_FABRIC ? static_cast<void*>(b.data())
                                                    : reinterpret_cast<void*>(static_cast<intptr_t>(fd));
      CUresult r = cuMemImportFromShareableHandle(&h, src, type);
      check_cu(api, r);
      if (was_open && !fd_open(fd)) die(api, "closed the caller's fd (importing never takes it)");
      if (r == CUDA_SUCCESS) S.vmms.push_back({h, 0});
      if (r == CUDA_SUCCESS) {
        size_t sz = 0;
        CUmemAllocationProp prop{};
        check_cu("cuMemGetAllocationPropertiesFromHandle", cuMemGetAllocationPropertiesFromHandle(&prop, h));
        (void)sz;
        S.vmms.back().size = size_t(2) << 20;
      }
      break;
    }
    case 33: {
      api = "cuMemPoolExportToShareableHandle";
      CUmemoryPool pool = pk.pick(S.pools);
      auto type = pk.handle_types();
      int fd = -1;
      unsigned char out[64] = {};
      void* dst = type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ? static_cast<void*>(&fd) : static_cast<void*>(out);
      CUresult r = cuMemPoolExportToShareableHandle(dst, pool, type, 0);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) keep_fd(fd);
        else pk.keep_blob(out);
      }
      break;
    }
    case 34: {
      api = "cuMemPoolImportFromShareableHandle";
      CUmemoryPool pool = nullptr;
      auto type = pk.handle_types();
      int fd = pk.fd();
      std::vector<unsigned char> b = pk.blob();
      bool was_open = fd_open(fd);
      void* src = type == CU_MEM_HANDLE_TYPE_FABRIC ? static_cast<void*>(b.data())
                                                    : reinterpret_cast<void*>(static_cast<intptr_t>(fd));
      CUresult r = cuMemPoolImportFromShareableHandle(&pool, src, type, 0);
      check_cu(api, r);
      if (was_open && !fd_open(fd)) die(api, "closed the caller's fd");
      if (r == CUDA_SUCCESS && std::find(S.pools.begin(), S.pools.end(), pool) == S.pools.end()) S.pools.push_back(pool);
      break;
    }
    case 35: {
      api = "cuMemPoolExportPointer";
      CUmemPoolPtrExportData d{};
      CUresult r = cuMemPoolExportPointer(&d, pk.dptr());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) pk.keep_blob(&d);
      break;
    }
    case 36: {
      api = "cuMemPoolImportPointer";
      CUmemPoolPtrExportData d{};
      std::vector<unsigned char> b = pk.blob();
      std::memcpy(&d, b.data(), 64);
      CUdeviceptr p = 0;
      CUresult r = cuMemPoolImportPointer(&p, pk.pick(S.pools), &d);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, 1, Alloc::pool_imported});
      break;
    }
    case 37: {
      api = "cuIpcGetMemHandle";
      CUipcMemHandle h{};
      CUresult r = cuIpcGetMemHandle(&h, pk.dptr());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) pk.keep_blob(&h);
      break;
    }
    case 38: {
      api = "cuIpcOpenMemHandle";
      CUipcMemHandle h{};
      std::vector<unsigned char> b = pk.blob();
      std::memcpy(&h, b.data(), 64);
      CUdeviceptr p = 0;
      CUresult r = cuIpcOpenMemHandle(&p, h, in.ConsumeBool() ? CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS : in.ConsumeIntegral<unsigned>());
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, 1, Alloc::ipc_opened});
      break;
    }
    case 39: {
      api = "cuIpcGetEventHandle/OpenEventHandle";
      CUipcEventHandle h{};
      if (in.ConsumeBool()) {
        CUresult r = cuIpcGetEventHandle(&h, pk.pick(S.events));
        check_cu(api, r);
        if (r == CUDA_SUCCESS) pk.keep_blob(&h);
      } else {
        std::vector<unsigned char> b = pk.blob();
        std::memcpy(&h, b.data(), 64);
        CUevent e = nullptr;
        CUresult r = cuIpcOpenEventHandle(&e, h);
        check_cu(api, r);
        if (r == CUDA_SUCCESS) S.events.push_back(e);
      }
      break;
    }
    case 40: {
      api = "cuImportExternalMemory";
      CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
      int k = in.ConsumeIntegralInRange(0, 7);
      d.type = k < 6 ? CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD : static_cast<CUexternalMemoryHandleType>(in.ConsumeIntegralInRange(0, 10));
      int src = pk.fd();
      int fd = src >= 0 && fd_open(src) ? ::dup(src) : src;  // ownership may pass: hand over a copy
      d.handle.fd = fd;
      d.size = in.ConsumeBool() ? (size_t(2) << 20) : pk.size();
      d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
      CUexternalMemory m = nullptr;
      CUresult r = cuImportExternalMemory(&m, &d);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        if (d.type == CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD && fd != src && fd_open(fd))
          die(api, "succeeded but left the fd it now owns open in the caller's table");
        S.extmems.push_back(m);
      } else if (fd != src && fd_open(fd)) {
        ::close(fd);  // refused before ownership passed: still ours
      }
      break;
    }
    case 41: {
      api = "cuExternalMemoryGetMappedBuffer";
      CUDA_EXTERNAL_MEMORY_BUFFER_DESC d{};
      d.offset = in.ConsumeBool() ? 0 : pk.size();
      d.size = in.ConsumeBool() ? 4096 : pk.size();
      d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
      CUdeviceptr p = 0;
      CUresult r = cuExternalMemoryGetMappedBuffer(&p, pk.pick(S.extmems), &d);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) S.allocs.push_back({p, static_cast<size_t>(d.size), Alloc::ext_buffer});
      break;
    }
    case 42: {
      api = "cuDestroyExternalMemory";
      CUexternalMemory m = pk.pick(S.extmems);
      CUresult r = cuDestroyExternalMemory(m);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) destroyed(S.extmems, m);
      break;
    }
    case 43: {
      api = "cuImportExternalSemaphore";
      int obj = -1;
      bool timeline = in.ConsumeBool(), fresh = false;
      if (in.ConsumeIntegralInRange(0, 3)) {
        fresh = true;
        if (cuShimExportableSemaphoreCreate(&obj, timeline ? 1 : 0, 0) != CUDA_SUCCESS) die(api, "no semaphore object");
        keep_fd(obj);
        S.sem_object_fds.push_back(obj);
      } else {
        obj = pk.fd();
      }
      CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d{};
      d.type = in.ConsumeIntegralInRange(0, 5) ? (timeline ? CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD
                                                           : CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD)
                                               : static_cast<CUexternalSemaphoreHandleType>(in.ConsumeIntegralInRange(0, 12));
      int fd = obj >= 0 && fd_open(obj) ? ::dup(obj) : obj;
      d.handle.fd = fd;
      d.flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
      CUexternalSemaphore s = nullptr;
      CUresult r = cuImportExternalSemaphore(&s, &d);
      check_cu(api, r);
      const bool clean = fresh && d.type == (timeline ? CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD
                                                      : CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD);
      if (!clean) S.tainted_sem_objects.insert(obj);
      if (r == CUDA_SUCCESS) {
        S.sems.push_back({s, obj, clean, timeline});
      } else if (fd != obj && fd_open(fd)) {
        ::close(fd);  // a refused semaphore import leaves the fd to its caller
      }
      break;
    }
    case 44: {
      api = "cuSignal/WaitExternalSemaphoresAsync";
      Sem* live = S.sems.empty() || !in.ConsumeIntegralInRange(0, 5)
                      ? nullptr
                      : &S.sems[in.ConsumeIntegral<size_t>() % S.sems.size()];
      CUexternalSemaphore s = live ? live->h : static_cast<CUexternalSemaphore>(pk.dead());
      // Arrays of two (the count may be 0, 1 or 2): the second is the same semaphore.
      unsigned n = in.ConsumeIntegralInRange(0, 7) ? 1 : in.ConsumeIntegralInRange(0, 2);
      CUexternalSemaphore ss[2] = {s, s};
      if (in.ConsumeBool()) {
        CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p[2] = {};
        p[0].params.fence.value = p[1].params.fence.value = in.ConsumeIntegralInRange<unsigned long long>(0, 64);
        p[0].flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
        CUresult r = cuSignalExternalSemaphoresAsync(ss, p, n, pk.stream());
        check_cu(api, r);
        if (r == CUDA_SUCCESS && n && live) {
          live->floor = live->pending && live->timeline ? std::min(live->floor, p[0].params.fence.value)
                                                        : p[0].params.fence.value;
          live->pending = true;
        }
      } else {
        CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p[2] = {};
        // Only waits that will end (see Sem); others go to a handle that is not live.
        const bool may_wait = live && live->clean && !S.tainted_sem_objects.count(live->object_fd) &&
                              (live->timeline ? true : live->pending && n <= 1);
        if (!may_wait) {
          CUexternalSemaphore other = static_cast<CUexternalSemaphore>(pk.dead());
          for (const Sem& x : S.sems)
            if (x.h == other) other = nullptr;
          ss[0] = ss[1] = other;
        } else if (!live->timeline && n == 1) {
          live->pending = false;
        }
        const unsigned long long most = may_wait && live->timeline ? (live->pending ? live->floor : 0) : 64;
        p[0].params.fence.value = p[1].params.fence.value = in.ConsumeIntegralInRange<unsigned long long>(0, most);
        p[0].flags = in.ConsumeIntegralInRange(0, 7) ? 0 : in.ConsumeIntegral<unsigned>();
        check_cu(api, cuWaitExternalSemaphoresAsync(ss, p, n, pk.stream()));
      }
      break;
    }
    case 45: {
      api = "cuDestroyExternalSemaphore";
      CUexternalSemaphore s = S.sems.empty() || !in.ConsumeIntegralInRange(0, 3)
                                  ? static_cast<CUexternalSemaphore>(pk.dead())
                                  : S.sems[in.ConsumeIntegral<size_t>() % S.sems.size()].h;
      CUresult r = cuDestroyExternalSemaphore(s);
      check_cu(api, r);
      if (r == CUDA_SUCCESS) {
        S.sems.erase(std::remove_if(S.sems.begin(), S.sems.end(), [&](const Sem& x) { return x.h == s; }), S.sems.end());
        remember_dead(s);
      }
      break;
    }
    case 46: {
      api = "cuPointerGetAttribute/cuMemGetAddressRange";
      size_t room = 0;
      CUdeviceptr p = pk.dptr(&room);
      if (in.ConsumeBool()) {
        unsigned long long v[4] = {};
        check_cu(api, cuPointerGetAttribute(v, static_cast<CUpointer_attribute>(in.ConsumeIntegralInRange(0, 24)), p));
      } else {
        CUdeviceptr base = 0;
        size_t n = 0;
        check_cu(api, cuMemGetAddressRange(&base, &n, p));
      }
      break;
    }
    default: {  // the runtime's forms of the same objects
      switch (in.ConsumeIntegralInRange(0, 8)) {
        case 0: {
          void* p = nullptr;
          size_t n = pk.size();
          cudaError_t r = cudaMalloc(&p, n);
          check_rt("cudaMalloc", r);
          if (r == cudaSuccess) S.allocs.push_back({reinterpret_cast<CUdeviceptr>(p), n, Alloc::device});
          break;
        }
        case 1: {
          CUdeviceptr p = pk.dptr();
          cudaError_t r = cudaFree(reinterpret_cast<void*>(p));
          check_rt("cudaFree", r);
          if (r == cudaSuccess && p) forget_alloc(p);
          break;
        }
        case 7: {  // NVML on fuzzed handles, lengths and versions: its codes, and no byte written past a buffer
          nvmlDevice_t d = nullptr;
          nvmlReturn_t r = nvmlDeviceGetHandleByIndex_v2(in.ConsumeIntegralInRange(0u, 3u), &d);  // 2 devices
          check_nvml("nvmlDeviceGetHandleByIndex_v2", r);
          switch (in.ConsumeIntegralInRange(0, 3)) {  // a foreign handle instead (NVIDIA's NVML crashes on them)
            case 0: d = nullptr; break;
            case 1: d = reinterpret_cast<nvmlDevice_t>(reinterpret_cast<uintptr_t>(d) + 1); break;  // misaligned
            case 2: d = reinterpret_cast<nvmlDevice_t>(uintptr_t{0x1234}); break;
            default: break;
          }
          unsigned char buf[128];
          std::memset(buf, 0xA5, sizeof buf);
          unsigned len = in.ConsumeIntegralInRange(0u, 96u);
          auto guard_ok = [&](size_t from) {
            for (size_t i = from; i < sizeof buf; ++i)
              if (buf[i] != 0xA5) return false;
            return true;
          };
          switch (in.ConsumeIntegralInRange(0, 5)) {
            case 0: check_nvml("nvmlDeviceGetName/UUID/Serial", nvmlDeviceGetName(d, reinterpret_cast<char*>(buf), len)); break;
            case 1: check_nvml("nvmlDeviceGetName/UUID/Serial", nvmlDeviceGetUUID(d, reinterpret_cast<char*>(buf), len)); break;
            case 2: check_nvml("nvmlDeviceGetName/UUID/Serial", nvmlDeviceGetSerial(d, reinterpret_cast<char*>(buf), len)); break;
            case 3: {
              nvmlMemory_v2_t m{};
              m.version = in.ConsumeBool() ? nvmlMemory_v2 : in.ConsumeIntegral<unsigned>();
              check_nvml("nvmlDeviceGetMemoryInfo", in.ConsumeBool() ? nvmlDeviceGetMemoryInfo_v2(d, in.ConsumeBool() ? &m : nullptr)
                                                                     : nvmlDeviceGetMemoryInfo(d, nullptr));
              len = 0;
              break;
            }
            case 4: {
              nvmlPciInfoExt_t e{};
              e.version = in.ConsumeBool() ? nvmlPciInfoExt_v1 : in.ConsumeIntegral<unsigned>();
              check_nvml("nvmlDeviceGetPciInfoExt", nvmlDeviceGetPciInfoExt(d, in.ConsumeBool() ? &e : nullptr));
              len = 0;
              break;
            }
            default: {
              unsigned count = len / sizeof(nvmlProcessInfo_t);  // entries that fit in len bytes
              unsigned given = count;
              auto* infos = in.ConsumeBool() ? reinterpret_cast<nvmlProcessInfo_t*>(buf) : nullptr;
              check_nvml("nvmlDeviceGetComputeRunningProcesses_v3",
                         nvmlDeviceGetComputeRunningProcesses_v3(d, in.ConsumeBool() ? &count : nullptr, infos));
              len = infos ? given * sizeof(nvmlProcessInfo_t) : 0;
              break;
            }
          }
          if (!guard_ok(len)) die("nvml", "wrote past the buffer it was given");
          break;
        }
        case 2: {
          cudaStream_t s = nullptr;
          cudaError_t r = cudaStreamCreateWithFlags(&s, in.ConsumeIntegral<unsigned>() % 3);
          check_rt("cudaStreamCreateWithFlags", r);
          if (r == cudaSuccess) S.streams.push_back(reinterpret_cast<CUstream>(s));
          break;
        }
        case 3: {
          CUstream s = pk.pick(S.streams);
          cudaError_t r = cudaStreamDestroy(reinterpret_cast<cudaStream_t>(s));
          check_rt("cudaStreamDestroy", r);
          if (r == cudaSuccess) destroyed(S.streams, s);
          break;
        }
        case 4: {
          cudaEvent_t e = nullptr;
          cudaError_t r = cudaEventCreateWithFlags(&e, in.ConsumeIntegral<unsigned>() % 8);
          check_rt("cudaEventCreateWithFlags", r);
          if (r == cudaSuccess) S.events.push_back(reinterpret_cast<CUevent>(e));
          break;
        }
        case 5: {
          CUevent e = pk.pick(S.events);
          cudaError_t r = cudaEventDestroy(reinterpret_cast<cudaEvent_t>(e));
          check_rt("cudaEventDestroy", r);
          if (r == cudaSuccess) destroyed(S.events, e);
          break;
        }
        case 6: {
          void* p = nullptr;
          size_t n = pk.size();
          cudaError_t r = cudaMallocAsync(&p, n, reinterpret_cast<cudaStream_t>(pk.stream()));
          check_rt("cudaMallocAsync", r);
          if (r == cudaSuccess) S.allocs.push_back({reinterpret_cast<CUdeviceptr>(p), n, Alloc::pool});
          break;
        }
        default: {
          CUdeviceptr p = pk.dptr();
          cudaError_t r = cudaFreeAsync(reinterpret_cast<void*>(p), reinterpret_cast<cudaStream_t>(pk.stream()));
          check_rt("cudaFreeAsync", r);
          if (r == cudaSuccess && p) forget_alloc(p);
          break;
        }
      }
      api = "runtime";
    }
  }
  check_books(api);
}

// Lets every stream drain: semaphore waits nobody will signal are released first.
void drain() {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    for (int fd : S.sem_object_fds)
      if (fd_open(fd)) cuShimExportableSemaphoreSignal(fd, ~0ull >> 1);
    bool busy = false;
    for (CUstream s : S.streams)
      if (cuStreamQuery(s) == CUDA_ERROR_NOT_READY) busy = true;
    for (CUstream s : {CUstream{nullptr}, CU_STREAM_PER_THREAD})
      if (cuStreamQuery(s) == CUDA_ERROR_NOT_READY) busy = true;
    if (!busy) break;
    if (std::chrono::steady_clock::now() > until) die("cleanup", "a stream never drained");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (cuCtxSynchronize() != CUDA_SUCCESS) {
    // A sticky error would be a bug: nothing here launches kernels.
    die("cuCtxSynchronize", "failed at cleanup");
  }
}

// Releases everything the program holds, then checks that the emulator is back to the start.
void cleanup() {
  drain();
  for (auto& rv : S.res)
    for (size_t i = 0; i < rv.mapped.size(); ++i) cuMemUnmap(rv.mapped[i], rv.mapped_size[i]);
  for (auto& rv : S.res) cuMemAddressFree(rv.base, rv.size);
  for (auto& v : S.vmms) cuMemRelease(v.h);
  // Allocations before their pools; a pointer may be gone already (its pool or memory died).
  for (auto& a : S.allocs) {
    switch (a.kind) {
      case Alloc::host: cuMemFreeHost(reinterpret_cast<void*>(a.p)); break;
      case Alloc::ipc_opened: cuIpcCloseMemHandle(a.p); break;
      case Alloc::pool: case Alloc::pool_imported: cuMemFreeAsync(a.p, nullptr); break;
      default: cuMemFree(a.p); break;
    }
  }
  drain();
  for (CUmemoryPool p : S.pools) cuMemPoolDestroy(p);
  for (CUexternalMemory m : S.extmems) cuDestroyExternalMemory(m);
  for (auto& s : S.sems) cuDestroyExternalSemaphore(s.h);
  for (CUevent e : S.events) cuEventDestroy(e);
  for (CUstream s : S.streams) cuStreamDestroy(s);
  drain();
  for (int fd : S.fds) ::close(fd);
  S = State{S.ctx};
  cuCtxSetCurrent(S.ctx);

  CUshimObjectCounts c = counts();
  auto same = [](const char* what, unsigned long long now, unsigned long long base) {
    if (now != base)
      die("after cleanup", std::string(what) + ": " + std::to_string(now) + " live, " + std::to_string(base) + " before");
  };
  same("streams", c.streams, g_base.streams);
  same("events", c.events, g_base.events);
  same("memory pools", c.memPools, g_base.memPools);
  same("VMM handles", c.vmmHandles, g_base.vmmHandles);
  same("VMM reservations", c.vmmReservations, g_base.vmmReservations);
  same("external memories", c.externalMemories, g_base.externalMemories);
  same("external semaphores", c.externalSemaphores, g_base.externalSemaphores);
  same("arrays", c.arrays, g_base.arrays);
  same("address ranges", c.addressRanges, g_base.addressRanges);
  same("device bytes charged", c.deviceBytesCharged, g_base.deviceBytesCharged);
  size_t free_now = 0, total = 0;
  if (cuMemGetInfo(&free_now, &total) != CUDA_SUCCESS || free_now != g_base_free)
    die("after cleanup", "cuMemGetInfo free " + std::to_string(free_now) + " != " + std::to_string(g_base_free));
  int fds = open_fds();
  if (fds != g_base_fds)
    die("after cleanup", "open fds " + std::to_string(fds) + " != " + std::to_string(g_base_fds) + " before:" + fd_list() + "; before:" + g_base_fd_list);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Settings are read at the first call: two devices, an IMEX channel for fabric handles, pool
  // books verified after every change, a registry of our own.
  setenv("CUDA_SHIM_DEVICES", "2", 0);
  setenv("CUDA_SHIM_IMEX_CHANNEL", "0", 0);
  setenv("CUDA_SHIM_CHECK_POOLS", "1", 0);
  static std::string reg = "cuda-shim-fuzz-" + std::to_string(getpid());
  setenv("CUDA_SHIM_REGISTRY", reg.c_str(), 0);
  setenv("CUDA_SHIM_MANAGED_FAULT", "quiet", 0);
  CUdevice dev = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&S.ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(S.ctx) != CUDA_SUCCESS)
    die("setup", "no context");
  if (nvmlInit_v2() != NVML_SUCCESS) die("setup", "nvmlInit_v2 failed");
  g_devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  // Settle what the first calls create lazily (default pools, the registry, per-thread
  // streams, the runtime's state) before taking the baselines.
  CUdeviceptr p = 0;
  cuMemAllocAsync(&p, 1, nullptr);
  cuMemFreeAsync(p, nullptr);
  cuMemAllocAsync(&p, 1, CU_STREAM_PER_THREAD);
  cuMemFreeAsync(p, CU_STREAM_PER_THREAD);
  CUipcMemHandle h;
  cuMemAlloc(&p, 1);
  cuIpcGetMemHandle(&h, p);
  cuMemFree(p);
  cudaFree(nullptr);
  cuCtxSynchronize();
  cuStreamSynchronize(CU_STREAM_PER_THREAD);
  g_base = counts();
  cuMemGetInfo(&g_base_free, &g_total);
  std::atexit([] {
    std::fprintf(stderr, "fuzz_api: %llu calls checked\n", g_ops);
    // Which codes each call returned: CUDA_SHIM_FUZZ_CODES=file appends "call code name" lines.
    if (const char* f = std::getenv("CUDA_SHIM_FUZZ_CODES"))
      if (FILE* o = std::fopen(f, "a")) {
        for (auto& [api, code] : g_seen) {
          const char* name = nullptr;
          if (!std::strncmp(api.c_str(), "nvml", 4)) name = nvmlErrorString(static_cast<nvmlReturn_t>(code));
          else if (!std::strncmp(api.c_str(), "cuda", 4)) name = cudaGetErrorName(static_cast<cudaError_t>(code));
          else cuGetErrorName(static_cast<CUresult>(code), &name);
          std::fprintf(o, "%s %d %s\n", api.c_str(), code, name ? name : "?");
        }
        std::fclose(o);
      }
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Per input: the fds open before it (libFuzzer's own come and go between inputs: its
  // symbolizer's pipes), the fds it may use (it owns them), its calls, the cleanup checks.
  g_base_fds = open_fds();
  g_base_fd_list = fd_list();
  g_base_fd_set.clear();
  for (int fd = 0; fd < 4096; ++fd)
    if (fcntl(fd, F_GETFD) != -1) g_base_fd_set.push_back(fd);
  int sv[2], pp[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || ::pipe2(pp, O_CLOEXEC) != 0) die("setup", "fds");
  int mfd = ::memfd_create("fuzz-plain", MFD_CLOEXEC);
  if (mfd < 0 || ::ftruncate(mfd, 4 << 20) != 0) die("setup", "memfd");
  S.fds = {sv[0], sv[1], pp[0], pp[1], mfd};
  FuzzedDataProvider in(data, size);
  Picker pk{in};
  for (int n = 0; n < 64 && in.remaining_bytes() > 0; ++n) step(pk);
  cleanup();
  return 0;
}
