// Range queries of managed memory: cuMemRangeGetAttribute(s) (sizes, counts, pointers, every
// attribute), and the runtime's cudaMemAdvise, cudaMemPrefetchAsync and cudaMemRangeGetAttribute(s).
// Expected codes and values measured on NVIDIA's driver 580.159.04 (H200, CUDA 13.0;
// tools/probe/probe_managed.cpp, whose keys the tables below copy: "st{...}" is the range state
// read back attribute by attribute). Advice: test_managed_advise.cpp; prefetches:
// test_managed_prefetch.cpp.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "common.hpp"
#include "managed_advise.hpp"

using namespace managed_conf;

// ---- cuMemRangeGetAttribute(s) --------------------------------------------------------------
namespace {
// The probe's range section: advice of every kind, then one prefetch to device 0.
struct Advised {
  Managed m{kMiB};
  Advised() {
    REQUIRE_CU(cuMemAdvise(m, kMiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev0()), CUDA_SUCCESS);
    REQUIRE_CU(cuMemAdvise(m, kMiB, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0()), CUDA_SUCCESS);
    REQUIRE_CU(cuMemAdvise(m, kMiB, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_SUCCESS);
    REQUIRE_CU(cuMemPrefetchAsync(m, kMiB, dev0(), 0, nullptr), CUDA_SUCCESS);
    REQUIRE_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  }
};

std::string hex(const unsigned char* b, size_t n) {
  std::string s;
  char t[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(t, sizeof t, "%02x", b[i]);
    s += t;
  }
  return s;
}

// The probe's "CODE bytes=..." for one call, the buffer preset to 0xab.
std::string sized(int attr, size_t ds, CUdeviceptr p, size_t n) {
  unsigned char buf[32];
  std::memset(buf, 0xab, sizeof buf);
  CUresult r = cuMemRangeGetAttribute(buf, ds, static_cast<CUmem_range_attribute>(attr), p, n);
  const size_t shown = std::max<size_t>(ds, 4) <= 24 ? std::max<size_t>(ds, 4) + 4 : 24;
  return std::string(cu_name(r)) + " bytes=" + hex(buf, shown);
}
}  // namespace

TEST_CASE("cuMemRangeGetAttribute: every attribute of an advised and prefetched range", "[managed][range]") {
  conformance_primary_ctx();
  Advised a;
  CHECK(st(a.m, kMiB) == "st{rm=1 pl=0 ab=[0,-2] lp=0 plt=1 pli=0 lpt=1 lpi=0}");
}

TEST_CASE("cuMemRangeGetAttribute: dataSize must be 4, or a multiple of 4 for ACCESSED_BY", "[managed][range]") {
  conformance_primary_ctx();
  Advised a;
  const std::string bad4 = "CUDA_ERROR_INVALID_VALUE bytes=abababababababab";
  const std::string bad8 = "CUDA_ERROR_INVALID_VALUE bytes=abababababababababababab";
  const std::string bad16 = "CUDA_ERROR_INVALID_VALUE bytes=abababababababababababababababababababab";
  // Values for attributes 1..8 with dataSize 4 (measured).
  const char* v4[9] = {nullptr,    "01000000", "00000000", "00000000", "00000000",
                       "01000000", "00000000", "01000000", "00000000"};
  for (int attr : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100}) {
    INFO("attribute " << attr);
    const bool valid = attr >= 1 && attr <= 8;
    CHECK(sized(attr, 0, a.m, kMiB) == bad4);
    CHECK(sized(attr, 2, a.m, kMiB) == bad4);
    CHECK(sized(attr, 3, a.m, kMiB) == bad4);
    CHECK(sized(attr, 4, a.m, kMiB) ==
          (valid ? std::string("CUDA_SUCCESS bytes=") + v4[attr] + "abababab" : bad4));
    if (attr == 3) {
      CHECK(sized(attr, 8, a.m, kMiB) == "CUDA_SUCCESS bytes=00000000feffffffabababab");
      CHECK(sized(attr, 16, a.m, kMiB) == "CUDA_SUCCESS bytes=00000000fefffffffefffffffeffffffabababab");
    } else {
      CHECK(sized(attr, 8, a.m, kMiB) == bad8);
      CHECK(sized(attr, 16, a.m, kMiB) == bad16);
    }
  }
  CHECK(sized(3, 6, a.m, kMiB) == "CUDA_ERROR_INVALID_VALUE bytes=abababababababababab");
  CHECK(sized(3, 12, a.m, kMiB) == "CUDA_SUCCESS bytes=00000000fefffffffeffffffabababab");
  CHECK(sized(3, 20, a.m, kMiB) == "CUDA_SUCCESS bytes=00000000fefffffffefffffffefffffffeffffffabababab");
}

