// Managed memory: cuMemAllocManaged / cudaMallocManaged (flags, sizes, failures), how it is
// freed, and cuMemGetInfo. Expected codes and values measured on NVIDIA's driver 580.159.04
// (H200, CUDA 13.0; tools/probe/probe_managed.cpp, keys "alloc.*", "props.*", "edge.*", "huge.*"),
// unless marked otherwise. What managed memory is (host access, copies and memsets, pointer
// attributes, the requested size as its bound, what other memory APIs make of it):
// test_managed_access.cpp; stream attachment: test_managed_attach.cpp; advice, prefetches and
// range queries: test_managed_advise.cpp.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "managed_common.hpp"
#include "multiprocess.hpp"

using namespace managed_conf;

// ---- device attributes ----------------------------------------------------------------------
TEST_CASE("managed memory device attributes", "[managed][attr]") {
  conformance_primary_ctx();
  int v = -77;
  CHECK_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0), CUDA_SUCCESS);
  CHECK(v == 1);
  v = -77;
  CHECK_RT(cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, 0), cudaSuccess);
  CHECK(v == 1);
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  CHECK_RT(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  CHECK(prop.managedMemory == 1);
  bool check_concurrent = true;
#if !CUDA_SHIM_REAL_BACKEND  // a profile knob may describe a GPU without concurrent managed access
  check_concurrent = std::getenv("CUDA_SHIM_CONCURRENT_MANAGED_ACCESS") == nullptr;
#endif
  if (check_concurrent) {
    v = -77;
    CHECK_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0), CUDA_SUCCESS);
    CHECK(v == 1);
    v = -77;
    CHECK_RT(cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, 0), cudaSuccess);
    CHECK(v == 1);
    CHECK(prop.concurrentManagedAccess == 1);
  }
}

// ---- cuMemAllocManaged ----------------------------------------------------------------------
TEST_CASE("cuMemAllocManaged: flags must be CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST", "[managed][alloc]") {
  conformance_primary_ctx();
  for (unsigned f : {0x1u, 0x2u}) {
    INFO("flags " << f);
    CUdeviceptr d = kSentinel;
    REQUIRE_CU(cuMemAllocManaged(&d, 4096, f), CUDA_SUCCESS);
    CHECK(d != 0);
    CHECK(d % (2 * kMiB) == 0);  // measured: a lone allocation starts a 2 MiB chunk
    CHECK_CU(cuMemFree(d), CUDA_SUCCESS);
  }
  // 4 is CU_MEM_ATTACH_SINGLE: stream attachment, not an allocation flag (measured).
  for (unsigned f : {0x0u, 0x3u, 0x4u, 0x5u, 0x6u, 0x7u, 0x8u, 0x10u, 0x80000000u}) {
    INFO("flags " << f);
    CUdeviceptr d = kSentinel;
    CHECK_CU(cuMemAllocManaged(&d, 4096, f), CUDA_ERROR_INVALID_VALUE);
    CHECK(d == 0);  // measured: the output is cleared
  }
}

TEST_CASE("cuMemAllocManaged: size 0", "[managed][alloc]") {
  conformance_primary_ctx();
  for (unsigned f : {0x1u, 0x2u, 0x4u, 0x8u}) {
    INFO("flags " << f);
    CUdeviceptr d = kSentinel;
    CHECK_CU(cuMemAllocManaged(&d, 0, f), CUDA_ERROR_INVALID_VALUE);
    CHECK(d == 0);
  }
}

TEST_CASE("cuMemAllocManaged: NULL dptr", "[managed][alloc]") {
  conformance_primary_ctx();
  CHECK_CU(cuMemAllocManaged(nullptr, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocManaged(nullptr, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAllocManaged(nullptr, 4096, 8), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuMemAllocManaged: the requested size is the allocation's size", "[managed][alloc]") {
  conformance_primary_ctx();
  for (size_t n : {size_t(1), size_t(4096), size_t(4097), 64 * kKiB + 1, 2 * kMiB + 1, 3 * kMiB}) {
    INFO("size " << n);
    Managed m(n);
    CUdeviceptr base = 0;
    size_t size = 0;
    CHECK_CU(cuMemGetAddressRange(&base, &size, m), CUDA_SUCCESS);
    CHECK(base == m.p);
    CHECK(size == n);
    unsigned long long rs = 0;
    CHECK_CU(attr(CU_POINTER_ATTRIBUTE_RANGE_SIZE, m, rs), CUDA_SUCCESS);
    CHECK(rs == n);
  }
}

// As the probe measured it: the primary context made current, then unbound with
// cuCtxSetCurrent(NULL). On a thread of its own, whose context stack holds just that one (a
// stack left deeper by another test would pop to a context still current).
TEST_CASE("cuMemAllocManaged: no current context", "[managed][alloc]") {
  const CUcontext primary = conformance_primary_ctx();
  Managed m(64 * kKiB);
  const CUdeviceptr p = m;
  CUresult set = CUDA_ERROR_UNKNOWN, unset = CUDA_ERROR_UNKNOWN, alloc = CUDA_SUCCESS, managed = CUDA_ERROR_UNKNOWN;
  CUcontext after = primary;
  CUdeviceptr d = kSentinel;
  unsigned long long is_managed = 0;
  std::thread([&] {
    set = cuCtxSetCurrent(primary);
    unset = cuCtxSetCurrent(nullptr);
    cuCtxGetCurrent(&after);
    alloc = cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL);
    managed = attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, p, is_managed);
  }).join();
  REQUIRE_CU(set, CUDA_SUCCESS);
  REQUIRE_CU(unset, CUDA_SUCCESS);
  REQUIRE(after == nullptr);
  CHECK_CU(alloc, CUDA_ERROR_INVALID_CONTEXT);
  CHECK(d == 0);
  // Measured: pointer queries need no context.
  CHECK_CU(managed, CUDA_SUCCESS);
  CHECK(is_managed == 1);
  // A thread that never had a context.
  alloc = CUDA_SUCCESS;
  d = kSentinel;
  std::thread([&] { alloc = cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL); }).join();
  CHECK_CU(alloc, CUDA_ERROR_INVALID_CONTEXT);
  CHECK(d == 0);
}

