// Logical endpoints (CUDA 13.3) for the conformance tests. The tests reach the entries the way
// NCCL and CCCL do: cuGetProcAddress(name, 13030), so the same source builds against a 13.0
// toolkit (which lacks the declarations: this header supplies them) and runs on any driver.
// Where the driver has no logical endpoints (driver 580 = CUDA 13.0), LE_REQUIRE_API() ends the
// test as passed-by-absence; the absence itself is asserted by test_logical_endpoint_absent.
#pragma once
#define CUDA_SHIM_ENABLE_13030_API 1  // our cuda.h: declare the 13.3 additions
#include <dlfcn.h>
#include <time.h>

#include <stdlib.h>

#include <cstring>
#include <string>

#include "common.hpp"

#if !defined(CUDA_SHIM_CUDA_VERSION_MAX) && CUDA_VERSION < 13030
// NVIDIA's 13.0 headers: the 13.3 ABI (../shared/REAL_DRIVER.md), under the same names.
typedef cuuint32_t CUlogicalEndpointId;
typedef enum CUlogicalEndpointType_enum {
  CU_LOGICAL_ENDPOINT_TYPE_INVALID = 0,
  CU_LOGICAL_ENDPOINT_TYPE_UNICAST = 1,
  CU_LOGICAL_ENDPOINT_TYPE_MULTICAST = 2
} CUlogicalEndpointType;
typedef enum CUlogicalEndpointIpcHandleType_enum {
  CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE = 0,
  CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC = 1
} CUlogicalEndpointIpcHandleType;
typedef enum CUlogicalEndpointFlag_enum {
  CU_LOGICAL_ENDPOINT_FLAG_NONE = 0,
  CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS = 1
} CUlogicalEndpointFlag;
typedef struct CUlogicalEndpointFabricHandle_st {
  unsigned char data[64];
} CUlogicalEndpointFabricHandle;
typedef struct CUlogicalEndpointProp_struct {
  CUlogicalEndpointType type;
  union {
    struct {
      CUdevice device;
    } unicast;
    struct {
      unsigned int numDevices;
    } multicast;
  };
  unsigned long long size;
  unsigned int ipcHandleTypes;
  unsigned int flags;
} CUlogicalEndpointProp;
#endif
static_assert(sizeof(CUlogicalEndpointProp) == 24, "CUlogicalEndpointProp is 24 bytes");
static_assert(sizeof(CUlogicalEndpointFabricHandle) == 64, "fabric handles are 64 bytes");

struct LeApi {
  CUresult (*IdReserve)(CUlogicalEndpointId*, cuuint32_t) = nullptr;
  CUresult (*IdRelease)(CUlogicalEndpointId, cuuint32_t) = nullptr;
  CUresult (*GetLimits)(cuuint64_t*, cuuint64_t*, const CUlogicalEndpointProp*) = nullptr;
  CUresult (*Create)(CUlogicalEndpointId, const CUlogicalEndpointProp*) = nullptr;
  CUresult (*AddDevice)(CUlogicalEndpointId, CUdevice) = nullptr;
  CUresult (*Destroy)(CUlogicalEndpointId) = nullptr;
  CUresult (*BindAddr)(CUlogicalEndpointId, CUdevice, cuuint64_t, void*, cuuint64_t, unsigned long long) = nullptr;
  CUresult (*BindMem)(CUlogicalEndpointId, CUdevice, cuuint64_t, CUmemGenericAllocationHandle, cuuint64_t, cuuint64_t,
                      unsigned long long) = nullptr;
  CUresult (*Unbind)(CUlogicalEndpointId, CUdevice, cuuint64_t, cuuint64_t) = nullptr;
  CUresult (*Export)(void*, CUlogicalEndpointId, CUlogicalEndpointIpcHandleType) = nullptr;
  CUresult (*Import)(CUlogicalEndpointId, const void*, CUlogicalEndpointIpcHandleType) = nullptr;
  CUresult (*Query)(CUlogicalEndpointId, cuuint32_t, int*) = nullptr;
  // Emulator extension (cuda_shim_ext.h), found with dlsym so real-driver builds link too.
  int (*Access)(unsigned, int, unsigned long long, void*, unsigned long long, int) = nullptr;
  bool ok = false;  // all twelve resolved at 13030
};

