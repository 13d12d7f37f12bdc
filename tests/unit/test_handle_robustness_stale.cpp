// Emulator-only: stale handles. The runtime's double destroys and stale handles are
// cudaErrorInvalidResourceHandle; the streams, events and memory of a destroyed context are
// refused; a stale handle never names a new object that happens to take its place. Every call
// answers with the documented code and an explanation naming the object, and afterwards the
// process still works. Double destroys, use after destroy and garbage handles of the driver API:
// test_handle_robustness.cpp.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "handle_robustness.hpp"
#include "unit_common.hpp"

using namespace handle_robustness;

// ---- the runtime's forms --------------------------------------------------------------------
TEST_CASE("the runtime: double destroys and stale handles are cudaErrorInvalidResourceHandle", "[handles][robustness][runtime]") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  cudaStream_t s = nullptr;
  cudaEvent_t e = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaEventCreate(&e) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(cudaEventDestroy(e) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);
  CHECK(says({"cudaStreamDestroy", hex(s), "not a live stream"}));
  CHECK(cudaEventDestroy(e) == cudaErrorInvalidResourceHandle);
  CHECK(says({"cudaEventDestroy", hex(e), "not a live event"}));
  CHECK(cudaStreamSynchronize(s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamQuery(s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamWaitEvent(nullptr, e, 0) == cudaErrorInvalidResourceHandle);
  CHECK(cudaLaunchHostFunc(s, host_fn, nullptr) == cudaErrorInvalidResourceHandle);
  void* p = nullptr;
  CHECK(cudaMallocAsync(&p, 64, s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventRecord(e, nullptr) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventSynchronize(e) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventQuery(e) == cudaErrorInvalidResourceHandle);
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e, e) == cudaErrorInvalidResourceHandle);

  cudaMemPool_t pool = nullptr;
  cudaMemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.location.type = cudaMemLocationTypeDevice;
  REQUIRE(cudaMemPoolCreate(&pool, &pp) == cudaSuccess);
  REQUIRE(cudaMemPoolDestroy(pool) == cudaSuccess);
  CHECK(cudaMemPoolDestroy(pool) == cudaErrorInvalidValue);
  CHECK(says({"not a live memory pool"}));
  uint64_t v = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &v) == cudaErrorInvalidValue);

  primary();
  auto m = reinterpret_cast<cudaExternalMemory_t>(import_memory());
  REQUIRE(cudaDestroyExternalMemory(m) == cudaSuccess);
  CHECK(cudaDestroyExternalMemory(m) == cudaErrorInvalidResourceHandle);
  CHECK(says({"not a live external memory object"}));
  auto sem = reinterpret_cast<cudaExternalSemaphore_t>(import_semaphore());
  REQUIRE(cudaDestroyExternalSemaphore(sem) == cudaSuccess);
  CHECK(cudaDestroyExternalSemaphore(sem) == cudaErrorInvalidResourceHandle);
  CHECK(says({"not a live external semaphore"}));

  void* managed = nullptr;
  REQUIRE(cudaMallocManaged(&managed, 4096) == cudaSuccess);
  CHECK(cudaStreamAttachMemAsync(nullptr, managed, 0, 0) == cudaErrorInvalidValue);
  CHECK(cudaStreamAttachMemAsync(s, managed, 0, cudaMemAttachGlobal) == cudaErrorInvalidResourceHandle);
  CHECK(cudaFree(managed) == cudaSuccess);

  Garbage g;
  for (void* gv : g.values) {
    INFO("garbage " << gv);
    CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(gv)) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventQuery(static_cast<cudaEvent_t>(gv)) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamDestroy(static_cast<cudaStream_t>(gv)) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(gv)) == cudaErrorInvalidResourceHandle);
  }
  // And the runtime still works.
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, 4096) == cudaSuccess);
  std::vector<unsigned char> a(4096, 0x6b), b(4096, 0);
  REQUIRE(cudaMemcpy(d, a.data(), a.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(b.data(), d, b.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(a == b);
  CHECK(cudaFree(d) == cudaSuccess);
}

// ---- objects of a destroyed context ---------------------------------------------------------
TEST_CASE("streams, events and memory of a destroyed context", "[handles][robustness][context]") {
  primary();
  CUcontext prim = nullptr;
  REQUIRE(cuCtxGetCurrent(&prim) == CUDA_SUCCESS);
  CUdevice dev = 0;
  REQUIRE(cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
  CUcontext c = nullptr;
  REQUIRE(cuCtxCreate(&c, nullptr, 0, dev) == CUDA_SUCCESS);
  CUstream s = nullptr;
  CUevent e = nullptr;
  CUdeviceptr d = 0;
  int calls = 0;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&e, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemAlloc(&d, 4096) == CUDA_SUCCESS);
  REQUIRE(cuLaunchHostFunc(s, host_fn, &calls) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(e, s) == CUDA_SUCCESS);
  REQUIRE(cuCtxDestroy(c) == CUDA_SUCCESS);  // waits for its streams' work first
  CHECK(calls == 1);
  REQUIRE(cuCtxSetCurrent(prim) == CUDA_SUCCESS);
  // Its streams went with it.
  CHECK(cuStreamSynchronize(s) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuStreamSynchronize", hex(s), "not a live stream"}));
  CHECK(cuStreamDestroy(s) == CUDA_ERROR_INVALID_HANDLE);
  // So did its memory.
  CHECK(cuMemFree(d) == CUDA_ERROR_INVALID_VALUE);
  // Its event lives on until destroyed, but cannot be recorded on another context's stream.
  CHECK(cuEventQuery(e) == CUDA_SUCCESS);
  CHECK(cuEventSynchronize(e) == CUDA_SUCCESS);
  CHECK(cuEventRecord(e, nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(says({"cuEventRecord", "different contexts"}));
  CHECK(cuStreamWaitEvent(nullptr, e, 0) == CUDA_SUCCESS);  // its record completed
  CHECK(cuEventDestroy(e) == CUDA_SUCCESS);
  CHECK(cuEventDestroy(e) == CUDA_ERROR_INVALID_HANDLE);
  still_works();
}

// ---- stale handles and the new objects that take their place ------------------------------
TEST_CASE("stale event and VMM handles never name a new object", "[handles][robustness]") {
  primary();
  for (int round = 0; round < 64; ++round) {
    CUevent e1 = nullptr, e2 = nullptr;
    REQUIRE(cuEventCreate(&e1, 0) == CUDA_SUCCESS);
    REQUIRE(cuEventDestroy(e1) == CUDA_SUCCESS);
    REQUIRE(cuEventCreate(&e2, 0) == CUDA_SUCCESS);
    CHECK(e2 != e1);
    CHECK(cuEventDestroy(e1) == CUDA_ERROR_INVALID_HANDLE);  // stale: e2 must survive it
    CHECK(cuEventQuery(e2) == CUDA_SUCCESS);
    REQUIRE(cuEventDestroy(e2) == CUDA_SUCCESS);
  }
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  for (int round = 0; round < 16; ++round) {
    CUmemGenericAllocationHandle h1 = 0, h2 = 0;
    REQUIRE(cuMemCreate(&h1, 2 << 20, &p, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(h1) == CUDA_SUCCESS);
    REQUIRE(cuMemCreate(&h2, 2 << 20, &p, 0) == CUDA_SUCCESS);
    CHECK(h2 != h1);
    CHECK(cuMemRelease(h1) == CUDA_ERROR_INVALID_VALUE);  // stale, measured code for a released handle
    CUmemAllocationProp q;
    CHECK(cuMemGetAllocationPropertiesFromHandle(&q, h2) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(h2) == CUDA_SUCCESS);
  }
  // A handle released while mapped comes back the same from cuMemRetainAllocationHandle
  // (measured), and a stale value of another allocation still names nothing.
  CUmemGenericAllocationHandle h = 0, back = 0;
  REQUIRE(cuMemCreate(&h, 2 << 20, &p, 0) == CUDA_SUCCESS);
  CUdeviceptr va = 0;
  REQUIRE(cuMemAddressReserve(&va, 2 << 20, 0, 0, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(va, 2 << 20, 0, h, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);
  REQUIRE(cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(va)) == CUDA_SUCCESS);
  CHECK(back == h);
  CHECK(cuMemRelease(back) == CUDA_SUCCESS);
  CHECK(cuMemUnmap(va, 2 << 20) == CUDA_SUCCESS);
  CHECK(cuMemAddressFree(va, 2 << 20) == CUDA_SUCCESS);
}

// Issue 22, item 4 for every other kind whose handle is its object's address: such objects live
// at addresses never handed out again (core/fresh_alloc.hpp), so a stale handle cannot name the
// object created after it, however many come and go.
TEST_CASE("stale stream, pool, context, array, external memory and semaphore handles never name a new object",
          "[handles][robustness]") {
  primary();
  CUdevice dev = 0;
  REQUIRE(cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
  std::set<void*> seen;
  auto fresh = [&](void* h) { return seen.insert(h).second; };
  CUmemPoolProps pp = pool_props();
  pp.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  for (int round = 0; round < 200; ++round) {
    CUstream s1 = nullptr, s2 = nullptr;
    REQUIRE(cuStreamCreate(&s1, 0) == CUDA_SUCCESS);
    REQUIRE(cuStreamDestroy(s1) == CUDA_SUCCESS);
    REQUIRE(cuStreamCreate(&s2, 0) == CUDA_SUCCESS);
    CHECK(fresh(s1));
    CHECK(cuStreamDestroy(s1) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuStreamQuery(s2) == CUDA_SUCCESS);
    REQUIRE(cuStreamDestroy(s2) == CUDA_SUCCESS);

    CUmemoryPool p1 = nullptr, p2 = nullptr;
    REQUIRE(cuMemPoolCreate(&p1, &pp) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(p1) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolCreate(&p2, &pp) == CUDA_SUCCESS);
    CHECK(fresh(p1));
    CHECK(cuMemPoolDestroy(p1) == CUDA_ERROR_INVALID_VALUE);
    cuuint64_t v = 0;
    CHECK(cuMemPoolGetAttribute(p2, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(p2) == CUDA_SUCCESS);

    CUexternalSemaphore e1 = import_semaphore();
    REQUIRE(cuDestroyExternalSemaphore(e1) == CUDA_SUCCESS);
    CUexternalSemaphore e2 = import_semaphore();
    CHECK(fresh(e1));
    CHECK(cuDestroyExternalSemaphore(e1) == CUDA_ERROR_INVALID_HANDLE);
    REQUIRE(cuDestroyExternalSemaphore(e2) == CUDA_SUCCESS);

    if (round % 8 == 0) {  // the slower kinds, fewer rounds
      CUexternalMemory m1 = import_memory();
      REQUIRE(cuDestroyExternalMemory(m1) == CUDA_SUCCESS);
      CUexternalMemory m2 = import_memory();
      CHECK(fresh(m1));
      CHECK(cuDestroyExternalMemory(m1) == CUDA_ERROR_INVALID_HANDLE);
      // Arrays of their own, and mipmapped arrays that external memory makes.
      CUDA_ARRAY_DESCRIPTOR ad{};
      ad.Width = 64, ad.Height = 8, ad.Format = CU_AD_FORMAT_FLOAT, ad.NumChannels = 1;
      CUarray a1 = nullptr, a2 = nullptr;
      REQUIRE(cuArrayCreate(&a1, &ad) == CUDA_SUCCESS);
      REQUIRE(cuArrayDestroy(a1) == CUDA_SUCCESS);
      REQUIRE(cuArrayCreate(&a2, &ad) == CUDA_SUCCESS);
      CHECK(fresh(a1));
      CHECK(cuArrayDestroy(a1) == CUDA_ERROR_INVALID_HANDLE);
      REQUIRE(cuArrayDestroy(a2) == CUDA_SUCCESS);
      auto md = mip_desc();
      CUmipmappedArray mm1 = nullptr, mm2 = nullptr;
      REQUIRE(cuExternalMemoryGetMappedMipmappedArray(&mm1, m2, &md) == CUDA_SUCCESS);
      CUarray l1 = nullptr, l2 = nullptr;
      REQUIRE(cuMipmappedArrayGetLevel(&l1, mm1, 0) == CUDA_SUCCESS);
      REQUIRE(cuMipmappedArrayDestroy(mm1) == CUDA_SUCCESS);
      REQUIRE(cuExternalMemoryGetMappedMipmappedArray(&mm2, m2, &md) == CUDA_SUCCESS);
      REQUIRE(cuMipmappedArrayGetLevel(&l2, mm2, 0) == CUDA_SUCCESS);
      CHECK(fresh(mm1));
      CHECK(fresh(l1));
      CHECK(cuMipmappedArrayDestroy(mm1) == CUDA_ERROR_INVALID_HANDLE);
      CHECK(cuArrayDestroy(l1) == CUDA_ERROR_INVALID_HANDLE);
      CUDA_ARRAY_DESCRIPTOR got;
      CHECK(cuArrayGetDescriptor(&got, l2) == CUDA_SUCCESS);
      REQUIRE(cuMipmappedArrayDestroy(mm2) == CUDA_SUCCESS);
      REQUIRE(cuDestroyExternalMemory(m2) == CUDA_SUCCESS);

      CUcontext c1 = nullptr, c2 = nullptr;
      REQUIRE(cuCtxCreate(&c1, nullptr, 0, dev) == CUDA_SUCCESS);
      REQUIRE(cuCtxDestroy(c1) == CUDA_SUCCESS);
      REQUIRE(cuCtxCreate(&c2, nullptr, 0, dev) == CUDA_SUCCESS);
      CHECK(fresh(c1));
      CHECK(cuCtxDestroy(c1) == CUDA_ERROR_INVALID_CONTEXT);  // c2 must survive it
      unsigned long long id = 0;
      CHECK(cuCtxGetId(c2, &id) == CUDA_SUCCESS);
      REQUIRE(cuCtxDestroy(c2) == CUDA_SUCCESS);
      primary();
    }
  }
  still_works();
}
