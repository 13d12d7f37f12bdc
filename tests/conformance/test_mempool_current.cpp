// Default and current pools: cuDeviceGet/SetMemPool, cuDeviceGetDefaultMemPool and the
// CUDA 13 location forms cuMemGetDefaultMemPool / cuMemGetMemPool / cuMemSetMemPool.
#include "pool_common.hpp"
#include "real_answers.hpp"

namespace {
CUmemoryPool device_default(int dev = 0) {
  CUmemoryPool p = nullptr;
  REQUIRE_CU(cuDeviceGetDefaultMemPool(&p, dev), CUDA_SUCCESS);
  return p;
}
CUmemoryPool device_current(int dev = 0) {
  CUmemoryPool p = nullptr;
  REQUIRE_CU(cuDeviceGetMemPool(&p, dev), CUDA_SUCCESS);
  return p;
}
CUmemoryPool location_default(CUmemLocationType t, int id, CUmemAllocationType type) {
  CUmemLocation l{t, id};
  CUmemoryPool p = nullptr;
  REQUIRE_CU(cuMemGetDefaultMemPool(&p, &l, type), CUDA_SUCCESS);
  return p;
}
CUmemoryPool location_current(CUmemLocationType t, int id, CUmemAllocationType type) {
  CUmemLocation l{t, id};
  CUmemoryPool p = nullptr;
  REQUIRE_CU(cuMemGetMemPool(&p, &l, type), CUDA_SUCCESS);
  return p;
}
}  // namespace

TEST_CASE("a device's current pool is its default pool until cuDeviceSetMemPool", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool def = device_default();
  REQUIRE(def != nullptr);
  CHECK(device_current() == def);
  // The default pool's attributes (measured).
  CHECK(pool_attr(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 0);
  int v = -1;
  CHECK_CU(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &v), CUDA_SUCCESS);
  CHECK(v == 1);
  CHECK_CU(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v), CUDA_SUCCESS);
  CHECK(v == 1);
  CHECK_CU(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &v), CUDA_SUCCESS);
  CHECK(v == 1);
  CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CUmemLocation dev0{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CHECK_CU(cuMemPoolGetAccess(&f, def, &dev0), CUDA_SUCCESS);
  CHECK(f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
}

TEST_CASE("cuMemAllocAsync allocates from the pool set with cuDeviceSetMemPool", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool def = device_default();
  ScopedPool mine(pool_props());
  REQUIRE_CU(cuDeviceSetMemPool(0, mine), CUDA_SUCCESS);
  CHECK(device_current() == mine);
  CHECK(location_current(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_PINNED) == mine);
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocAsync(&d, 1000, nullptr), CUDA_SUCCESS);
  CHECK(used(mine) == 1000);
  CUmemoryPool owner = nullptr;
  CHECK_CU(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d), CUDA_SUCCESS);
  CHECK(owner == mine);
  CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuDeviceSetMemPool(0, def), CUDA_SUCCESS);
  CHECK(device_current() == def);
}

TEST_CASE("destroying a device's current pool makes its default pool current again", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool def = device_default();
  CUmemPoolProps p = pool_props();
  CUmemoryPool mine = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&mine, &p), CUDA_SUCCESS);
  REQUIRE_CU(cuDeviceSetMemPool(0, mine), CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolDestroy(mine), CUDA_SUCCESS);
  CHECK(device_current() == def);
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocAsync(&d, 64, nullptr), CUDA_SUCCESS);
  CUmemoryPool owner = nullptr;
  CHECK_CU(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d), CUDA_SUCCESS);
  CHECK(owner == def);
  CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
}

TEST_CASE("cuDeviceSetMemPool accepts only pools that hold that device's memory", "[mempool]") {
  conformance_primary_ctx();
  ScopedPool host(pool_props(CU_MEM_LOCATION_TYPE_HOST, 0));
  ScopedPool numa(pool_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0));
  CHECK_CU(cuDeviceSetMemPool(0, host), REAL_CU("pool.conf.current.dev_set.host_pool"));
  CHECK_CU(cuDeviceSetMemPool(0, numa), REAL_CU("pool.conf.current.dev_set.numa_pool"));
  CHECK(device_current() == device_default());
}