// Resolves the twelve entries once (cuInit first). Not found is not a failure here.
inline const LeApi& le() {
  static LeApi a = [] {
    LeApi r;
    if (cuInit(0) != CUDA_SUCCESS) return r;
    auto get = [](const char* name, auto& fn) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (cuGetProcAddress(name, &p, 13030, CU_GET_PROC_ADDRESS_DEFAULT, &q) == CUDA_SUCCESS &&
          q == CU_GET_PROC_ADDRESS_SUCCESS)
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      return fn != nullptr;
    };
    r.ok = get("cuLogicalEndpointIdReserve", r.IdReserve) & get("cuLogicalEndpointIdRelease", r.IdRelease) &
           get("cuLogicalEndpointGetLimits", r.GetLimits) & get("cuLogicalEndpointCreate", r.Create) &
           get("cuLogicalEndpointAddDevice", r.AddDevice) & get("cuLogicalEndpointDestroy", r.Destroy) &
           get("cuLogicalEndpointBindAddr", r.BindAddr) & get("cuLogicalEndpointBindMem", r.BindMem) &
           get("cuLogicalEndpointUnbind", r.Unbind) & get("cuLogicalEndpointExport", r.Export) &
           get("cuLogicalEndpointImport", r.Import) & get("cuLogicalEndpointQuery", r.Query);
    r.Access = reinterpret_cast<decltype(r.Access)>(dlsym(RTLD_DEFAULT, "cuShimLogicalEndpointAccess"));
    return r;
  }();
  return a;
}

// Ends a test that needs logical endpoints on a driver without them (driver 580 on the GPU).
#define LE_REQUIRE_API()                                                                   \
  do {                                                                                     \
    if (!le().ok) {                                                                        \
      WARN("this driver has no logical endpoints (they need a CUDA 13.3 driver): skipped"); \
      return;                                                                              \
    }                                                                                      \
  } while (0)

// Declares ndev (the device count) and ends a test that needs n devices where fewer exist.
#define LE_REQUIRE_DEVICES(n)                                     \
  int ndev = 0;                                                   \
  REQUIRE(cuDeviceGetCount(&ndev) == CUDA_SUCCESS);               \
  if (ndev < (n)) {                                               \
    WARN("needs " << (n) << " devices; this machine has " << ndev); \
    return;                                                       \
  }

inline CUlogicalEndpointProp le_unicast(CUdevice dev, unsigned long long size, unsigned ipc = 0, unsigned flags = 0) {
  CUlogicalEndpointProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_LOGICAL_ENDPOINT_TYPE_UNICAST;
  p.unicast.device = dev;
  p.size = size;
  p.ipcHandleTypes = ipc;
  p.flags = flags;
  return p;
}

inline CUlogicalEndpointProp le_multicast(unsigned n, unsigned long long size, unsigned ipc = 0) {
  CUlogicalEndpointProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_LOGICAL_ENDPOINT_TYPE_MULTICAST;
  p.multicast.numDevices = n;
  p.size = size;
  p.ipcHandleTypes = ipc;
  return p;
}

// Polls cuLogicalEndpointQuery over [id, id + n) as NCCL does, with a deadline: returns the
// last call's code, and ready tells whether the range became ready.
inline CUresult le_wait_ready(CUlogicalEndpointId id, unsigned n, bool& ready, int timeout_ms = 10000) {
  ready = false;
  timespec t0{}, t{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int st = 0;
    CUresult r = le().Query(id, n, &st);
    if (r != CUDA_SUCCESS) return r;
    if (st) {
      ready = true;
      return r;
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms) return r;
    struct timespec d = {0, 100000};
    nanosleep(&d, nullptr);
  }
}

