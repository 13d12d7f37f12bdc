// cuMemPoolSetAccess / cuMemPoolGetAccess: the owning device, other devices and the host,
// per pool location; and what access means for copies between devices. Sections that
// need a second device run when there is one (the emulator's test gives it two).
#include "pool_common.hpp"
#include "real_answers.hpp"

namespace {
CUmemAccessDesc desc(CUmemLocationType t, int id, int flags) {
  CUmemAccessDesc d;
  d.location.type = t;
  d.location.id = id;
  d.flags = static_cast<CUmemAccess_flags>(flags);
  return d;
}
CUresult get(CUmemoryPool p, CUmemLocationType t, int id, int& flags) {
  CUmemAccess_flags f = static_cast<CUmemAccess_flags>(77);
  CUmemLocation l{t, id};
  CUresult r = cuMemPoolGetAccess(&f, p, &l);
  flags = static_cast<int>(f);
  return r;
}
int access_of(CUmemoryPool p, CUmemLocationType t, int id) {
  int f = -1;
  REQUIRE_CU(get(p, t, id, f), CUDA_SUCCESS);
  return f;
}
CUresult set(CUmemoryPool p, CUmemAccessDesc d) { return cuMemPoolSetAccess(p, &d, 1); }
}  // namespace

TEST_CASE("a device pool: its device has read-write access, the host none", "[mempool][access]") {
  conformance_primary_ctx();
  ScopedPool p(pool_props());
  CHECK(access_of(p, CU_MEM_LOCATION_TYPE_DEVICE, 0) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CHECK(access_of(p, CU_MEM_LOCATION_TYPE_HOST, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK(access_of(p, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), CUDA_SUCCESS);
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_NONE)), REAL_CU("pool.conf.access.device_pool.own_none"));
  CHECK(access_of(p, CU_MEM_LOCATION_TYPE_DEVICE, 0) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READ)), REAL_CU("pool.conf.access.device_pool.own_read"));
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), REAL_CU("pool.conf.access.device_pool.host_rw"));
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)),
           REAL_CU("pool.conf.access.device_pool.numa_rw"));
  CHECK(access_of(p, CU_MEM_LOCATION_TYPE_HOST, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
}

TEST_CASE("cuMemPoolSetAccess with bad descriptors", "[mempool][access]") {
  conformance_primary_ctx();
  ScopedPool p(pool_props());
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 2)), REAL_CU("pool.conf.access.set.flags_2"));  // flags 2: no such flags
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 7)), REAL_CU("pool.conf.access.set.flags_7"));
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 99, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), REAL_CU("pool.conf.access.set.device_99"));
  CHECK_CU(set(p, desc(static_cast<CUmemLocationType>(9), 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)),
           REAL_CU("pool.conf.access.set.location_type_9"));
  CHECK_CU(cuMemPoolSetAccess(p, nullptr, 0), REAL_CU("pool.conf.access.set.null_descs_0"));
  CHECK_CU(cuMemPoolSetAccess(p, nullptr, 1), REAL_CU("pool.conf.access.set.null_descs_1"));
  CUmemAccessDesc d = desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CHECK_CU(cuMemPoolSetAccess(nullptr, &d, 1), REAL_CU("pool.conf.access.set.null_pool"));
  CUmemAccessDesc two[2] = {d, d};
  CHECK_CU(cuMemPoolSetAccess(p, two, 2), CUDA_SUCCESS);
  two[1] = desc(CU_MEM_LOCATION_TYPE_DEVICE, 99, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CHECK_CU(cuMemPoolSetAccess(p, two, 2), REAL_CU("pool.conf.access.set.two_second_device_99"));
  CUmemoryPool def = nullptr;
  REQUIRE_CU(cuDeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
  CHECK_CU(set(def, d), CUDA_SUCCESS);
}

TEST_CASE("cuMemPoolGetAccess with bad arguments", "[mempool][access]") {
  conformance_primary_ctx();
  ScopedPool p(pool_props());
  int f = 0;
  CHECK_CU(get(p, CU_MEM_LOCATION_TYPE_DEVICE, 99, f), REAL_CU("pool.conf.access.get.device_99"));
  CHECK(f == 77);  // untouched
  CHECK_CU(get(p, CU_MEM_LOCATION_TYPE_DEVICE, -1, f), REAL_CU("pool.conf.access.get.device_neg"));
  CHECK_CU(get(p, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, f), REAL_CU("pool.conf.access.get.numa_current"));
  CHECK_CU(get(p, CU_MEM_LOCATION_TYPE_NONE, 0, f), REAL_CU("pool.conf.access.get.none"));
  CHECK_CU(get(p, static_cast<CUmemLocationType>(9), 0, f), REAL_CU("pool.conf.access.get.location_type_9"));
  CUmemLocation l{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags flags;
  CHECK_CU(cuMemPoolGetAccess(nullptr, p, &l), REAL_CU("pool.conf.access.get.null_flags"));
  CHECK_CU(cuMemPoolGetAccess(&flags, p, nullptr), REAL_CU("pool.conf.access.get.null_location"));
  CHECK_CU(cuMemPoolGetAccess(&flags, nullptr, &l), REAL_CU("pool.conf.access.get.null_pool"));
}

TEST_CASE("host and host-NUMA pools: the host has access; devices are granted it", "[mempool][access]") {
  conformance_primary_ctx();
  for (CUmemLocationType t : {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA}) {
    INFO((t == CU_MEM_LOCATION_TYPE_HOST ? "host pool" : "host NUMA pool"));
    ScopedPool p(pool_props(t, 0));
    CHECK(access_of(p, CU_MEM_LOCATION_TYPE_HOST, 0) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(access_of(p, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(access_of(p, CU_MEM_LOCATION_TYPE_DEVICE, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), CUDA_SUCCESS);
    CHECK(access_of(p, CU_MEM_LOCATION_TYPE_DEVICE, 0) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_NONE)), CUDA_SUCCESS);
    CHECK(access_of(p, CU_MEM_LOCATION_TYPE_DEVICE, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_NONE)),
             REAL_CU(t == CU_MEM_LOCATION_TYPE_HOST ? "pool.conf.access.host_pool.host_none" : "pool.conf.access.numa_pool.host_none"));
    CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), CUDA_SUCCESS);
  }
}

