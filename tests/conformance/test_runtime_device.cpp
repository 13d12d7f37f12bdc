// Runtime API: versions, devices, properties, limits, flags, implicit initialization,
// driver entry points. Values asserted exactly are either measured on a real H200
// (.probe/out) or cross-checked against the driver API, so they hold on any GPU.
#include <cstring>
#include <string>
#include <thread>

#include "common.hpp"

namespace {
int device_count() {
  int n = 0;
  REQUIRE_RT(cudaGetDeviceCount(&n), cudaSuccess);
  REQUIRE(n >= 1);
  return n;
}
}  // namespace

TEST_CASE("runtime: versions") {
  int v = -7;
  CHECK_RT(cudaRuntimeGetVersion(&v), cudaSuccess);
  CHECK(v == 13000);
  v = -7;
  CHECK_RT(cudaDriverGetVersion(&v), cudaSuccess);
  CHECK(v >= 13000);
  int cu = 0;
  REQUIRE_CU(cuDriverGetVersion(&cu), CUDA_SUCCESS);
  CHECK(v == cu);
}

TEST_CASE("runtime: version queries with NULL") {
  CHECK_RT(cudaRuntimeGetVersion(nullptr), cudaErrorInvalidValue);
  CHECK_RT(cudaDriverGetVersion(nullptr), cudaErrorInvalidValue);
  CHECK_RT(cudaGetDeviceCount(nullptr), cudaErrorInvalidValue);
  CHECK_RT(cudaGetDevice(nullptr), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("runtime: a new thread starts on device 0") {
  int dev = -7;
  cudaError_t r = cudaErrorUnknown;
  std::thread([&] { r = cudaGetDevice(&dev); }).join();
  CHECK_RT(r, cudaSuccess);
  CHECK(dev == 0);
}

TEST_CASE("runtime: cudaSetDevice out of range") {
  int n = device_count();
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  CHECK_RT(cudaSetDevice(n), cudaErrorInvalidDevice);
  CHECK_RT(cudaSetDevice(-1), cudaErrorInvalidDevice);
  int dev = -7;
  CHECK_RT(cudaGetDevice(&dev), cudaSuccess);
  CHECK(dev == 0);  // the failed calls changed nothing
  cudaGetLastError();
}

TEST_CASE("runtime: cudaSetDevice makes the primary context current") {
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  CUcontext cur = nullptr;
  REQUIRE_CU(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  CUcontext prim = nullptr;
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&prim, 0), CUDA_SUCCESS);
  CHECK(cur == prim);
  unsigned flags = 0;
  int active = 0;
  CHECK_CU(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  CHECK(active == 1);
  CHECK_CU(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

TEST_CASE("runtime: the first runtime call in a thread makes the primary context current") {
  CUcontext cur = reinterpret_cast<CUcontext>(0x1), prim = nullptr;
  cudaError_t r = cudaErrorUnknown;
  std::thread([&] {
    r = cudaFree(nullptr);
    cuCtxGetCurrent(&cur);
  }).join();
  CHECK_RT(r, cudaSuccess);
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&prim, 0), CUDA_SUCCESS);
  CHECK(cur == prim);
  CHECK_CU(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

TEST_CASE("runtime: a current driver context is used by the runtime") {
  int n = device_count();
  int target = n - 1;
  std::thread([&] {
    REQUIRE_CU(cuInit(0), CUDA_SUCCESS);
    CUcontext ctx = nullptr;
    CUctxCreateParams params{};
    REQUIRE_CU(cuCtxCreate(&ctx, &params, 0, target), CUDA_SUCCESS);
    int dev = -7;
    CHECK_RT(cudaGetDevice(&dev), cudaSuccess);
    CHECK(dev == target);
    void* p = nullptr;
    REQUIRE_RT(cudaMalloc(&p, 256), cudaSuccess);
    CUcontext owner = nullptr;
    CHECK_CU(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, reinterpret_cast<CUdeviceptr>(p)),
             CUDA_SUCCESS);
    CHECK(owner == ctx);
    CUcontext cur = nullptr;
    CHECK_CU(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CHECK(cur == ctx);  // the runtime did not replace it with the primary context
    CHECK_RT(cudaFree(p), cudaSuccess);
    CHECK_CU(cuCtxDestroy(ctx), CUDA_SUCCESS);
  }).join();
}

TEST_CASE("runtime: cudaGetDeviceProperties agrees with the attributes") {
  int n = device_count();
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p;
    std::memset(&p, 0x5a, sizeof p);
    REQUIRE_RT(cudaGetDeviceProperties(&p, d), cudaSuccess);
    auto A = [&](cudaDeviceAttr a) {
      int v = -7;
      REQUIRE_RT(cudaDeviceGetAttribute(&v, a, d), cudaSuccess);
      return v;
    };
    char name[256] = {};
    REQUIRE_CU(cuDeviceGetName(name, sizeof name, d), CUDA_SUCCESS);
    CHECK(std::string(p.name) == name);
    CUuuid u;
    REQUIRE_CU(cuDeviceGetUuid(&u, d), CUDA_SUCCESS);
    CHECK(std::memcmp(&p.uuid, &u, 16) == 0);
    size_t total = 0;
    REQUIRE_CU(cuDeviceTotalMem(&total, d), CUDA_SUCCESS);
    CHECK(p.totalGlobalMem == total);
    CHECK(p.luidDeviceNodeMask == 0);  // Linux: no LUID
    CHECK(p.major == A(cudaDevAttrComputeCapabilityMajor));
    CHECK(p.minor == A(cudaDevAttrComputeCapabilityMinor));
    CHECK(p.warpSize == A(cudaDevAttrWarpSize));
    CHECK(p.multiProcessorCount == A(cudaDevAttrMultiProcessorCount));
    CHECK(p.maxThreadsPerBlock == A(cudaDevAttrMaxThreadsPerBlock));
    CHECK(p.maxThreadsDim[0] == A(cudaDevAttrMaxBlockDimX));
    CHECK(p.maxThreadsDim[2] == A(cudaDevAttrMaxBlockDimZ));
    CHECK(p.maxGridSize[0] == A(cudaDevAttrMaxGridDimX));
    CHECK(p.maxGridSize[1] == A(cudaDevAttrMaxGridDimY));
    CHECK(p.sharedMemPerBlock == static_cast<size_t>(A(cudaDevAttrMaxSharedMemoryPerBlock)));
    CHECK(p.sharedMemPerBlockOptin == static_cast<size_t>(A(cudaDevAttrMaxSharedMemoryPerBlockOptin)));
    CHECK(p.totalConstMem == static_cast<size_t>(A(cudaDevAttrTotalConstantMemory)));
    CHECK(p.regsPerBlock == A(cudaDevAttrMaxRegistersPerBlock));
    CHECK(p.memPitch == static_cast<size_t>(A(cudaDevAttrMaxPitch)));
    CHECK(p.textureAlignment == static_cast<size_t>(A(cudaDevAttrTextureAlignment)));
    CHECK(p.l2CacheSize == A(cudaDevAttrL2CacheSize));
    CHECK(p.pciBusID == A(cudaDevAttrPciBusId));
    CHECK(p.pciDeviceID == A(cudaDevAttrPciDeviceId));
    CHECK(p.pciDomainID == A(cudaDevAttrPciDomainId));
    CHECK(p.unifiedAddressing == A(cudaDevAttrUnifiedAddressing));
    CHECK(p.unifiedAddressing == 1);
    CHECK(p.managedMemory == A(cudaDevAttrManagedMemory));
    CHECK(p.concurrentManagedAccess == A(cudaDevAttrConcurrentManagedAccess));
    CHECK(p.canMapHostMemory == 1);
    CHECK(p.maxThreadsPerMultiProcessor == A(cudaDevAttrMaxThreadsPerMultiProcessor));
    CHECK(p.maxBlocksPerMultiProcessor == A(cudaDevAttrMaxBlocksPerMultiprocessor));
    CHECK(p.memoryPoolsSupported == A(cudaDevAttrMemoryPoolsSupported));
    CHECK(p.memoryPoolSupportedHandleTypes == static_cast<unsigned>(A(cudaDevAttrMemoryPoolSupportedHandleTypes)));
    CHECK(p.hostNumaId == A(cudaDevAttrHostNumaId));
    CHECK(p.clusterLaunch == A(cudaDevAttrClusterLaunch));
    for (int r : p.reserved) CHECK(r == 0x5a5a5a5a);  // measured: the runtime leaves reserved untouched
  }
}

TEST_CASE("runtime: cudaGetDeviceProperties with NULL prop") {
  CHECK_RT(cudaGetDeviceProperties(nullptr, 0), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime: cudaGetDeviceProperties with an out-of-range device") {
  cudaDeviceProp p;
  CHECK_RT(cudaGetDeviceProperties(&p, device_count()), cudaErrorInvalidDevice);  // measured
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidDevice);
}

TEST_CASE("runtime: cudaDeviceGetAttribute with an unknown attribute or device") {
  int v = -7;
  CHECK_RT(cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(0), 0), cudaErrorInvalidValue);  // measured
  CHECK_RT(cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(9999), 0), cudaErrorInvalidValue);
  CHECK(v == -7);
  CHECK_RT(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, device_count()), cudaErrorInvalidDevice);
  CHECK(v == -7);
  CHECK_RT(cudaDeviceGetAttribute(nullptr, cudaDevAttrWarpSize, 0), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("runtime: PCI bus id round trip") {
  int n = device_count();
  for (int d = 0; d < n; ++d) {
    char id[64] = {};
    REQUIRE_RT(cudaDeviceGetPCIBusId(id, sizeof id, d), cudaSuccess);
    CHECK(std::strlen(id) == 12);  // dddd:bb:dd.f
    int back = -7;
    CHECK_RT(cudaDeviceGetByPCIBusId(&back, id), cudaSuccess);
    CHECK(back == d);
  }
}

TEST_CASE("runtime: cudaDeviceCanAccessPeer of a device with itself") {
  int can = -7;
  CHECK_RT(cudaDeviceCanAccessPeer(&can, 0, 0), cudaSuccess);
  CHECK(can == 0);
}

TEST_CASE("runtime: stream priority range") {
  int least = 77, greatest = 77;
  CHECK_RT(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  CHECK(least == 0);      // measured
  CHECK(greatest == -5);  // measured
}

TEST_CASE("runtime: limits") {
  size_t v = 0;
  CHECK_RT(cudaDeviceGetLimit(&v, cudaLimitStackSize), cudaSuccess);
  CHECK(v > 0);
  REQUIRE_RT(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16u << 20), cudaSuccess);
  CHECK_RT(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize), cudaSuccess);
  CHECK(v >= (16u << 20));
}

TEST_CASE("runtime: device flags") {
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  REQUIRE_RT(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync), cudaSuccess);
  unsigned f = 0;
  CHECK_RT(cudaGetDeviceFlags(&f), cudaSuccess);
  CHECK((f & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync);
  CHECK_RT(cudaSetDeviceFlags(cudaDeviceScheduleAuto), cudaSuccess);
}

TEST_CASE("runtime: cudaSetDeviceFlags with unknown bits") {
  CHECK_RT(cudaSetDeviceFlags(0x100), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("runtime: cudaInitDevice") {
  CHECK_RT(cudaInitDevice(0, 0, 0), cudaSuccess);
  CHECK_RT(cudaInitDevice(device_count(), 0, 0), cudaErrorInvalidDevice);
  cudaGetLastError();
}

TEST_CASE("runtime: driver entry points") {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult st = static_cast<cudaDriverEntryPointQueryResult>(77);
  REQUIRE_RT(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 13000, cudaEnableDefault, &st), cudaSuccess);
  CHECK(st == cudaDriverEntryPointSuccess);
  void* cu = nullptr;
  CUdriverProcAddressQueryResult cst;
  REQUIRE_CU(cuGetProcAddress("cuMemAlloc", &cu, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &cst), CUDA_SUCCESS);
  CHECK(fn == cu);
  CHECK(fn != nullptr);

  // Measured: per-thread flag selects the _ptsz variant, the legacy flag the plain one.
  void* legacy = nullptr;
  void* pt = nullptr;
  REQUIRE_RT(cudaGetDriverEntryPointByVersion("cuMemcpyAsync", &legacy, 13000, cudaEnableLegacyStream, &st), cudaSuccess);
  REQUIRE_RT(cudaGetDriverEntryPointByVersion("cuMemcpyAsync", &pt, 13000, cudaEnablePerThreadDefaultStream, &st),
             cudaSuccess);
  CHECK(legacy != nullptr);
  CHECK(pt != nullptr);
  CHECK(legacy != pt);
  void* cupt = nullptr;
  REQUIRE_CU(cuGetProcAddress("cuMemcpyAsync", &cupt, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &cst),
             CUDA_SUCCESS);
  CHECK(pt == cupt);
}

TEST_CASE("runtime: driver entry point of a name that does not exist") {
  void* fn = reinterpret_cast<void*>(0x1234);
  cudaDriverEntryPointQueryResult st = static_cast<cudaDriverEntryPointQueryResult>(77);
  CHECK_RT(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 13000, cudaEnableDefault, &st), cudaSuccess);
  CHECK(st == cudaDriverEntryPointSymbolNotFound);  // measured
  CHECK(fn == nullptr);
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

// Last: resets device 0.
TEST_CASE("runtime: cudaDeviceReset, then the next call initializes again") {
  REQUIRE_RT(cudaSetDevice(0), cudaSuccess);
  void* p = nullptr;
  REQUIRE_RT(cudaMalloc(&p, 64), cudaSuccess);
  CHECK_RT(cudaDeviceReset(), cudaSuccess);
  unsigned flags = 77;
  int active = 77;
  CHECK_CU(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  CHECK(active == 0);  // measured
  CHECK(flags == 0);   // measured: reset also clears the flags
  CHECK_RT(cudaFree(nullptr), cudaSuccess);
  CHECK_CU(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
  CHECK(active == 1);
  void* q = nullptr;
  CHECK_RT(cudaMalloc(&q, 64), cudaSuccess);
  CHECK_RT(cudaFree(q), cudaSuccess);
}