TEST_CASE("cuMemRangeGetAttribute: counts and pointers in and out of the allocation", "[managed][range]") {
  conformance_primary_ctx();
  Advised a;
  const CUdeviceptr m = a.m;
  struct Rc {
    const char* name;
    CUdeviceptr p;
    size_t len;
    bool ok;
  } rs[] = {{"count0", m, 0, false},          {"count1", m, 1, true},
            {"countPlus1", m, kMiB + 1, false}, {"countPlus4096", m, kMiB + 4096, false},
            {"interior", m + 4096, 4096, true}, {"odd1len100", m + 1, 100, true},
            {"end4096", m + kMiB, 4096, false},  {"lastByte", m + kMiB - 1, 1, true},
            {"huge", m, size_t(1) << 40, false}};
  for (const Rc& rc : rs) {
    INFO(rc.name);
    CHECK(sized(1, 4, rc.p, rc.len) ==
          (rc.ok ? "CUDA_SUCCESS bytes=01000000abababab" : "CUDA_ERROR_INVALID_VALUE bytes=abababababababab"));
    CHECK(sized(3, 8, rc.p, rc.len) == (rc.ok ? "CUDA_SUCCESS bytes=00000000feffffffabababab"
                                              : "CUDA_ERROR_INVALID_VALUE bytes=abababababababababababab"));
  }
}

