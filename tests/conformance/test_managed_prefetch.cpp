// Prefetches of managed memory: cuMemPrefetchAsync (the CUDA 13 CUmemLocation form) to each kind
// of location, over ranges, on every kind of stream, in stream order, and memory from a managed
// pool. Expected codes and values measured on NVIDIA's driver 580.159.04 (H200, CUDA 13.0;
// tools/probe/probe_managed.cpp, whose keys the tables below copy: "st{...}" is the range state
// read back attribute by attribute). Advice: test_managed_advise.cpp; range queries and the
// runtime's forms: test_managed_range.cpp.
#include <chrono>
#include <string>
#include <thread>

#include "common.hpp"
#include "managed_advise.hpp"

using namespace managed_conf;

namespace {
void CUDA_CB sleep_200ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }
}  // namespace

// ---- cuMemPrefetchAsync ---------------------------------------------------------------------
TEST_CASE("cuMemPrefetchAsync: each kind of location, and what it records", "[managed][prefetch]") {
  conformance_primary_ctx();
  const size_t N = kMiB;
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  const std::string numa = std::to_string(host_numa());
  struct Row {
    const char* loc;
    std::string expect;
  } rows[] = {
      {"dev0", "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}"},
      {"dev99", "CUDA_ERROR_INVALID_DEVICE"},
      {"devM1", "CUDA_ERROR_INVALID_DEVICE"},
      {"host", "st{rm=0 pl=-2 ab=[-2,-2] lp=-1 plt=0 pli=-2 lpt=2 lpi=-1}"},
      {"host5", "st{rm=0 pl=-2 ab=[-2,-2] lp=-1 plt=0 pli=-2 lpt=2 lpi=-1}"},
      {"hostNuma", "st{rm=0 pl=-2 ab=[-2,-2] lp=-1 plt=0 pli=-2 lpt=3 lpi=" + numa + "}"},
      {"hostNuma99", "CUDA_ERROR_INVALID_VALUE"},
      {"none", "CUDA_ERROR_INVALID_VALUE"},
      {"type99", "CUDA_ERROR_INVALID_VALUE"},
  };
  for (const Row& r : rows) {
    INFO(r.loc);
    Managed m(N);
    CUresult e = cuMemPrefetchAsync(m, N, named(r.loc), 0, s);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK(then_st(e, m, N) == r.expect);
  }
  {
    // HOST_NUMA_CURRENT: the id is ignored; the node reported is the calling thread's.
    Managed m(N);
    CHECK_CU(cuMemPrefetchAsync(m, N, named("hostNumaCur"), 0, s), CUDA_SUCCESS);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    int t = -77, id = -77, lp = -77;
    CHECK_CU(cuMemRangeGetAttribute(&t, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, m, N), CUDA_SUCCESS);
    CHECK_CU(cuMemRangeGetAttribute(&id, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, m, N), CUDA_SUCCESS);
    CHECK_CU(cuMemRangeGetAttribute(&lp, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, N), CUDA_SUCCESS);
    CHECK(t == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
    CHECK(lp == -1);
    CHECK(id >= 0);
  }
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("cuMemPrefetchAsync: flags other than 0", "[managed][prefetch]") {
  conformance_primary_ctx();
  Managed m(kMiB);
  for (unsigned f : {1u, 2u, 0x80000000u}) {
    INFO("flags " << f);
    CHECK_CU(cuMemPrefetchAsync(m, kMiB, dev0(), f, nullptr), CUDA_ERROR_INVALID_VALUE);
  }
  CHECK(st(m, kMiB) == kFresh);
}

TEST_CASE("cuMemPrefetchAsync: ranges; the prefetched pages alone report it", "[managed][prefetch]") {
  conformance_primary_ctx();
  const size_t N = kMiB;
  const std::string dev = "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}";
  struct Rc {
    const char* name;
    size_t off, len;
    std::string whole;  // the whole allocation's state afterwards
  } rs[] = {{"whole", 0, N, dev},
            {"len0", 0, 0, "CUDA_ERROR_INVALID_VALUE"},
            {"wholePlus1", 0, N + 1, "CUDA_ERROR_INVALID_VALUE"},
            {"wholePlus4096", 0, N + 4096, "CUDA_ERROR_INVALID_VALUE"},
            {"half", 0, N / 2, kFresh},
            {"interior4k", 4096, 4096, kFresh},
            {"odd1len100", 1, 100, kFresh},
            {"end4096", N, 4096, "CUDA_ERROR_INVALID_VALUE"}};
  for (const Rc& rc : rs) {
    INFO(rc.name);
    Managed m(N);
    CUresult e = cuMemPrefetchAsync(m + rc.off, rc.len, dev0(), 0, nullptr);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK(then_st(e, m, N) == rc.whole);
    if (e == CUDA_SUCCESS && rc.len != N) CHECK(st(m + rc.off, rc.len) == dev);
  }
}

TEST_CASE("cuMemPrefetchAsync: every kind of stream", "[managed][prefetch]") {
  conformance_primary_ctx();
  CUstream created = nullptr, nb = nullptr;
  REQUIRE_CU(cuStreamCreate(&created, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Managed m(kMiB);
  for (CUstream s : {CUstream(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, created, nb}) {
    CHECK_CU(cuMemPrefetchAsync(m, kMiB, dev0(), 0, s), CUDA_SUCCESS);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  }
  CHECK_CU(cuStreamDestroy(created), CUDA_SUCCESS);
  CHECK_CU(cuStreamDestroy(nb), CUDA_SUCCESS);
}

TEST_CASE("cuMemPrefetchAsync: a sequence of destinations, the last one counts per page", "[managed][prefetch]") {
  conformance_primary_ctx();
  const size_t N = kMiB;
  Managed m(N);
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  const std::string numa = std::to_string(host_numa());
  struct Step {
    const char* name;
    CUmemLocation l;
    size_t len;
    std::string expect;
  } steps[] = {
      {"dev0", dev0(), N, "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}"},
      {"host", host(), N, "st{rm=0 pl=-2 ab=[-2,-2] lp=-1 plt=0 pli=-2 lpt=2 lpi=-1}"},
      {"hostNuma", named("hostNuma"), N, "st{rm=0 pl=-2 ab=[-2,-2] lp=-1 plt=0 pli=-2 lpt=3 lpi=" + numa + "}"},
      {"dev0again", dev0(), N, "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}"},
      {"hostFirstHalf", host(), N / 2, kFresh},
  };
  for (const Step& st_ : steps) {
    INFO(st_.name);
    CHECK(then_st(cuMemPrefetchAsync(m, st_.len, st_.l, 0, s), m, N) == st_.expect);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  }
  CHECK(st(m, N / 2) == "st{rm=0 pl=-2 ab=[-2,-2] lp=-1 plt=0 pli=-2 lpt=2 lpi=-1}");
  CHECK(st(m + N / 2, N / 2) == "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}");
  // Host access does not change what was recorded.
  CHECK_CU(cuMemPrefetchAsync(m, N, dev0(), 0, s), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  std::memset(reinterpret_cast<void*>(m.p), 2, N);
  CHECK(st(m, N) == "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}");
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("cuMemPrefetchAsync: recorded when called, run in stream order", "[managed][prefetch]") {
  conformance_primary_ctx();
  const size_t N = kMiB;
  Managed m(N);
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  CHECK_CU(cuMemPrefetchAsync(m, N, host(), 0, s), CUDA_SUCCESS);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  REQUIRE_CU(cuLaunchHostFunc(s, sleep_200ms, nullptr), CUDA_SUCCESS);
  auto t0 = std::chrono::steady_clock::now();
  CHECK_CU(cuMemPrefetchAsync(m, N, dev0(), 0, s), CUDA_SUCCESS);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100));  // does not wait
  CHECK(st(m, N) == "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}");  // measured: before it runs
  CHECK_CU(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
  CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
  CHECK(st(m, N) == "st{rm=0 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}");
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_CASE("cuMemPrefetchAsync: leaves the advice alone", "[managed][prefetch]") {
  conformance_primary_ctx();
  const size_t N = kMiB;
  Managed m(N);
  CHECK_CU(cuMemAdvise(m, N, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host()), CUDA_SUCCESS);
  CHECK_CU(cuMemPrefetchAsync(m, N, dev0(), 0, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(st(m, N) == "st{rm=0 pl=-1 ab=[-2,-2] lp=0 plt=2 pli=-1 lpt=1 lpi=0}");
  CHECK_CU(cuMemAdvise(m, N, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_SUCCESS);
  CHECK_CU(cuMemPrefetchAsync(m, N, dev0(), 0, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(st(m, N) == "st{rm=1 pl=-1 ab=[-2,-2] lp=0 plt=2 pli=-1 lpt=1 lpi=0}");
}

TEST_CASE("advice and prefetches on memory attached to the host or to one stream", "[managed][advise]") {
  conformance_primary_ctx();
  CUstream s = nullptr, other = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuStreamCreate(&other, 0), CUDA_SUCCESS);
  {
    Managed m(64 * kKiB);
    CHECK_CU(cuStreamAttachMemAsync(s, m, 0, CU_MEM_ATTACH_SINGLE), CUDA_SUCCESS);
    CHECK_CU(cuMemPrefetchAsync(m, 64 * kKiB, dev0(), 0, other), CUDA_SUCCESS);
    CHECK_CU(cuMemAdvise(m, 64 * kKiB, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_SUCCESS);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK(st(m, 64 * kKiB) == "st{rm=1 pl=-2 ab=[-2,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}");
  }
  {
    Managed m(64 * kKiB, CU_MEM_ATTACH_HOST);
    CHECK_CU(cuMemPrefetchAsync(m, 64 * kKiB, dev0(), 0, nullptr), CUDA_SUCCESS);
    CHECK_CU(cuMemAdvise(m, 64 * kKiB, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0()), CUDA_SUCCESS);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK(st(m, 64 * kKiB) == "st{rm=0 pl=-2 ab=[0,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}");
  }
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  CHECK_CU(cuStreamDestroy(other), CUDA_SUCCESS);
}

TEST_CASE("cuMemPrefetchAsync: a stream of another context", "[managed][prefetch]") {
  CUcontext primary = conformance_primary_ctx();
  Managed m(kMiB);
  CUcontext c2 = nullptr;
  REQUIRE_CU(cuCtxCreate(&c2, nullptr, 0, 0), CUDA_SUCCESS);
  CUstream s2 = nullptr;
  REQUIRE_CU(cuStreamCreate(&s2, 0), CUDA_SUCCESS);
  REQUIRE_CU(cuCtxSetCurrent(primary), CUDA_SUCCESS);
  CHECK_CU(cuMemPrefetchAsync(m, kMiB, dev0(), 0, s2), CUDA_SUCCESS);  // measured
  CHECK_CU(cuStreamSynchronize(s2), CUDA_SUCCESS);
  CHECK_CU(cuStreamDestroy(s2), CUDA_SUCCESS);
  CHECK_CU(cuCtxDestroy(c2), CUDA_SUCCESS);
  CHECK_CU(cuCtxSetCurrent(primary), CUDA_SUCCESS);
}

// ---- memory from a managed pool (cuMemPoolCreate, CU_MEM_ALLOCATION_TYPE_MANAGED) -----------
// Measured on the H200 (tools/probe/probe_managed_pool.py): it is managed memory to pointer
// queries; range queries and prefetches work on it; cuMemAdvise is NOT_SUPPORTED; and the pool's
// location is every allocation's preferred location (cuda.core's ManagedMemoryResource relies on
// this for its preferred_location option).
TEST_CASE("managed-pool memory: the pool's location is the preferred location; prefetch yes, advise no",
          "[managed][advise][mempool]") {
  conformance_primary_ctx();
  const std::string numa = std::to_string(host_numa());
  struct Row {
    const char* name;
    int type, id;
    std::string fresh;
  } rows[] = {
      {"no location", CU_MEM_LOCATION_TYPE_INVALID, 0, kFresh},
      {"device 0", CU_MEM_LOCATION_TYPE_DEVICE, 0, "st{rm=0 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {"host", CU_MEM_LOCATION_TYPE_HOST, 0, "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=2 pli=0 lpt=0 lpi=-2}"},
      {"host NUMA", CU_MEM_LOCATION_TYPE_HOST_NUMA, host_numa(),
       "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=3 pli=" + numa + " lpt=0 lpi=-2}"},
  };
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (const Row& r : rows) {
    INFO(r.name);
    CUmemPoolProps pp;
    std::memset(&pp, 0, sizeof pp);
    pp.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    pp.location = loc(r.type, r.id);
    CUmemoryPool pool = nullptr;
    REQUIRE_CU(cuMemPoolCreate(&pool, &pp), CUDA_SUCCESS);
    const size_t N = 2 * kMiB;
    CUdeviceptr p = 0;
    REQUIRE_CU(cuMemAllocFromPoolAsync(&p, N, pool, s), CUDA_SUCCESS);
    REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    unsigned managed = 0;
    CHECK_CU(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p), CUDA_SUCCESS);
    CHECK(managed == 1);
    CHECK(st(p, N) == r.fresh);
    CHECK(st(p + 4 * kKiB, 4 * kKiB) == r.fresh);
    for (int advice = CU_MEM_ADVISE_SET_READ_MOSTLY; advice <= CU_MEM_ADVISE_UNSET_ACCESSED_BY; ++advice) {
      INFO("advice " << advice);
      CHECK_CU(cuMemAdvise(p, N, static_cast<CUmem_advise>(advice), dev0()), CUDA_ERROR_NOT_SUPPORTED);
      CHECK_CU(cuMemAdvise(p, N, static_cast<CUmem_advise>(advice), host()), CUDA_ERROR_NOT_SUPPORTED);
    }
    CHECK_CU(cuMemAdvise(p + 4 * kKiB, 4 * kKiB, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_ERROR_NOT_SUPPORTED);
    CHECK(st(p, N) == r.fresh);  // nothing changed
    // Prefetches are recorded as on cuMemAllocManaged memory, the preferred location kept.
    CHECK_CU(cuMemPrefetchAsync(p, N, dev0(), 0, s), CUDA_SUCCESS);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    int lpt = -77, lpi = -77;
    CHECK_CU(cuMemRangeGetAttribute(&lpt, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, p, N), CUDA_SUCCESS);
    CHECK_CU(cuMemRangeGetAttribute(&lpi, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, p, N), CUDA_SUCCESS);
    CHECK(lpt == CU_MEM_LOCATION_TYPE_DEVICE);
    CHECK(lpi == 0);
    CHECK_CU(cuMemPrefetchAsync(p, 4 * kKiB, host(), 0, s), CUDA_SUCCESS);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK_CU(cuMemRangeGetAttribute(&lpt, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, p, 4 * kKiB),
             CUDA_SUCCESS);
    CHECK(lpt == CU_MEM_LOCATION_TYPE_HOST);
    // Pages that disagree answer no location.
    CHECK_CU(cuMemRangeGetAttribute(&lpt, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, p, N), CUDA_SUCCESS);
    CHECK(lpt == 0);
    // Pool memory cannot be attached to a stream.
    CHECK_CU(cuStreamAttachMemAsync(s, p, 0, CU_MEM_ATTACH_SINGLE), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuStreamAttachMemAsync(s, p, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
    // A new allocation at the same address starts with no prefetch.
    CHECK_CU(cuMemFreeAsync(p, s), CUDA_SUCCESS);
    CUdeviceptr q = 0;
    REQUIRE_CU(cuMemAllocFromPoolAsync(&q, N, pool, s), CUDA_SUCCESS);
    REQUIRE_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    if (q == p) CHECK(st(q, N) == r.fresh);
    CHECK_CU(cuMemFreeAsync(q, s), CUDA_SUCCESS);
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK_CU(cuMemPoolDestroy(pool), CUDA_SUCCESS);
  }
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
}