TEST_CASE("cuDeviceSetMemPool with a managed pool of the device sets its current managed pool", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool def = device_default();
  CUmemoryPool managed_def = location_default(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
  ScopedPool managed(pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED));
  CHECK_CU(cuDeviceSetMemPool(0, managed), CUDA_SUCCESS);
  CHECK(device_current() == def);  // the pinned current pool is unchanged
  CHECK(location_current(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED) == managed);
  // cuMemAllocAsync still allocates pinned device memory.
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocAsync(&d, 100, nullptr), CUDA_SUCCESS);
  int is_managed = -1;
  CHECK_CU(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d), CUDA_SUCCESS);
  CHECK(is_managed == 0);
  CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CHECK_CU(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_MANAGED, managed_def), CUDA_SUCCESS);
}

TEST_CASE("cuDeviceSetMemPool with an invalid device is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CHECK_CU(cuDeviceSetMemPool(99, device_default()), REAL_CU("pool.conf.current.dev_set.device_99"));
}

TEST_CASE("cuDeviceSetMemPool with a NULL pool is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CHECK_CU(cuDeviceSetMemPool(0, nullptr), REAL_CU("pool.conf.current.dev_set.null_pool"));
}

TEST_CASE("cuDeviceGetDefaultMemPool with an invalid device is CUDA_ERROR_INVALID_DEVICE", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool p = nullptr;
  CHECK_CU(cuDeviceGetDefaultMemPool(&p, -1), REAL_CU("pool.conf.current.dev_default.device_neg"));
  CHECK_CU(cuDeviceGetDefaultMemPool(&p, 99), REAL_CU("pool.conf.current.dev_default.device_99"));
}

TEST_CASE("cuDeviceGetDefaultMemPool with NULL output is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CHECK_CU(cuDeviceGetDefaultMemPool(nullptr, 0), REAL_CU("pool.conf.current.dev_default.null_out"));
}

TEST_CASE("cuDeviceGetMemPool with an invalid device is CUDA_ERROR_INVALID_VALUE", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool p = nullptr;
  CHECK_CU(cuDeviceGetMemPool(&p, 99), REAL_CU("pool.conf.current.dev_get.device_99"));
  CHECK_CU(cuDeviceGetMemPool(nullptr, 0), REAL_CU("pool.conf.current.dev_get.null_out"));
}