TEST_CASE("cuMemRangeGetAttribute: NULL data", "[managed][range]") {
  conformance_primary_ctx();
  Managed m(64 * kKiB);
  CHECK_CU(cuMemRangeGetAttribute(nullptr, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 64 * kKiB),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemRangeGetAttribute(nullptr, 0, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 64 * kKiB),
           CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuMemRangeGetAttribute: ACCESSED_BY lists devices, then the host", "[managed][range]") {
  conformance_primary_ctx();
  Managed m(64 * kKiB);
  CHECK_CU(cuMemAdvise(m, 64 * kKiB, CU_MEM_ADVISE_SET_ACCESSED_BY, host()), CUDA_SUCCESS);
  CHECK_CU(cuMemAdvise(m, 64 * kKiB, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0()), CUDA_SUCCESS);
  CHECK_CU(cuMemAdvise(m, 64 * kKiB, CU_MEM_ADVISE_SET_ACCESSED_BY, host()), CUDA_SUCCESS);  // already listed
  int ab[4] = {-77, -77, -77, -77};
  CHECK_CU(cuMemRangeGetAttribute(ab, sizeof ab, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, 64 * kKiB), CUDA_SUCCESS);
  CHECK(ab[0] == 0);   // measured: devices first, then the host, whatever the order of the advice
  CHECK(ab[1] == -1);
  CHECK(ab[2] == -2);
  CHECK(ab[3] == -2);
}

TEST_CASE("cuMemRangeGetAttributes: several at once, all checked before any is written", "[managed][range]") {
  conformance_primary_ctx();
  Advised a;
  int v1 = -77, v2 = -77;
  void* data[2] = {&v1, &v2};
  size_t sizes[2] = {4, 4};
  CUmem_range_attribute as[2] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION};
  CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 2, a.m, kMiB), CUDA_SUCCESS);
  CHECK(v1 == 1);
  CHECK(v2 == 0);
  SECTION("numAttributes 0") {
    v1 = v2 = -77;
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 0, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    CHECK((v1 == -77 && v2 == -77));
  }
  SECTION("the second dataSize is 3") {
    sizes[1] = 3;
    v1 = v2 = -77;
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 2, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    CHECK((v1 == -77 && v2 == -77));
  }
  SECTION("the second attribute is 100") {
    as[1] = static_cast<CUmem_range_attribute>(100);
    v1 = v2 = -77;
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 2, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    CHECK((v1 == -77 && v2 == -77));
  }
  SECTION("ACCESSED_BY in 16 bytes") {
    int ab[4] = {-77, -77, -77, -77};
    data[1] = ab;
    sizes[1] = 16;
    as[1] = CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY;
    v1 = -77;
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 2, a.m, kMiB), CUDA_SUCCESS);
    CHECK(v1 == 1);
    CHECK((ab[0] == 0 && ab[1] == -2 && ab[2] == -2 && ab[3] == -2));
  }
  SECTION("device memory") {
    CUdeviceptr d = 0;
    REQUIRE_CU(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
    v1 = -77;
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 2, d, 4096), CUDA_ERROR_INVALID_VALUE);
    CHECK(v1 == -77);
    cuMemFree(d);
  }
  SECTION("the same attribute twice") {
    as[1] = CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY;
    v1 = v2 = -77;
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 2, a.m, kMiB), CUDA_SUCCESS);
    CHECK((v1 == 1 && v2 == 1));
  }
  SECTION("NULL arrays and a NULL element") {
    CHECK_CU(cuMemRangeGetAttributes(nullptr, sizes, as, 2, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemRangeGetAttributes(data, nullptr, as, 2, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, nullptr, 2, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemRangeGetAttributes(nullptr, nullptr, nullptr, 0, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    data[1] = nullptr;
    v1 = -77;
    CHECK_CU(cuMemRangeGetAttributes(data, sizes, as, 2, a.m, kMiB), CUDA_ERROR_INVALID_VALUE);
    CHECK(v1 == -77);
  }
}

// ---- runtime --------------------------------------------------------------------------------
TEST_CASE("cudaMemAdvise: the driver's codes", "[managed][advise][runtime]") {
  void* p = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p, 64 * kKiB, cudaMemAttachGlobal), cudaSuccess);
  Others o;
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetReadMostly, rtloc(1, 0)), cudaSuccess);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetPreferredLocation, rtloc(1, 0)), cudaSuccess);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetPreferredLocation, rtloc(1, 99)), cudaErrorInvalidValue);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetPreferredLocation, rtloc(1, -1)), cudaErrorInvalidValue);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetPreferredLocation, rtloc(2, 0)), cudaSuccess);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetPreferredLocation, rtloc(0, 0)), cudaErrorInvalidValue);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetPreferredLocation, rtloc(99, 0)), cudaErrorInvalidValue);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, cudaMemAdviseSetAccessedBy, rtloc(2, 0)), cudaSuccess);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, static_cast<cudaMemoryAdvise>(0), rtloc(1, 0)), cudaErrorInvalidValue);
  CHECK_RT(cudaMemAdvise(p, 64 * kKiB, static_cast<cudaMemoryAdvise>(100), rtloc(1, 0)), cudaErrorInvalidValue);
  CHECK_RT(cudaMemAdvise(p, 0, cudaMemAdviseSetReadMostly, rtloc(1, 0)), cudaErrorInvalidValue);
  CHECK_RT(cudaMemAdvise(p, 128 * kKiB, cudaMemAdviseSetReadMostly, rtloc(1, 0)), cudaErrorInvalidValue);
  for (auto& [name, q] : o.all()) {
    INFO(name);
    CHECK_RT(cudaMemAdvise(reinterpret_cast<void*>(q), 64 * kKiB, cudaMemAdviseSetReadMostly, rtloc(1, 0)),
             cudaErrorInvalidValue);
  }
  // Measured: HOST_NUMA passes and changes nothing visible.
  void* p2 = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p2, 64 * kKiB, cudaMemAttachGlobal), cudaSuccess);
  CHECK_RT(cudaMemAdvise(p2, 64 * kKiB, cudaMemAdviseSetReadMostly, rtloc(cudaMemLocationTypeHostNuma, host_numa())),
           cudaSuccess);
  CHECK_RT(cudaMemAdvise(p2, 64 * kKiB, cudaMemAdviseSetPreferredLocation,
                         rtloc(cudaMemLocationTypeHostNuma, host_numa())),
           cudaSuccess);
  CHECK(st(reinterpret_cast<CUdeviceptr>(p2), 64 * kKiB) == kFresh);
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);  // the last failure above
  CHECK_RT(cudaFree(p2), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaSuccess);
}

