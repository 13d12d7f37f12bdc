// Logical endpoints (CUDA 13.3 driver API, "Logical Endpoint" section), one process: support,
// ids (reserve, release), limits, creation, readiness, multicast teams' devices. Each test names
// the documented rule it checks. Where the docs give a code the test asserts it; where they give
// none, 13.3's return lists leave CUDA_ERROR_INVALID_VALUE as the only argument error. Binding
// memory, unbinding, destroying: test_logical_endpoint_bind.cpp; fabric handles, multicast binds,
// the emulator's fabric accesses and state, threads, NCCL's lookup: test_logical_endpoint_fabric.cpp.
// The emulated machine (CTest): 4 devices, devices 2 and 3 next to host NUMA node 1
// (le_machine.conf), IMEX channel 0. Sections marked "emulator" use cuda-shim's knobs.
#include "le_api.hpp"

#include <string>

namespace {
constexpr unsigned long long MiB = 1ull << 20;
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