// A cuMemCreate allocation of `size` bytes on device dev (or host NUMA node `numa` when >= 0),
// optionally fabric-shareable, mapped read-write for dev; RAII.
struct LeVmm {
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr va = 0;
  size_t size = 0;
  CUresult status = CUDA_ERROR_UNKNOWN;
  LeVmm(CUdevice dev, size_t n, bool fabric, int numa = -1) : size(n) {
    CUmemAllocationProp p;
    std::memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = numa >= 0 ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = numa >= 0 ? numa : dev;
    p.requestedHandleTypes = fabric ? CU_MEM_HANDLE_TYPE_FABRIC : CU_MEM_HANDLE_TYPE_NONE;
    if ((status = cuMemCreate(&h, n, &p, 0)) != CUDA_SUCCESS) return;
    if ((status = cuMemAddressReserve(&va, n, 0, 0, 0)) != CUDA_SUCCESS) return;
    if ((status = cuMemMap(va, n, 0, h, 0)) != CUDA_SUCCESS) return;
    CUmemAccessDesc a;
    std::memset(&a, 0, sizeof a);
    a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.location.id = dev;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    status = cuMemSetAccess(va, n, &a, 1);
  }
  ~LeVmm() {
    if (va) {
      cuMemUnmap(va, size);
      cuMemAddressFree(va, size);
    }
    if (h) cuMemRelease(h);
  }
  LeVmm(const LeVmm&) = delete;
  LeVmm& operator=(const LeVmm&) = delete;
  void* ptr() const { return reinterpret_cast<void*>(va); }
};

// ---- helpers of the one-process tests (test_logical_endpoint.cpp, _bind.cpp, _fabric.cpp) ----
inline cuuint64_t alignment_of(const CUlogicalEndpointProp& p) {
  cuuint64_t a = 0, m = 0;
  REQUIRE_CU(le().GetLimits(&a, &m, &p), CUDA_SUCCESS);
  return a;
}

// Reserved ids, released at the end (after destroying whatever is still associated).
struct Ids {
  CUlogicalEndpointId base = 0;
  unsigned n = 0;
  explicit Ids(unsigned count) : n(count) { REQUIRE_CU(le().IdReserve(&base, count), CUDA_SUCCESS); }
  ~Ids() {
    for (unsigned i = 0; i < n; ++i) le().Destroy(base + i);
    le().IdRelease(base, n);
  }
  CUlogicalEndpointId operator[](unsigned i) const { return base + i; }
};

inline void ready_or_fail(CUlogicalEndpointId id, unsigned n = 1) {
  bool ready = false;
  REQUIRE_CU(le_wait_ready(id, n, ready), CUDA_SUCCESS);
  REQUIRE(ready);
}

// A created unicast endpoint of `size` on dev, seen ready.
inline void make_unicast(CUlogicalEndpointId id, CUdevice dev, unsigned long long size, unsigned ipc = 0) {
  auto p = le_unicast(dev, size, ipc);
  REQUIRE_CU(le().Create(id, &p), CUDA_SUCCESS);
  ready_or_fail(id);
}

#if !CUDA_SHIM_REAL_BACKEND
// Sets an environment knob of the emulator for one scope.
struct Env {
  std::string name, old;
  bool had;
  Env(const char* n, const char* v) : name(n) {
    const char* o = getenv(n);
    had = o != nullptr;
    if (had) old = o;
    if (v)
      setenv(n, v, 1);
    else
      unsetenv(n);
  }
  ~Env() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

inline std::string last_explanation() {
  auto f = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(RTLD_DEFAULT, "cuShimGetLastExplanation"));
  if (!f) return {};
  char buf[1024] = {};
  f(buf, sizeof buf);
  return buf;
}
#endif