TEST_CASE("default pools per location and allocation type", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool dev_pinned = location_default(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_PINNED);
  CHECK(dev_pinned == device_default());
  CUmemoryPool dev_managed = location_default(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
  CUmemoryPool host = location_default(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_PINNED);
  CUmemoryPool host42 = location_default(CU_MEM_LOCATION_TYPE_HOST, 42, CU_MEM_ALLOCATION_TYPE_PINNED);
  CUmemoryPool numa0 = location_default(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_ALLOCATION_TYPE_PINNED);
  CUmemoryPool none_managed = location_default(CU_MEM_LOCATION_TYPE_NONE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
  CUmemoryPool host_managed = location_default(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
  CHECK(dev_managed != dev_pinned);
  CHECK(host != dev_pinned);
  CHECK(host42 == host);  // the id of a HOST location is ignored
  CHECK(numa0 != host);
  CHECK(none_managed != dev_managed);
  CHECK(host_managed != host);
  // The host default pool serves host memory the CPU can touch.
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&d, 100, host, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  unsigned t = 0;
  CHECK_CU(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d), CUDA_SUCCESS);
  CHECK(t == CU_MEMORYTYPE_HOST);
  reinterpret_cast<volatile char*>(d)[99] = 1;
  CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
}

TEST_CASE("cuMemGetDefaultMemPool rejects locations that have no pool", "[mempool]") {
  conformance_primary_ctx();
  CUmemoryPool p = nullptr;
  struct Row {
    const char* name;
    CUmemLocation loc;
    CUmemAllocationType type;
    CUresult expected;
  };
  const Row rows[] = {
      {"HOST_NUMA_CURRENT", {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0}, CU_MEM_ALLOCATION_TYPE_PINNED,
       REAL_CU("pool.conf.current.get_default.numa_current")},
      {"location type 9", {static_cast<CUmemLocationType>(9), 0}, CU_MEM_ALLOCATION_TYPE_PINNED,
       REAL_CU("pool.conf.current.get_default.location_type_9")},
      {"device 99", {CU_MEM_LOCATION_TYPE_DEVICE, 99}, CU_MEM_ALLOCATION_TYPE_PINNED, REAL_CU("pool.conf.current.get_default.device_99")},
      // A literal: whether NUMA node 5 exists is the machine's (or the profile's), not a rule to record.
      {"host NUMA 5", {CU_MEM_LOCATION_TYPE_HOST_NUMA, 5}, CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_INVALID_VALUE},
      {"no location, pinned", {CU_MEM_LOCATION_TYPE_NONE, 0}, CU_MEM_ALLOCATION_TYPE_PINNED, REAL_CU("pool.conf.current.get_default.none_pinned")},
      {"allocation type INVALID", {CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ALLOCATION_TYPE_INVALID,
       REAL_CU("pool.conf.current.get_default.type_invalid")},
      {"allocation type 3", {CU_MEM_LOCATION_TYPE_DEVICE, 0}, static_cast<CUmemAllocationType>(3),
       REAL_CU("pool.conf.current.get_default.type_3")},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    CUmemLocation l = r.loc;
    CHECK_CU(cuMemGetDefaultMemPool(&p, &l, r.type), r.expected);
  }
  CUmemLocation l{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CHECK_CU(cuMemGetDefaultMemPool(nullptr, &l, CU_MEM_ALLOCATION_TYPE_PINNED), REAL_CU("pool.conf.current.get_default.null_out"));
  CHECK_CU(cuMemGetDefaultMemPool(&p, nullptr, CU_MEM_ALLOCATION_TYPE_PINNED), REAL_CU("pool.conf.current.get_default.null_location"));
  CUmemLocation none{CU_MEM_LOCATION_TYPE_NONE, 0};
  CHECK_CU(cuMemGetMemPool(&p, &none, CU_MEM_ALLOCATION_TYPE_PINNED), REAL_CU("pool.conf.current.get.none_pinned"));
  CHECK_CU(cuMemGetMemPool(&p, &none, CU_MEM_ALLOCATION_TYPE_MANAGED), CUDA_SUCCESS);
}

TEST_CASE("cuMemSetMemPool needs a pool of exactly that location and allocation type", "[mempool]") {
  conformance_primary_ctx();
  ScopedPool host(pool_props(CU_MEM_LOCATION_TYPE_HOST, 0));
  ScopedPool numa(pool_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0));
  ScopedPool dev(pool_props());
  ScopedPool managed(pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED));
  CUmemLocation h{CU_MEM_LOCATION_TYPE_HOST, 0}, n{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
  CUmemLocation d{CU_MEM_LOCATION_TYPE_DEVICE, 0}, none{CU_MEM_LOCATION_TYPE_NONE, 0};
  CHECK_CU(cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_PINNED, dev), REAL_CU("pool.conf.current.set.host_pinned_device_pool"));
  CHECK_CU(cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_MANAGED, host), REAL_CU("pool.conf.current.set.host_managed_host_pool"));
  CHECK_CU(cuMemSetMemPool(&n, CU_MEM_ALLOCATION_TYPE_PINNED, host), REAL_CU("pool.conf.current.set.numa_pinned_host_pool"));
  CHECK_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_PINNED, host), REAL_CU("pool.conf.current.set.device_pinned_host_pool"));
  CHECK_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_PINNED, managed), REAL_CU("pool.conf.current.set.device_pinned_managed_pool"));
  CHECK_CU(cuMemSetMemPool(&none, CU_MEM_ALLOCATION_TYPE_MANAGED, managed), REAL_CU("pool.conf.current.set.none_managed_managed_pool"));
  CHECK_CU(cuMemSetMemPool(nullptr, CU_MEM_ALLOCATION_TYPE_PINNED, dev), REAL_CU("pool.conf.current.set.null_location"));
  CHECK_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_PINNED, nullptr), REAL_CU("pool.conf.current.set.null_pool"));

  CHECK_CU(cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_PINNED, host), CUDA_SUCCESS);
  CHECK(location_current(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_PINNED) == host);
  CHECK_CU(cuMemSetMemPool(&n, CU_MEM_ALLOCATION_TYPE_PINNED, numa), CUDA_SUCCESS);
  CHECK(location_current(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_ALLOCATION_TYPE_PINNED) == numa);
  // The device's pinned current pool is what cuDeviceGetMemPool reports.
  CHECK_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_PINNED, dev), CUDA_SUCCESS);
  CHECK(device_current() == dev.pool);
  CHECK_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_MANAGED, managed), CUDA_SUCCESS);
  CHECK(location_current(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED) == managed);
  // Restore the defaults; destroying a current pool would also revert each location.
  CHECK_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_PINNED, device_default()), CUDA_SUCCESS);
}