TEST_CASE("cuMemFree of managed memory needs no current context", "[managed][free]") {
  const CUcontext primary = conformance_primary_ctx();
  CUdeviceptr p = 0, q = 0;
  REQUIRE_CU(cuMemAllocManaged(&p, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocManaged(&q, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CUresult unset = CUDA_ERROR_UNKNOWN, rp = CUDA_ERROR_UNKNOWN, rq = CUDA_ERROR_UNKNOWN;
  CUcontext after = primary;
  std::thread([&] {  // as the probe measured it: made current, then unbound
    cuCtxSetCurrent(primary);
    unset = cuCtxSetCurrent(nullptr);
    cuCtxGetCurrent(&after);
    rp = cuMemFree(p);
  }).join();
  std::thread([&] { rq = cuMemFree(q); }).join();  // a thread that never had a context
  REQUIRE_CU(unset, CUDA_SUCCESS);
  REQUIRE(after == nullptr);
  CHECK_CU(rp, CUDA_SUCCESS);  // measured
  CHECK_CU(rq, CUDA_SUCCESS);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, p, v), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, q, v), CUDA_ERROR_INVALID_VALUE);
}

MP_CHILD(managed_before_init) {
  CUdeviceptr d = kSentinel;
  ch.send_int(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL));
  ch.send_int(d == 0);
  return 0;
}

TEST_CASE("cuMemAllocManaged: before cuInit", "[managed][alloc]") {
  auto c = mp::spawn("managed_before_init");
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_NOT_INITIALIZED);
  CHECK(c.ch.recv_int() == 1);  // measured: out=null
  CHECK(c.wait() == 0);
}

// Far beyond the device and the host together. Asked in a child: it never touches the memory,
// but a driver that granted it would reserve that much address space.
MP_CHILD(managed_huge) {
  child_primary_ctx();
  for (size_t n : {size_t(1) << 50, ~size_t(0)}) {
    CUdeviceptr d = kSentinel;
    CUresult r = cuMemAllocManaged(&d, n, CU_MEM_ATTACH_GLOBAL);
    ch.send_int(r);
    ch.send_int(d == 0);
    if (r == CUDA_SUCCESS) cuMemFree(d);
  }
  void* p = reinterpret_cast<void*>(kSentinel);
  cudaError_t e = cudaMallocManaged(&p, size_t(1) << 50, cudaMemAttachGlobal);
  ch.send_int(e);
  ch.send_int(p == nullptr);
  if (e == cudaSuccess) cudaFree(p);
  return 0;
}

TEST_CASE("cuMemAllocManaged / cudaMallocManaged: more than the machine holds", "[managed][alloc]") {
  auto c = mp::spawn("managed_huge");
  for (const char* n : {"1 << 50", "SIZE_MAX"}) {
    INFO(n);
    CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(c.ch.recv_int() == 1);  // out=null
  }
  CHECK_RT(static_cast<cudaError_t>(c.ch.recv_int()), cudaErrorMemoryAllocation);
  CHECK(c.ch.recv_int() == 1);
  CHECK(c.wait() == 0);
}

// ---- cudaMallocManaged ----------------------------------------------------------------------
TEST_CASE("cudaMallocManaged: flags", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  for (unsigned f : {unsigned(cudaMemAttachGlobal), unsigned(cudaMemAttachHost)}) {
    INFO("flags " << f);
    void* p = nullptr;
    REQUIRE_RT(cudaMallocManaged(&p, 4096, f), cudaSuccess);
    CHECK(p != nullptr);
    CHECK_RT(cudaFree(p), cudaSuccess);
  }
  for (unsigned f : {0u, 3u, 4u, 8u}) {
    INFO("flags " << f);
    void* p = reinterpret_cast<void*>(kSentinel);
    CHECK_RT(cudaMallocManaged(&p, 4096, f), cudaErrorInvalidValue);
    CHECK(p == nullptr);
  }
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);  // not sticky: cleared by the read
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