TEST_CASE("cudaMemPrefetchAsync: the driver's codes", "[managed][prefetch][runtime]") {
  void* p = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p, kMiB, cudaMemAttachGlobal), cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  Others o;
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB, rtloc(1, 0), 0, s), cudaSuccess);
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB, rtloc(2, 0), 0, s), cudaSuccess);
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB, rtloc(1, 99), 0, s), cudaErrorInvalidDevice);
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB, rtloc(1, -1), 0, s), cudaErrorInvalidDevice);
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB, rtloc(0, 0), 0, s), cudaErrorInvalidValue);
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB, rtloc(99, 0), 0, s), cudaErrorInvalidValue);
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB, rtloc(1, 0), 1, s), cudaErrorInvalidValue);
  CHECK_RT(cudaMemPrefetchAsync(p, 0, rtloc(1, 0), 0, s), cudaErrorInvalidValue);
  CHECK_RT(cudaMemPrefetchAsync(p, kMiB + 4096, rtloc(1, 0), 0, s), cudaErrorInvalidValue);
  for (auto& [name, q] : o.all()) {
    INFO(name);
    CHECK_RT(cudaMemPrefetchAsync(reinterpret_cast<void*>(q), 4096, rtloc(1, 0), 0, s), cudaErrorInvalidValue);
  }
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  // HOST_NUMA_CURRENT: recorded as such; the id is the calling thread's node.
  void* p2 = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p2, 64 * kKiB, cudaMemAttachGlobal), cudaSuccess);
  CHECK_RT(cudaMemPrefetchAsync(p2, 64 * kKiB, rtloc(cudaMemLocationTypeHostNumaCurrent, 0), 0, nullptr),
           cudaSuccess);
  CHECK_RT(cudaDeviceSynchronize(), cudaSuccess);
  int t = -77;
  CHECK_RT(cudaMemRangeGetAttribute(&t, 4, cudaMemRangeAttributeLastPrefetchLocationType, p2, 64 * kKiB),
           cudaSuccess);
  CHECK(t == cudaMemLocationTypeHostNumaCurrent);
  cudaGetLastError();
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  CHECK_RT(cudaFree(p2), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaSuccess);
}

TEST_CASE("cudaMemRangeGetAttribute(s): the driver's codes", "[managed][range][runtime]") {
  void* p = nullptr;
  REQUIRE_RT(cudaMallocManaged(&p, kMiB, cudaMemAttachGlobal), cudaSuccess);
  Others o;
  CHECK_RT(cudaMemAdvise(p, kMiB, cudaMemAdviseSetReadMostly, rtloc(1, 0)), cudaSuccess);
  CHECK_RT(cudaMemAdvise(p, kMiB, cudaMemAdviseSetAccessedBy, rtloc(1, 0)), cudaSuccess);
  int v = -77;
  CHECK_RT(cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, p, kMiB), cudaSuccess);
  CHECK(v == 1);
  CHECK_RT(cudaMemRangeGetAttribute(&v, 8, cudaMemRangeAttributeReadMostly, p, kMiB), cudaErrorInvalidValue);
  CHECK_RT(cudaMemRangeGetAttribute(&v, 4, static_cast<cudaMemRangeAttribute>(100), p, kMiB), cudaErrorInvalidValue);
  CHECK_RT(cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, p, 0), cudaErrorInvalidValue);
  CHECK_RT(cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, p, kMiB + 4096), cudaErrorInvalidValue);
  CHECK_RT(cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, reinterpret_cast<void*>(o.dev), 4096),
           cudaErrorInvalidValue);
  CHECK_RT(cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, o.pageable, 4096), cudaErrorInvalidValue);
  CHECK_RT(cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, nullptr, 4096), cudaErrorInvalidValue);
  CHECK_RT(cudaMemRangeGetAttribute(nullptr, 4, cudaMemRangeAttributeReadMostly, p, kMiB), cudaErrorInvalidValue);
  int ab[4] = {-77, -77, -77, -77};
  CHECK_RT(cudaMemRangeGetAttribute(ab, 16, cudaMemRangeAttributeAccessedBy, p, kMiB), cudaSuccess);
  CHECK((ab[0] == 0 && ab[1] == -2 && ab[2] == -2 && ab[3] == -2));
  int v1 = -77, v2 = -77;
  void* data[2] = {&v1, &v2};
  size_t sizes[2] = {4, 4};
  cudaMemRangeAttribute as[2] = {cudaMemRangeAttributeReadMostly, cudaMemRangeAttributePreferredLocation};
  CHECK_RT(cudaMemRangeGetAttributes(data, sizes, as, 2, p, kMiB), cudaSuccess);
  CHECK((v1 == 1 && v2 == -2));
  CHECK_RT(cudaMemRangeGetAttributes(data, sizes, as, 0, p, kMiB), cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK_RT(cudaFree(p), cudaSuccess);
}