TEST_CASE("managed pools report no access until granted", "[mempool][access]") {
  conformance_primary_ctx();
  ScopedPool p(pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED));
  CHECK(access_of(p, CU_MEM_LOCATION_TYPE_DEVICE, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK(access_of(p, CU_MEM_LOCATION_TYPE_HOST, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), CUDA_SUCCESS);
  CHECK_CU(set(p, desc(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), CUDA_SUCCESS);
}

TEST_CASE("runtime: cudaMemPoolSetAccess / GetAccess", "[mempool][access][runtime]") {
  cudaMemPool_t def = nullptr;
  REQUIRE_RT(cudaDeviceGetDefaultMemPool(&def, 0), cudaSuccess);
  cudaMemAccessFlags f = static_cast<cudaMemAccessFlags>(77);
  cudaMemLocation l{cudaMemLocationTypeDevice, 0};
  CHECK_RT(cudaMemPoolGetAccess(&f, def, &l), cudaSuccess);
  CHECK(f == cudaMemAccessFlagsProtReadWrite);
  l.id = 99;
  CHECK_RT(cudaMemPoolGetAccess(&f, def, &l), REAL_RT("pool.conf.access.rt.get.device_99"));
  cudaMemAccessDesc d{};
  d.location = {cudaMemLocationTypeDevice, 99};
  d.flags = cudaMemAccessFlagsProtReadWrite;
  CHECK_RT(cudaMemPoolSetAccess(def, &d, 1), REAL_RT("pool.conf.access.rt.set.device_99"));
  d.location = {cudaMemLocationTypeDevice, 0};
  d.flags = cudaMemAccessFlagsProtNone;
  CHECK_RT(cudaMemPoolSetAccess(def, &d, 1), REAL_RT("pool.conf.access.rt.set.own_none"));
  CHECK_RT(cudaGetLastError(), REAL_RT("pool.conf.access.rt.last_error"));
}

TEST_CASE("peer access: another device reaches a pool's memory only once granted", "[mempool][access][multi-gpu]") {
  conformance_primary_ctx();
  if (device_count() < 2) {
    SUCCEED("one device: nothing to check");
    return;
  }
  int can = -1;
  REQUIRE_CU(cuDeviceCanAccessPeer(&can, 0, 1), CUDA_SUCCESS);
  CHECK(can == 1);
  ScopedPool p0(pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0));
  CHECK(access_of(p0, CU_MEM_LOCATION_TYPE_DEVICE, 1) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CUdeviceptr x = 0;
  REQUIRE_CU(cuMemAllocFromPoolAsync(&x, 4096, p0, nullptr), CUDA_SUCCESS);
  unsigned char in[16] = {9, 8, 7, 6}, out[16] = {};
  REQUIRE_CU(cuMemcpyHtoD(x, in, 16), CUDA_SUCCESS);
  CUcontext c0 = nullptr, c1 = nullptr;
  REQUIRE_CU(cuCtxGetCurrent(&c0), CUDA_SUCCESS);
  REQUIRE_CU(cuDevicePrimaryCtxRetain(&c1, 1), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(c1), CUDA_SUCCESS);
  CUdeviceptr y = 0;
  REQUIRE_CU(cuMemAlloc(&y, 4096), CUDA_SUCCESS);
  // Literal codes in this test: they need a second device, and the recorded machine has one.
  CHECK_CU(cuMemcpyDtoH(out, x, 16), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemcpyDtoD(y, x, 16), CUDA_ERROR_INVALID_VALUE);
  REQUIRE_CU(cuCtxSetCurrent(c0), CUDA_SUCCESS);
  CHECK_CU(set(p0, desc(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_READ)), CUDA_ERROR_NOT_SUPPORTED);
  CHECK_CU(set(p0, desc(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)), CUDA_SUCCESS);
  CHECK(access_of(p0, CU_MEM_LOCATION_TYPE_DEVICE, 1) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  REQUIRE_CU(cuCtxSetCurrent(c1), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoD(y, x, 16), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(out, y, 16), CUDA_SUCCESS);
  CHECK(out[2] == 7);
  int ordinal = -5;
  CHECK_CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, x), CUDA_SUCCESS);
  CHECK(ordinal == 0);
  REQUIRE_CU(cuCtxSetCurrent(c0), CUDA_SUCCESS);
  CHECK_CU(set(p0, desc(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_NONE)), CUDA_SUCCESS);
  CHECK(access_of(p0, CU_MEM_LOCATION_TYPE_DEVICE, 1) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  // The pool of device 1 starts with access for device 1 only.
  ScopedPool p1(pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 1));
  CHECK(access_of(p1, CU_MEM_LOCATION_TYPE_DEVICE, 1) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CHECK(access_of(p1, CU_MEM_LOCATION_TYPE_DEVICE, 0) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK_CU(set(p1, desc(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_NONE)), CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(cuMemFreeAsync(x, nullptr), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(c1), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(y), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(c0), CUDA_SUCCESS);
  CHECK_CU(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}