TEST_CASE("cudaMallocManaged: size 0 succeeds with NULL, before the flags are checked", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  void* p = reinterpret_cast<void*>(kSentinel);
  CHECK_RT(cudaMallocManaged(&p, 0, cudaMemAttachGlobal), cudaSuccess);
  CHECK(p == nullptr);
  p = reinterpret_cast<void*>(kSentinel);
  CHECK_RT(cudaMallocManaged(&p, 0, 8), cudaSuccess);
  CHECK(p == nullptr);
  p = reinterpret_cast<void*>(kSentinel);
  CHECK_RT(cudaMallocManaged(&p, 0), cudaSuccess);  // default flags: cudaMemAttachGlobal
  CHECK(p == nullptr);
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

TEST_CASE("cudaMallocManaged: NULL devPtr", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  CHECK_RT(cudaMallocManaged(nullptr, 4096, cudaMemAttachGlobal), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("cudaMallocManaged: default flags, a one-byte allocation", "[managed][alloc][runtime]") {
  conformance_primary_ctx();
  void* p = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p, 1), cudaSuccess);
  CHECK(reinterpret_cast<uintptr_t>(p) % (2 * kMiB) == 0);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, dp(p), v), CUDA_SUCCESS);
  CHECK(v == 1);
  CHECK_RT(cudaFree(p), cudaSuccess);
  REQUIRE_RT(cudaMallocManaged(&p, 1, cudaMemAttachHost), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaSuccess);
}

// ---- frees ----------------------------------------------------------------------------------
TEST_CASE("cuMemFree of managed memory: only the base, only once", "[managed][free]") {
  conformance_primary_ctx();
  Managed m(kMiB);
  CHECK_CU(cuMemFree(m + 4096), CUDA_ERROR_INVALID_VALUE);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, m, v), CUDA_SUCCESS);  // still alive
  CHECK(v == 1);
  m.host()[4096] = 1;

  CUdeviceptr a = 0;
  REQUIRE_CU(cuMemAllocManaged(&a, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(a), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, a, v), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr b = 0;
  size_t s = 0;
  CHECK_CU(cuMemGetAddressRange(&b, &s, a), CUDA_ERROR_NOT_FOUND);
}

TEST_CASE("cuMemFreeHost of managed memory", "[managed][free]") {
  conformance_primary_ctx();
  Managed m(64 * kKiB);
  CHECK_CU(cuMemFreeHost(vp(m)), CUDA_ERROR_INVALID_VALUE);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, m, v), CUDA_SUCCESS);  // still alive
  CHECK(v == 1);
}

TEST_CASE("cuMemFreeAsync of managed memory", "[managed][free]") {
  conformance_primary_ctx();
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  CUdeviceptr a = 0;
  REQUIRE_CU(cuMemAllocManaged(&a, 64 * kKiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CHECK_CU(cuMemFreeAsync(a, s), CUDA_ERROR_NOT_SUPPORTED);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  unsigned long long v = 0;
  CHECK_CU(attr(CU_POINTER_ATTRIBUTE_IS_MANAGED, a, v), CUDA_SUCCESS);  // still alive
  CHECK(v == 1);
  CHECK_CU(cuMemFree(a), CUDA_SUCCESS);
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("cudaFree and cudaFreeHost of managed memory", "[managed][free][runtime]") {
  conformance_primary_ctx();
  void* p = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p, 64 * kKiB, cudaMemAttachGlobal), cudaSuccess);
  CHECK_RT(cudaFreeHost(p), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaFree(static_cast<char*>(p) + 4096), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaFree(p), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

// ---- cuMemGetInfo ---------------------------------------------------------------------------
// In whole MiB, as the probe printed it: on a real GPU, free memory moves by less now and then.
static long long drop_mib(size_t before, size_t after) {
  return (static_cast<long long>(before) - static_cast<long long>(after)) / static_cast<long long>(kMiB);
}

// Measured: a managed allocation, and the host touching it, take no device memory (prefetching
// it to the device would: test_managed_advise.cpp's business). Nothing else allocates meanwhile.
TEST_CASE("cuMemGetInfo: a managed allocation takes no device memory", "[managed][info]") {
  conformance_primary_ctx();
  size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
  REQUIRE_CU(cuMemGetInfo(&free0, &total), CUDA_SUCCESS);
  {
    Managed big(64 * kMiB);
    REQUIRE_CU(cuMemGetInfo(&free1, &total), CUDA_SUCCESS);
    CHECK(drop_mib(free0, free1) == 0);
    std::memset(big.host(), 1, 64 * kMiB);
    REQUIRE_CU(cuMemGetInfo(&free2, &total), CUDA_SUCCESS);
    CHECK(drop_mib(free0, free2) == 0);
  }
}