TEST_CASE("destroying a host or managed location's current pool makes device 0's default pool current there",
          "[mempool]") {
  // Measured on driver 580: a non-device location whose current pool is destroyed gets
  // device 0's default pinned pool as its current pool (when that pool exists, as it
  // does here), so allocations from "the host's current pool" then return device memory.
  conformance_primary_ctx();
  CUmemoryPool dev_def = device_default();  // make sure it exists
  CUmemPoolProps hp = pool_props(CU_MEM_LOCATION_TYPE_HOST, 0);
  CUmemPoolProps mp = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
  CUmemoryPool host = nullptr, man = nullptr;
  REQUIRE_CU(cuMemPoolCreate(&host, &hp), CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolCreate(&man, &mp), CUDA_SUCCESS);
  CUmemLocation h{CU_MEM_LOCATION_TYPE_HOST, 0}, d{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  REQUIRE_CU(cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_PINNED, host), CUDA_SUCCESS);
  REQUIRE_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_MANAGED, man), CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolDestroy(host), CUDA_SUCCESS);
  CHECK(location_current(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_PINNED) == dev_def);
  CHECK(location_current(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED) == man);
  REQUIRE_CU(cuMemPoolDestroy(man), CUDA_SUCCESS);
  CHECK(location_current(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED) == dev_def);
  CUmemoryPool cur = location_current(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_PINNED);
  CUdeviceptr x = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, 64, cur, nullptr), CUDA_SUCCESS);
  unsigned t = 0;
  CHECK_CU(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, x), CUDA_SUCCESS);
  CHECK(t == CU_MEMORYTYPE_DEVICE);
  CHECK_CU(cuMemFreeAsync(x, nullptr), CUDA_SUCCESS);
  // Put the defaults back for the tests that follow.
  CHECK_CU(cuMemSetMemPool(&h, CU_MEM_ALLOCATION_TYPE_PINNED,
                           location_default(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ALLOCATION_TYPE_PINNED)),
           CUDA_SUCCESS);
  CHECK_CU(cuMemSetMemPool(&d, CU_MEM_ALLOCATION_TYPE_MANAGED,
                           location_default(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED)),
           CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
}

