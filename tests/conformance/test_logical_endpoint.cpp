// Logical endpoints (CUDA 13.3 driver API, "Logical Endpoint" section), one process. Each test
// names the documented rule it checks. Where the docs give a code the test asserts it; where they
// give none, 13.3's return lists leave CUDA_ERROR_INVALID_VALUE as the only argument error.
// The emulated machine (CTest): 4 devices, devices 2 and 3 next to host NUMA node 1
// (le_machine.conf), IMEX channel 0. Sections marked "emulator" use cuda-shim's knobs.
#include "le_api.hpp"

#include <stdlib.h>

#include <atomic>
#include <thread>

#include <string>
#include <vector>

namespace {

constexpr unsigned long long MiB = 1ull << 20;

cuuint64_t alignment_of(const CUlogicalEndpointProp& p) {
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

void ready_or_fail(CUlogicalEndpointId id, unsigned n = 1) {
  bool ready = false;
  REQUIRE_CU(le_wait_ready(id, n, ready), CUDA_SUCCESS);
  REQUIRE(ready);
}

// A created unicast endpoint of `size` on dev, seen ready.
void make_unicast(CUlogicalEndpointId id, CUdevice dev, unsigned long long size, unsigned ipc = 0) {
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

std::string last_explanation() {
  auto f = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(RTLD_DEFAULT, "cuShimGetLastExplanation"));
  if (!f) return {};
  char buf[1024] = {};
  f(buf, sizeof buf);
  return buf;
}
#endif

}  // namespace

TEST_CASE("device attributes 153-156 report logical endpoint support", "[le][attributes]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  for (int a : {153, 154, 155, 156}) {
    int v = -1;
    CHECK_CU(cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(a), 0), CUDA_SUCCESS);
    CHECK(v == 1);
  }
}

TEST_CASE("cuLogicalEndpointIdReserve: a contiguous range of ids the driver chooses", "[le][reserve]") {
  LE_REQUIRE_API();
  CUlogicalEndpointId a = 0, b = 0;
  REQUIRE_CU(le().IdReserve(&a, 4), CUDA_SUCCESS);
  REQUIRE_CU(le().IdReserve(&b, 2), CUDA_SUCCESS);
  CHECK((b + 2 <= a || a + 4 <= b));  // disjoint ranges
  CHECK_CU(le().IdRelease(a, 4), CUDA_SUCCESS);
  CHECK_CU(le().IdRelease(b, 2), CUDA_SUCCESS);

  SECTION("count 0 is INVALID_VALUE") {
    CUlogicalEndpointId x = 12345;
    CHECK_CU(le().IdReserve(&x, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(x == 12345);  // written only on success
  }
  SECTION("a NULL baseLeId is INVALID_VALUE") { CHECK_CU(le().IdReserve(nullptr, 1), CUDA_ERROR_INVALID_VALUE); }
  SECTION("released ids can be reserved again") {
    CUlogicalEndpointId c = 0;
    REQUIRE_CU(le().IdReserve(&c, 3), CUDA_SUCCESS);
    CHECK_CU(le().IdRelease(c, 3), CUDA_SUCCESS);
    CUlogicalEndpointId d = 0;
    REQUIRE_CU(le().IdReserve(&d, 3), CUDA_SUCCESS);
    CHECK_CU(le().IdRelease(d, 3), CUDA_SUCCESS);
  }
#if !CUDA_SHIM_REAL_BACKEND
  SECTION("emulator: no free run of ids left is OUT_OF_MEMORY") {
    Env e("CUDA_SHIM_LE_MAX_IDS", "8");
    CUlogicalEndpointId x = 0;
    CHECK_CU(le().IdReserve(&x, 9), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(last_explanation().find("CUDA_SHIM_LE_MAX_IDS") != std::string::npos);
  }
#endif
}

TEST_CASE("cuLogicalEndpointIdRelease: only reserved ids whose endpoints are destroyed", "[le][release]") {
  LE_REQUIRE_API();
  CUlogicalEndpointId base = 0;
  REQUIRE_CU(le().IdReserve(&base, 3), CUDA_SUCCESS);

  SECTION("an id never reserved is INVALID_VALUE") {
    CHECK_CU(le().IdRelease(base + 3, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().IdRelease(base, 4), CUDA_ERROR_INVALID_VALUE);  // runs one past the range
    CHECK_CU(le().IdRelease(base, 3), CUDA_SUCCESS);              // nothing was released by the failures
  }
  SECTION("an id still associated with an endpoint is INVALID_VALUE") {
    auto p = le_unicast(0, 2 * MiB);
    REQUIRE_CU(le().Create(base + 1, &p), CUDA_SUCCESS);
    CHECK_CU(le().IdRelease(base, 3), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Destroy(base + 1), CUDA_SUCCESS);  // no readiness needed to destroy
    CHECK_CU(le().IdRelease(base, 3), CUDA_SUCCESS);
  }
  SECTION("part of a reservation") {
    CHECK_CU(le().IdRelease(base + 1, 2), CUDA_SUCCESS);
    CHECK_CU(le().IdRelease(base + 1, 1), CUDA_ERROR_INVALID_VALUE);  // already released
    CHECK_CU(le().IdRelease(base, 1), CUDA_SUCCESS);
  }
  SECTION("count 0 is INVALID_VALUE") {
    CHECK_CU(le().IdRelease(base, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().IdRelease(base, 3), CUDA_SUCCESS);
  }
}

TEST_CASE("cuLogicalEndpointGetLimits: bindAlignment and maxSize for the properties", "[le][limits]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  cuuint64_t align = 0, maxSize = 0;
  auto p = le_unicast(0, 0);  // CCCL asks with size 0
  REQUIRE_CU(le().GetLimits(&align, &maxSize, &p), CUDA_SUCCESS);
  CHECK(align > 0);
  CHECK(maxSize >= align);
  CHECK(maxSize % align == 0);
  // bindAlignment divides the VMM granularity, so cuMemCreate sizes can be bound whole.
  CUmemAllocationProp vp;
  std::memset(&vp, 0, sizeof vp);
  vp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  vp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t gran = 0;
  REQUIRE_CU(cuMemGetAllocationGranularity(&gran, &vp, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  CHECK(gran % align == 0);

  SECTION("a size above maxSize is the caller's to adjust, not an error") {
    auto big = le_unicast(0, maxSize + align);
    cuuint64_t a2 = 0, m2 = 0;
    CHECK_CU(le().GetLimits(&a2, &m2, &big), CUDA_SUCCESS);
    CHECK(m2 == maxSize);
  }
  SECTION("counted operations cap the size at no more than without") {
    auto c = le_unicast(0, 0, 0, CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS);
    cuuint64_t a2 = 0, m2 = 0;
    CHECK_CU(le().GetLimits(&a2, &m2, &c), CUDA_SUCCESS);
    CHECK(m2 <= maxSize);
    CHECK(m2 <= (256ull << 30));
  }
  SECTION("multicast and fabric properties have limits too") {
    auto m = le_multicast(2, 0, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
    cuuint64_t a2 = 0, m2 = 0;
    CHECK_CU(le().GetLimits(&a2, &m2, &m), CUDA_SUCCESS);
    CHECK(a2 > 0);
  }
  SECTION("NULL outputs or prop are INVALID_VALUE") {
    CHECK_CU(le().GetLimits(nullptr, &maxSize, &p), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().GetLimits(&align, nullptr, &p), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().GetLimits(&align, &maxSize, nullptr), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("type INVALID or unknown is INVALID_VALUE") {
    auto q = p;
    q.type = CU_LOGICAL_ENDPOINT_TYPE_INVALID;
    CHECK_CU(le().GetLimits(&align, &maxSize, &q), CUDA_ERROR_INVALID_VALUE);
    q.type = static_cast<CUlogicalEndpointType>(7);
    CHECK_CU(le().GetLimits(&align, &maxSize, &q), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an owner device that does not exist is INVALID_VALUE") {
    auto q = le_unicast(99, 0);
    CHECK_CU(le().GetLimits(&align, &maxSize, &q), CUDA_ERROR_INVALID_VALUE);
    q.unicast.device = -1;
    CHECK_CU(le().GetLimits(&align, &maxSize, &q), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("unknown ipcHandleTypes or flags bits are INVALID_VALUE") {
    auto q = le_unicast(0, 0, 2);
    CHECK_CU(le().GetLimits(&align, &maxSize, &q), CUDA_ERROR_INVALID_VALUE);
    q = le_unicast(0, 0, 0, 2);
    CHECK_CU(le().GetLimits(&align, &maxSize, &q), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a multicast team of 0 devices is INVALID_VALUE") {
    auto q = le_multicast(0, 0);
    CHECK_CU(le().GetLimits(&align, &maxSize, &q), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuLogicalEndpointCreate: only reserved, unused ids; size a multiple of bindAlignment within maxSize",
          "[le][create]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(2);
  auto p = le_unicast(0, 4 * MiB);
  cuuint64_t align = 0, maxSize = 0;
  REQUIRE_CU(le().GetLimits(&align, &maxSize, &p), CUDA_SUCCESS);

  SECTION("success associates the id; it becomes ready when polled") {
    REQUIRE_CU(le().Create(ids[0], &p), CUDA_SUCCESS);
    ready_or_fail(ids[0]);
  }
  SECTION("an id that was never reserved is INVALID_VALUE") {
    CHECK_CU(le().Create(ids[0] + 1000, &p), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an id already associated is INVALID_VALUE") {
    REQUIRE_CU(le().Create(ids[0], &p), CUDA_SUCCESS);
    CHECK_CU(le().Create(ids[0], &p), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a size that is not a multiple of bindAlignment is INVALID_VALUE") {
    auto q = le_unicast(0, align + align / 2);
    CHECK_CU(le().Create(ids[0], &q), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Create(ids[0], &p), CUDA_SUCCESS);  // the id stayed free
  }
  SECTION("a size above maxSize is INVALID_VALUE") {
    auto q = le_unicast(0, maxSize + align);
    CHECK_CU(le().Create(ids[0], &q), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("size 0 is INVALID_VALUE") {
    auto q = le_unicast(0, 0);
    CHECK_CU(le().Create(ids[0], &q), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a NULL prop is INVALID_VALUE") { CHECK_CU(le().Create(ids[0], nullptr), CUDA_ERROR_INVALID_VALUE); }
  SECTION("an owner device that does not exist is INVALID_VALUE") {
    auto q = le_unicast(64, 4 * MiB);
    CHECK_CU(le().Create(ids[0], &q), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("the counted-operations flag is accepted") {
    auto q = le_unicast(0, 4 * MiB, 0, CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS);
    CHECK_CU(le().Create(ids[0], &q), CUDA_SUCCESS);
    ready_or_fail(ids[0]);
  }
#if !CUDA_SHIM_REAL_BACKEND
  SECTION("emulator: construction takes time; Query reports 0 until it is done") {
    Env e("CUDA_SHIM_LE_BUILD_US", "300000");
    REQUIRE_CU(le().Create(ids[1], &p), CUDA_SUCCESS);
    int st = -1;
    CHECK_CU(le().Query(ids[1], 1, &st), CUDA_SUCCESS);
    CHECK(st == 0);
    ready_or_fail(ids[1]);
  }
#endif
}

TEST_CASE("cuLogicalEndpointQuery: non-blocking readiness over a range", "[le][query]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(3);
  auto p = le_unicast(0, 2 * MiB);
  REQUIRE_CU(le().Create(ids[0], &p), CUDA_SUCCESS);
  REQUIRE_CU(le().Create(ids[1], &p), CUDA_SUCCESS);

  SECTION("ready over the range once every id is constructed; the status is non-zero") {
    bool ready = false;
    REQUIRE_CU(le_wait_ready(ids[0], 2, ready), CUDA_SUCCESS);
    CHECK(ready);
  }
  SECTION("a multicast endpoint is not ready until every device was added") {
    auto m = le_multicast(2, 2 * MiB);
    REQUIRE_CU(le().Create(ids[2], &m), CUDA_SUCCESS);
    REQUIRE_CU(le().AddDevice(ids[2], 0), CUDA_SUCCESS);
    int st = -1;
    for (int i = 0; i < 20; ++i) {  // well past the construction time of the unicast ones
      REQUIRE_CU(le().Query(ids[0], 3, &st), CUDA_SUCCESS);
      CHECK(st == 0);
      struct timespec d = {0, 2000000};
      nanosleep(&d, nullptr);
    }
    REQUIRE_CU(le().AddDevice(ids[2], 1), CUDA_SUCCESS);
    ready_or_fail(ids[0], 3);
  }
  SECTION("an id in the range that names no endpoint is INVALID_VALUE") {
    int st = -1;
    CHECK_CU(le().Query(ids[0], 3, &st), CUDA_ERROR_INVALID_VALUE);  // ids[2] is reserved only
    CHECK_CU(le().Query(ids[0] + 100, 1, &st), CUDA_ERROR_INVALID_VALUE);  // not reserved
  }
  SECTION("count 0 or a NULL status is INVALID_VALUE") {
    int st = 0;
    CHECK_CU(le().Query(ids[0], 0, &st), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Query(ids[0], 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuLogicalEndpointAddDevice: multicast only, permanent, until the team is full", "[le][adddevice]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  LE_REQUIRE_DEVICES(2);
  Ids ids(2);
  auto m = le_multicast(2, 2 * MiB);
  REQUIRE_CU(le().Create(ids[0], &m), CUDA_SUCCESS);

  SECTION("a unicast endpoint takes no devices: INVALID_VALUE") {
    auto u = le_unicast(0, 2 * MiB);
    REQUIRE_CU(le().Create(ids[1], &u), CUDA_SUCCESS);
    CHECK_CU(le().AddDevice(ids[1], 1), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an id that names no endpoint is INVALID_VALUE") {
    CHECK_CU(le().AddDevice(ids[1], 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a device that does not exist is INVALID_VALUE") {
    CHECK_CU(le().AddDevice(ids[0], 64), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a device already in the team is INVALID_VALUE") {
    REQUIRE_CU(le().AddDevice(ids[0], 0), CUDA_SUCCESS);
    CHECK_CU(le().AddDevice(ids[0], 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a device beyond numDevices is INVALID_VALUE") {
    if (ndev < 3) return;
    REQUIRE_CU(le().AddDevice(ids[0], 0), CUDA_SUCCESS);
    REQUIRE_CU(le().AddDevice(ids[0], 1), CUDA_SUCCESS);
    CHECK_CU(le().AddDevice(ids[0], 2), CUDA_ERROR_INVALID_VALUE);
    ready_or_fail(ids[0]);
  }
}

TEST_CASE("cuLogicalEndpointBindAddr: every documented check", "[le][bind]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(2);
  auto p = le_unicast(0, 8 * MiB);
  const cuuint64_t align = alignment_of(p);
  LeVmm mem(0, 4 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);
  REQUIRE_CU(le().Create(ids[0], &p), CUDA_SUCCESS);

  SECTION("before cuLogicalEndpointQuery confirmed readiness: INVALID_VALUE (documented)") {
    CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
#if !CUDA_SHIM_REAL_BACKEND
    CHECK(last_explanation().find("cuLogicalEndpointQuery") != std::string::npos);
#endif
    ready_or_fail(ids[0]);
    CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align, 0), CUDA_SUCCESS);
  }
  SECTION("after readiness") {
    ready_or_fail(ids[0]);
    SECTION("offset, size and ptr must be multiples of bindAlignment") {
      if (align > 1) {
        CHECK_CU(le().BindAddr(ids[0], 0, align / 2, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align / 2, 0), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(le().BindAddr(ids[0], 0, 0, static_cast<char*>(mem.ptr()) + 4096, align, 0),
                 CUDA_ERROR_INVALID_VALUE);
      }
    }
    SECTION("size + offset within the endpoint") {
      CHECK_CU(le().BindAddr(ids[0], 0, 8 * MiB - align, mem.ptr(), 2 * align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 8 * MiB, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("size within the allocated memory") {
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 4 * MiB + align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, static_cast<char*>(mem.ptr()) + align, 4 * MiB, 0),
               CUDA_ERROR_INVALID_VALUE);  // runs past the end from ptr
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 4 * MiB, 0), CUDA_SUCCESS);
    }
    SECTION("size 0 and non-zero flags are INVALID_VALUE") {
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 0, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), align, 1), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("unicast: dev must be the owner") {
      CHECK_CU(le().BindAddr(ids[0], 1, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 77, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("device memory must be the device's own") {
      auto p1 = le_unicast(1, 8 * MiB);
      REQUIRE_CU(le().Create(ids[1], &p1), CUDA_SUCCESS);
      ready_or_fail(ids[1]);
      CHECK_CU(le().BindAddr(ids[1], 1, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);  // device 0's
      LeVmm mem1(1, 2 * MiB, false);
      REQUIRE_CU(mem1.status, CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[1], 1, 0, mem1.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
    }
    SECTION("memory not from cuMemCreate or cudaMallocAsync is INVALID_VALUE") {
      CUdeviceptr d = 0;
      REQUIRE_CU(cuMemAlloc(&d, 4 * MiB), CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, reinterpret_cast<void*>(d), align, 0), CUDA_ERROR_INVALID_VALUE);
      cuMemFree(d);
      std::vector<char> host(8 * MiB);
      void* h = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(host.data()) + align - 1) / align * align);
      CHECK_CU(le().BindAddr(ids[0], 0, 0, h, align, 0), CUDA_ERROR_INVALID_VALUE);
    }
    SECTION("cudaMallocAsync memory binds") {
      void* d = nullptr;
      REQUIRE_RT(cudaMallocAsync(&d, 4 * MiB, nullptr), cudaSuccess);
      REQUIRE_RT(cudaStreamSynchronize(nullptr), cudaSuccess);
      if (reinterpret_cast<uintptr_t>(d) % align == 0) CHECK_CU(le().BindAddr(ids[0], 0, 0, d, align, 0), CUDA_SUCCESS);
      CHECK_CU(le().Unbind(ids[0], 0, 0, align), CUDA_SUCCESS);
      cudaFreeAsync(d, nullptr);
      cudaStreamSynchronize(nullptr);
    }
    SECTION("bindings on one device do not overlap") {
      REQUIRE_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * align, 0), CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[0], 0, align, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
      CHECK_CU(le().BindAddr(ids[0], 0, 2 * align, mem.ptr(), align, 0), CUDA_SUCCESS);  // adjacent is fine
    }
    SECTION("an externally shareable endpoint binds only externally shareable memory") {
      auto f = le_unicast(0, 8 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
      REQUIRE_CU(le().Create(ids[1], &f), CUDA_SUCCESS);
      ready_or_fail(ids[1]);
      CHECK_CU(le().BindAddr(ids[1], 0, 0, mem.ptr(), align, 0), CUDA_ERROR_INVALID_VALUE);
      LeVmm fm(0, 2 * MiB, true);
      REQUIRE_CU(fm.status, CUDA_SUCCESS);
      CHECK_CU(le().BindAddr(ids[1], 0, 0, fm.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
    }
  }
}

TEST_CASE("cuLogicalEndpointBindAddr: host NUMA memory must be on the node closest to dev", "[le][bind][numa]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  int ndev = 0, numa0 = -1, numa_last = -1;
  REQUIRE_CU(cuDeviceGetCount(&ndev), CUDA_SUCCESS);
  REQUIRE_CU(cuDeviceGetAttribute(&numa0, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuDeviceGetAttribute(&numa_last, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, ndev - 1), CUDA_SUCCESS);
  Ids ids(2);
  make_unicast(ids[0], 0, 4 * MiB);
  LeVmm near(0, 2 * MiB, false, numa0);
  REQUIRE_CU(near.status, CUDA_SUCCESS);
  CHECK_CU(le().BindAddr(ids[0], 0, 0, near.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  if (numa_last == numa0) {
    WARN("all devices share one host NUMA node: the far-node case needs another");
    return;
  }
  LeVmm far(ndev - 1, 2 * MiB, false, numa_last);
  REQUIRE_CU(far.status, CUDA_SUCCESS);
  CHECK_CU(le().BindAddr(ids[0], 0, 2 * MiB, far.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
  make_unicast(ids[1], ndev - 1, 4 * MiB);
  CHECK_CU(le().BindAddr(ids[1], ndev - 1, 0, far.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
}

TEST_CASE("cuLogicalEndpointBindMem: cuMemCreate handles at memOffset", "[le][bind]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(1);
  make_unicast(ids[0], 0, 16 * MiB);
  const cuuint64_t align = alignment_of(le_unicast(0, 16 * MiB));
  LeVmm mem(0, 6 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);

  SECTION("whole and partial allocations") {
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 6 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 6 * MiB, mem.h, 2 * MiB, 4 * MiB, 0), CUDA_SUCCESS);  // one handle, twice
  }
  SECTION("memOffset must be a multiple of bindAlignment") {
    if (align > 1) CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, align / 2, align, 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("size + memOffset within the allocation") {
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 2 * MiB, 6 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 8 * MiB, align, 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a handle that is not a live allocation is INVALID_VALUE") {
    CHECK_CU(le().BindMem(ids[0], 0, 0, 0, 0, align, 0), CUDA_ERROR_INVALID_VALUE);
#if !CUDA_SHIM_REAL_BACKEND
    // Garbage and released handles crash NVIDIA's VMM calls; the emulator answers instead.
    CHECK_CU(le().BindMem(ids[0], 0, 0, 0xdeadbeef000ull, 0, align, 0), CUDA_ERROR_INVALID_VALUE);
#endif
  }
  SECTION("the endpoint's size bounds size + offset") {
    CHECK_CU(le().BindMem(ids[0], 0, 12 * MiB, mem.h, 0, 6 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuLogicalEndpointUnbind: an offset of a bind, the size of one or of adjacent binds", "[le][unbind]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(2);
  make_unicast(ids[0], 0, 16 * MiB);
  LeVmm mem(0, 8 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);
  // Bindings at [0,2) [2,4) [4,8) MiB and [10,12) MiB.
  REQUIRE_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 4 * MiB, mem.h, 4 * MiB, 4 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 10 * MiB, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);

  SECTION("the size of one bind") {
    CHECK_CU(le().Unbind(ids[0], 0, 2 * MiB, 2 * MiB), CUDA_SUCCESS);
    CHECK_CU(le().Unbind(ids[0], 0, 2 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // gone
    CHECK_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);  // the range is free again
  }
  SECTION("the combined size of adjacent binds") {
    CHECK_CU(le().Unbind(ids[0], 0, 0, 8 * MiB), CUDA_SUCCESS);
    CHECK_CU(le().Unbind(ids[0], 0, 10 * MiB, 2 * MiB), CUDA_SUCCESS);
  }
  SECTION("an offset that no bind gave is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 6 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // inside a binding
    CHECK_CU(le().Unbind(ids[0], 0, 8 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // nothing bound
  }
  SECTION("a size that splits a binding is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 4 * MiB, 2 * MiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 6 * MiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 0, 4 * MiB, 4 * MiB), CUDA_SUCCESS);  // nothing was unbound by the failures
  }
  SECTION("a size spanning a gap is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 4 * MiB, 8 * MiB), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a misaligned offset or size, size 0 or another device is INVALID_VALUE") {
    CHECK_CU(le().Unbind(ids[0], 0, 0, MiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Unbind(ids[0], 1, 0, 2 * MiB), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an id not seen ready is INVALID_VALUE") {
    auto p = le_unicast(0, 4 * MiB);
    REQUIRE_CU(le().Create(ids[1], &p), CUDA_SUCCESS);
    CHECK_CU(le().Unbind(ids[1], 0, 0, 2 * MiB), CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuLogicalEndpointDestroy: back to reserved, this process's memory unbound, last reference frees",
          "[le][destroy]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(3);
  LeVmm mem(0, 2 * MiB, false);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);

  SECTION("an id that names no endpoint is INVALID_VALUE") {
    CHECK_CU(le().Destroy(ids[0]), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Destroy(ids[0] + 500), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("twice is INVALID_VALUE, not a crash") {
    auto p = le_unicast(0, 2 * MiB);
    REQUIRE_CU(le().Create(ids[0], &p), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("the id is reusable at once and starts with nothing bound") {
    make_unicast(ids[0], 0, 2 * MiB);
    REQUIRE_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_SUCCESS);  // unbinds implicitly
    make_unicast(ids[0], 0, 2 * MiB);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 2 * MiB), CUDA_ERROR_INVALID_VALUE);  // nothing bound
    CHECK_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  }
  SECTION("an endpoint lives while another id names it") {
    auto f = le_unicast(0, 2 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
    REQUIRE_CU(le().Create(ids[0], &f), CUDA_SUCCESS);
    CUlogicalEndpointFabricHandle h;
    std::memset(&h, 0, sizeof h);
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[0]), CUDA_SUCCESS);
    ready_or_fail(ids[1]);  // the import still names a live endpoint
    REQUIRE_CU(le().Import(ids[2], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[1]), CUDA_SUCCESS);
    CHECK_CU(le().Destroy(ids[2]), CUDA_SUCCESS);  // the last reference: the endpoint is freed
    CHECK_CU(le().Import(ids[0], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
  }
}

TEST_CASE("cuLogicalEndpointExport and Import: fabric handles", "[le][export]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(4);
  auto f = le_unicast(0, 2 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
  REQUIRE_CU(le().Create(ids[0], &f), CUDA_SUCCESS);
  CUlogicalEndpointFabricHandle h;
  std::memset(&h, 0, sizeof h);

  SECTION("export needs no readiness; import into another reserved id of the same process") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CUlogicalEndpointFabricHandle h2;
    REQUIRE_CU(le().Export(&h2, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[2], &h2, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);  // twice is allowed
    ready_or_fail(ids[0], 3);
  }
  SECTION("an imported unicast endpoint cannot be bound to any memory") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    REQUIRE_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    ready_or_fail(ids[1]);
    LeVmm fm(0, 2 * MiB, true);
    REQUIRE_CU(fm.status, CUDA_SUCCESS);
    CHECK_CU(le().BindAddr(ids[1], 0, 0, fm.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().BindMem(ids[1], 0, 0, fm.h, 0, 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("an endpoint created without FABRIC in ipcHandleTypes does not export: INVALID_VALUE") {
    auto p = le_unicast(0, 2 * MiB);
    REQUIRE_CU(le().Create(ids[3], &p), CUDA_SUCCESS);
    CHECK_CU(le().Export(&h, ids[3], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("handle type NONE, a NULL handle or an id without endpoint is INVALID_VALUE") {
    CHECK_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Export(nullptr, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Export(&h, ids[1], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Import(ids[1], nullptr, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("import into an id that is not reserved, or already associated, is INVALID_VALUE") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    CHECK_CU(le().Import(ids[0] + 1000, &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(le().Import(ids[0], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a handle that describes no endpoint cannot be supported: NOT_SUPPORTED") {
    CUlogicalEndpointFabricHandle junk;
    for (unsigned i = 0; i < sizeof junk.data; ++i) junk.data[i] = static_cast<unsigned char>(i * 37 + 11);
    CHECK_CU(le().Import(ids[1], &junk, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    h.data[20] ^= 0x5a;  // one changed bit of the identity: no longer a live endpoint
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
  }
#if !CUDA_SHIM_REAL_BACKEND
  SECTION("emulator: without an IMEX channel export and import are NOT_PERMITTED") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    Env e("CUDA_SHIM_IMEX_CHANNEL", nullptr);
    CUlogicalEndpointFabricHandle h2;
    CHECK_CU(le().Export(&h2, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED);
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED);
    CHECK(last_explanation().find("IMEX") != std::string::npos);
  }
  SECTION("emulator: another IMEX channel is NOT_PERMITTED") {
    REQUIRE_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_SUCCESS);
    Env e("CUDA_SHIM_IMEX_CHANNEL", "7");
    CHECK_CU(le().Import(ids[1], &h, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED);
  }
  SECTION("emulator: an IMEX daemon that is not running cannot serve handles: NOT_SUPPORTED") {
    Env e("CUDA_SHIM_IMEX_DAEMON", "not_ready");
    CHECK_CU(le().Export(&h, ids[0], CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED);
  }
#endif
}

TEST_CASE("multicast endpoints in one process: team, binds per device", "[le][multicast]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  LE_REQUIRE_DEVICES(2);
  Ids ids(1);
  auto m = le_multicast(2, 4 * MiB);
  REQUIRE_CU(le().Create(ids[0], &m), CUDA_SUCCESS);
  REQUIRE_CU(le().AddDevice(ids[0], 0), CUDA_SUCCESS);
  LeVmm m0(0, 2 * MiB, false), m1(1, 2 * MiB, false);
  REQUIRE_CU(m0.status, CUDA_SUCCESS);
  REQUIRE_CU(m1.status, CUDA_SUCCESS);
  int st = -1;
  REQUIRE_CU(le().Query(ids[0], 1, &st), CUDA_SUCCESS);
  CHECK(st == 0);
  CHECK_CU(le().BindAddr(ids[0], 0, 0, m0.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);  // team incomplete
  REQUIRE_CU(le().AddDevice(ids[0], 1), CUDA_SUCCESS);
  ready_or_fail(ids[0]);
  CHECK_CU(le().BindAddr(ids[0], 0, 0, m0.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  CHECK_CU(le().BindAddr(ids[0], 1, 0, m1.ptr(), 2 * MiB, 0), CUDA_SUCCESS);  // same offset, another replica
  CHECK_CU(le().BindAddr(ids[0], 1, 2 * MiB, m0.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);  // device 0's memory
  if (ndev > 2) {
    LeVmm m2(2, 2 * MiB, false);
    CHECK_CU(le().BindAddr(ids[0], 2, 0, m2.ptr(), 2 * MiB, 0), CUDA_ERROR_INVALID_VALUE);  // not in the team
  }
  CHECK_CU(le().Unbind(ids[0], 1, 0, 2 * MiB), CUDA_SUCCESS);
  CHECK_CU(le().Unbind(ids[0], 0, 0, 2 * MiB), CUDA_SUCCESS);
}

#if !CUDA_SHIM_REAL_BACKEND
TEST_CASE("emulator: system conditions the docs name, injected", "[le][faults]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  Ids ids(2);
  make_unicast(ids[0], 0, 8 * MiB);
  make_unicast(ids[1], 0, 8 * MiB, CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC);
  LeVmm mem(0, 6 * MiB, true);
  REQUIRE_CU(mem.status, CUDA_SUCCESS);
  int st = 0;

  SECTION("bind resources exhausted: OUT_OF_MEMORY") {
    Env e("CUDA_SHIM_LE_BIND_LIMIT", "2");
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 4 * MiB, mem.h, 4 * MiB, 2 * MiB, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(last_explanation().find("bind resources") != std::string::npos);
  }
  SECTION("an illegal system configuration: ILLEGAL_STATE from Bind, Unbind, Query, GetLimits") {
    REQUIRE_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
    Env e("CUDA_SHIM_LE_FAULT", "illegal_state");
    cuuint64_t a = 0, mx = 0;
    auto p = le_unicast(0, 0);
    CHECK_CU(le().GetLimits(&a, &mx, &p), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(le().Query(ids[0], 1, &st), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(le().BindMem(ids[0], 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(le().Unbind(ids[0], 0, 0, 2 * MiB), CUDA_ERROR_ILLEGAL_STATE);
  }
  SECTION("the IMEX daemon not running: SYSTEM_NOT_READY for fabric endpoints only") {
    Env e("CUDA_SHIM_IMEX_DAEMON", "not_ready");
    CHECK_CU(le().Query(ids[1], 1, &st), CUDA_ERROR_SYSTEM_NOT_READY);
    CHECK_CU(le().BindMem(ids[1], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_ERROR_SYSTEM_NOT_READY);
    CHECK_CU(le().Query(ids[0], 1, &st), CUDA_SUCCESS);
    CHECK_CU(le().BindMem(ids[0], 0, 0, mem.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
  }
}

TEST_CASE("emulator: fabric accesses through an endpoint reach the bound memory", "[le][access]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  REQUIRE(le().Access != nullptr);
  Ids ids(2);
  make_unicast(ids[0], 0, 8 * MiB);
  LeVmm a(0, 2 * MiB, false), b(0, 2 * MiB, false);
  REQUIRE_CU(a.status, CUDA_SUCCESS);
  REQUIRE_CU(b.status, CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(a.va, 0x11, 2 * MiB), CUDA_SUCCESS);
  REQUIRE_CU(cuMemsetD8(b.va, 0x22, 2 * MiB), CUDA_SUCCESS);
  REQUIRE_CU(le().BindAddr(ids[0], 0, 0, a.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  REQUIRE_CU(le().BindMem(ids[0], 0, 2 * MiB, b.h, 0, 2 * MiB, 0), CUDA_SUCCESS);
  // A read spanning both bindings sees both allocations' bytes.
  std::vector<unsigned char> buf(4096);
  REQUIRE(le().Access(ids[0], 0, 2 * MiB - 2048, buf.data(), buf.size(), 0) == CUDA_SUCCESS);
  CHECK(buf[0] == 0x11);
  CHECK(buf[2047] == 0x11);
  CHECK(buf[2048] == 0x22);
  // A write through the endpoint lands in the allocation.
  std::vector<unsigned char> w(100, 0x7e);
  REQUIRE(le().Access(ids[0], -1, 2 * MiB + 1000, w.data(), w.size(), 1) == CUDA_SUCCESS);
  std::vector<unsigned char> got(100);
  REQUIRE_CU(cuMemcpyDtoH(got.data(), b.va + 1000, got.size()), CUDA_SUCCESS);
  CHECK(all_bytes(got, 0x7e));
  // Outside the bound ranges: no access.
  CHECK(le().Access(ids[0], 0, 4 * MiB, buf.data(), 16, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(last_explanation().find("only valid on bound ranges") != std::string::npos);
  // Not seen ready: no access.
  auto p = le_unicast(0, 2 * MiB);
  REQUIRE_CU(le().Create(ids[1], &p), CUDA_SUCCESS);
  CHECK(le().Access(ids[1], 0, 0, buf.data(), 16, 0) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("emulator: the endpoint state names ids, team and bindings", "[le][state]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  auto state = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(RTLD_DEFAULT, "cuShimLogicalEndpointState"));
  REQUIRE(state != nullptr);
  Ids ids(2);
  make_unicast(ids[0], 0, 4 * MiB);
  auto m = le_multicast(2, 2 * MiB);
  REQUIRE_CU(le().Create(ids[1], &m), CUDA_SUCCESS);
  REQUIRE_CU(le().AddDevice(ids[1], 1), CUDA_SUCCESS);
  LeVmm mem(0, 2 * MiB, false);
  REQUIRE_CU(le().BindAddr(ids[0], 0, 0, mem.ptr(), 2 * MiB, 0), CUDA_SUCCESS);
  std::string s(state(nullptr, 0) + 1, '\0');
  s.resize(state(s.data(), s.size()));
  std::string me = std::to_string(getpid());
  CHECK(s.find("unicast owner device 0") != std::string::npos);
  CHECK(s.find("multicast team 1/2 [1 (pid " + me + ")]") != std::string::npos);
  CHECK(s.find("waiting for devices") != std::string::npos);
  CHECK(s.find("id " + std::to_string(ids[0]) + " in pid " + me + " (created)") != std::string::npos);
  CHECK(s.find("device 0: [0x0, 0x200000) -> vmm") != std::string::npos);
}
#endif

TEST_CASE("threads: endpoints made, bound and destroyed concurrently in one process", "[le][threads]") {
  LE_REQUIRE_API();
  conformance_primary_ctx();
  constexpr int kThreads = 8, kRounds = 12;
  std::vector<std::thread> ts;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([t, &failures] {
      auto bad = [&](bool ok) {
        if (!ok) failures.fetch_add(1);
        return !ok;
      };
      CUcontext ctx = nullptr;
      if (bad(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS) || bad(cuCtxSetCurrent(ctx) == CUDA_SUCCESS)) return;
      LeVmm mem(0, 4 * MiB, false);
      if (bad(mem.status == CUDA_SUCCESS)) return;
      for (int r = 0; r < kRounds; ++r) {
        CUlogicalEndpointId base = 0;
        if (bad(le().IdReserve(&base, 2) == CUDA_SUCCESS)) return;
        auto p = le_unicast(0, 4 * MiB);
        bool ready = false;
        bad(le().Create(base, &p) == CUDA_SUCCESS);
        bad(le().Create(base + 1, &p) == CUDA_SUCCESS);
        bad(le_wait_ready(base, 2, ready) == CUDA_SUCCESS && ready);
        bad(le().BindAddr(base, 0, 0, mem.ptr(), 4 * MiB, 0) == CUDA_SUCCESS);
        bad(le().BindMem(base + 1, 0, 0, mem.h, 0, 2 * MiB, 0) == CUDA_SUCCESS);
        bad(le().BindMem(base + 1, 0, 2 * MiB, mem.h, 2 * MiB, 2 * MiB, 0) == CUDA_SUCCESS);
        if (le().Access) {
          unsigned char b[64];
          std::memset(b, t, sizeof b);
          bad(le().Access(base, -1, 4096 * t, b, sizeof b, 1) == CUDA_SUCCESS);
        }
        bad(le().Unbind(base + 1, 0, 0, 4 * MiB) == CUDA_SUCCESS);
        bad(le().Destroy(base) == CUDA_SUCCESS);  // unbinds the other binding itself
        bad(le().Destroy(base + 1) == CUDA_SUCCESS);
        bad(le().IdRelease(base, 2) == CUDA_SUCCESS);
      }
      cuDevicePrimaryCtxRelease(0);
    });
  for (auto& th : ts) th.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("NCCL's lookup: cudaGetDriverEntryPointByVersion(name, 13030) reaches the same entries", "[le][procaddr]") {
  LE_REQUIRE_API();
  REQUIRE_RT(cudaFree(nullptr), cudaSuccess);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  REQUIRE_RT(cudaGetDriverEntryPointByVersion("cuLogicalEndpointIdReserve", &fn, 13030, cudaEnableDefault, &q),
             cudaSuccess);
  REQUIRE(q == cudaDriverEntryPointSuccess);
  CHECK(fn == reinterpret_cast<void*>(le().IdReserve));
  auto reserve = reinterpret_cast<CUresult (*)(CUlogicalEndpointId*, cuuint32_t)>(fn);
  CUlogicalEndpointId base = 0;
  REQUIRE_CU(reserve(&base, 2), CUDA_SUCCESS);
  CHECK_CU(le().IdRelease(base, 2), CUDA_SUCCESS);
}