TEST_CASE("the second device's pools: local only, and usable from any device's stream", "[mempool][multi-gpu]") {
  conformance_primary_ctx();
  if (device_count() < 2) {
    SUCCEED("one device: nothing to check");
    return;
  }
  ScopedPool p1(pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 1));
  ScopedPool p0(pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0));
  // Literal codes: these need a second device, and the recorded machine has one.
  CHECK_CU(cuDeviceSetMemPool(0, p1), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuDeviceSetMemPool(1, p0), CUDA_ERROR_INVALID_VALUE);
  CHECK(device_default(1) != device_default(0));
  // A stream of device 0 allocates from device 1's pool; the memory is device 1's.
  CUdeviceptr d = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&d, 4096, p1, nullptr), CUDA_SUCCESS);
  int ordinal = -5;
  CHECK_CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d), CUDA_SUCCESS);
  CHECK(ordinal == 1);
  CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);
  // cuMemAllocAsync uses the current pool of the stream's device, not the context's.
  CUcontext c1 = nullptr, c0 = nullptr;
  REQUIRE_CU(cuCtxGetCurrent(&c0), CUDA_SUCCESS);
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&c1, 1), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(c1), CUDA_SUCCESS);
  CUstream s1 = nullptr;
  REQUIRE_CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(c0), CUDA_SUCCESS);
  REQUIRE_CU(cuMemAllocAsync(&d, 100, s1), CUDA_SUCCESS);
  CHECK_CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d), CUDA_SUCCESS);
  CHECK(ordinal == 1);
  CHECK_CU(cuMemFreeAsync(d, nullptr), CUDA_SUCCESS);  // freed on another device's stream
  CHECK_CU(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s1), CUDA_SUCCESS);
  CHECK_CU(cuStreamDestroy(s1), CUDA_SUCCESS);
  CHECK_CU(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}

TEST_CASE("runtime: default and current pools", "[mempool][runtime]") {
  cudaMemPool_t def = nullptr, cur = nullptr;
  REQUIRE_RT(cudaDeviceGetDefaultMemPool(&def, 0), cudaSuccess);
  REQUIRE_RT(cudaDeviceGetMemPool(&cur, 0), cudaSuccess);
  CHECK(def == cur);
  CHECK(reinterpret_cast<CUmemoryPool>(def) == device_default());
  CHECK_RT(cudaDeviceGetDefaultMemPool(&def, 99), REAL_RT("pool.conf.current.rt.dev_default.device_99"));
  CHECK_RT(cudaDeviceGetDefaultMemPool(&def, -1), REAL_RT("pool.conf.current.rt.dev_default.device_neg"));
  CHECK_RT(cudaDeviceGetDefaultMemPool(nullptr, 0), REAL_RT("pool.conf.current.rt.dev_default.null_out"));
  CHECK_RT(cudaDeviceGetMemPool(&cur, 99), REAL_RT("pool.conf.current.rt.dev_get.device_99"));
  CHECK_RT(cudaDeviceGetMemPool(nullptr, 0), REAL_RT("pool.conf.current.rt.dev_get.null_out"));
  CHECK_RT(cudaDeviceSetMemPool(0, nullptr), REAL_RT("pool.conf.current.rt.dev_set.null_pool"));
  CHECK_RT(cudaDeviceSetMemPool(99, def), REAL_RT("pool.conf.current.rt.dev_set.device_99"));
  CHECK_RT(cudaMemPoolDestroy(def), REAL_RT("pool.conf.current.rt.destroy.default_pool"));
  CHECK_RT(cudaMemPoolDestroy(nullptr), REAL_RT("pool.conf.current.rt.destroy.null"));
  CHECK_RT(cudaGetLastError(), REAL_RT("pool.conf.current.rt.last_error"));
  cudaMemLocation host{cudaMemLocationTypeHost, 0};
  cudaMemPool_t hp = nullptr;
  CHECK_RT(cudaMemGetDefaultMemPool(&hp, &host, cudaMemAllocationTypePinned), cudaSuccess);
  CHECK_RT(cudaDeviceSetMemPool(0, hp), REAL_RT("pool.conf.current.rt.dev_set.host_pool"));
  cudaMemLocation cur_numa{cudaMemLocationTypeHostNumaCurrent, 0};
  CHECK_RT(cudaMemGetMemPool(&hp, &cur_numa, cudaMemAllocationTypePinned), REAL_RT("pool.conf.current.rt.get.numa_current"));
  CHECK_RT(cudaGetLastError(), REAL_RT("pool.conf.current.rt.last_error_not_supported"));
}
