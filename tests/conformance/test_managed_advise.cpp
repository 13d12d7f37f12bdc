// Advice, prefetches and range attributes of managed memory: cuMemAdvise and cuMemPrefetchAsync
// (the CUDA 13 CUmemLocation forms), cuMemRangeGetAttribute(s), and the runtime's cudaMemAdvise,
// cudaMemPrefetchAsync and cudaMemRangeGetAttribute(s). Expected codes and values measured on
// NVIDIA's driver 580.159.04 (H200, CUDA 13.0; tools/probe/probe_managed.cpp, whose keys the
// tables below copy: "st{...}" is the range state read back attribute by attribute).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "common.hpp"
#include "managed_common.hpp"
#include "multiprocess.hpp"

namespace {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

CUmemLocation loc(int type, int id) {
  CUmemLocation l;
  std::memset(&l, 0, sizeof l);
  l.type = static_cast<CUmemLocationType>(type);
  l.id = id;
  return l;
}
cudaMemLocation rtloc(int type, int id) {
  cudaMemLocation l;
  std::memset(&l, 0, sizeof l);
  l.type = static_cast<cudaMemLocationType>(type);
  l.id = id;
  return l;
}
CUmemLocation dev0() { return loc(CU_MEM_LOCATION_TYPE_DEVICE, 0); }
CUmemLocation host() { return loc(CU_MEM_LOCATION_TYPE_HOST, 0); }

// The host NUMA node device 0 is attached to (the probe's "hostNuma" id).
int host_numa() {
  int v = -1;
  cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0);
  return v < 0 ? 0 : v;
}

// The probe's named locations.
CUmemLocation named(const std::string& n) {
  if (n == "dev0") return loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  if (n == "dev99") return loc(CU_MEM_LOCATION_TYPE_DEVICE, 99);
  if (n == "devM1") return loc(CU_MEM_LOCATION_TYPE_DEVICE, -1);
  if (n == "host") return loc(CU_MEM_LOCATION_TYPE_HOST, 0);
  if (n == "host5") return loc(CU_MEM_LOCATION_TYPE_HOST, 5);
  if (n == "hostNuma") return loc(CU_MEM_LOCATION_TYPE_HOST_NUMA, host_numa());
  if (n == "hostNuma99") return loc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 99);
  if (n == "hostNumaCur") return loc(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0);
  if (n == "none") return loc(CU_MEM_LOCATION_TYPE_INVALID, 0);
  return loc(99, 0);  // "type99"
}

std::string num(CUresult r, int v) { return r == CUDA_SUCCESS ? std::to_string(v) : cu_name(r); }

// The range state, as the probe prints it.
std::string st(CUdeviceptr p, size_t n) {
  auto g = [&](CUmem_range_attribute a) {
    int v = -77;
    CUresult r = cuMemRangeGetAttribute(&v, 4, a, p, n);
    return num(r, v);
  };
  int ab[2] = {-77, -77};
  CUresult r = cuMemRangeGetAttribute(ab, 8, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, n);
  std::string abs = r ? std::string(cu_name(r)) : "[" + std::to_string(ab[0]) + "," + std::to_string(ab[1]) + "]";
  return "st{rm=" + g(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) + " pl=" + g(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION) +
         " ab=" + abs + " lp=" + g(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION) +
         " plt=" + g(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE) +
         " pli=" + g(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID) +
         " lpt=" + g(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE) +
         " lpi=" + g(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID) + "}";
}
// A call's code, then (on success) the state: the probe's "CUDA_SUCCESS st{...}" minus the name.
std::string then_st(CUresult r, CUdeviceptr p, size_t n) { return r ? cu_name(r) : st(p, n); }

const std::string kFresh = "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}";

// Memory that is not managed: device, pinned, pageable, NULL, a freed managed allocation.
struct Others {
  CUdeviceptr dev = 0;
  void* pinned = nullptr;
  void* pageable = nullptr;
  CUdeviceptr freed = 0;
  Others() {
    REQUIRE_CU(cuMemAlloc(&dev, kMiB), CUDA_SUCCESS);
    REQUIRE_CU(cuMemAllocHost(&pinned, kMiB), CUDA_SUCCESS);
    pageable = std::aligned_alloc(4096, kMiB);
    REQUIRE_CU(cuMemAllocManaged(&freed, kMiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
    REQUIRE_CU(cuMemFree(freed), CUDA_SUCCESS);
  }
  ~Others() {
    cuMemFree(dev);
    cuMemFreeHost(pinned);
    std::free(pageable);
  }
  std::vector<std::pair<const char*, CUdeviceptr>> all() const {
    return {{"device", dev},
            {"pinned", reinterpret_cast<CUdeviceptr>(pinned)},
            {"pageable", reinterpret_cast<CUdeviceptr>(pageable)},
            {"NULL", 0},
            {"freed managed", freed}};
  }
};

void CUDA_CB sleep_200ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

}  // namespace

// ---- cuMemAdvise ----------------------------------------------------------------------------
TEST_CASE("managed memory starts with no advice and no prefetch", "[managed][advise]") {
  conformance_primary_ctx();
  Managed m(64 * kKiB);
  CHECK(st(m, 64 * kKiB) == kFresh);
}

TEST_CASE("cuMemAdvise: each advice against each kind of location", "[managed][advise]") {
  conformance_primary_ctx();
  struct Row {
    int advice;
    const char* loc;
    const char* expect;
  } rows[] = {
      {1, "dev0", "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "dev99", "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "devM1", "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "host", "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "host5", "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "hostNuma", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "hostNuma99", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "hostNumaCur", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {1, "none", "CUDA_ERROR_INVALID_VALUE"},
      {1, "type99", "CUDA_ERROR_INVALID_VALUE"},
      {2, "dev0", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "dev99", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "devM1", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "host", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "host5", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "hostNuma", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "hostNuma99", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "hostNumaCur", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {2, "none", "CUDA_ERROR_INVALID_VALUE"},
      {2, "type99", "CUDA_ERROR_INVALID_VALUE"},
      {3, "dev0", "st{rm=0 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {3, "dev99", "CUDA_ERROR_INVALID_VALUE"},
      {3, "devM1", "CUDA_ERROR_INVALID_VALUE"},
      {3, "host", "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=2 pli=-1 lpt=0 lpi=-2}"},
      {3, "host5", "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=2 pli=-1 lpt=0 lpi=-2}"},
      {3, "hostNuma", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {3, "hostNuma99", "CUDA_ERROR_INVALID_VALUE"},
      {3, "hostNumaCur", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {3, "none", "CUDA_ERROR_INVALID_VALUE"},
      {3, "type99", "CUDA_ERROR_INVALID_VALUE"},
      {4, "dev0", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "dev99", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "devM1", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "host", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "host5", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "hostNuma", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "hostNuma99", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "hostNumaCur", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {4, "none", "CUDA_ERROR_INVALID_VALUE"},
      {4, "type99", "CUDA_ERROR_INVALID_VALUE"},
      {5, "dev0", "st{rm=0 pl=-2 ab=[0,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {5, "dev99", "CUDA_ERROR_INVALID_VALUE"},
      {5, "devM1", "CUDA_ERROR_INVALID_VALUE"},
      {5, "host", "st{rm=0 pl=-2 ab=[-1,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {5, "host5", "st{rm=0 pl=-2 ab=[-1,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {5, "hostNuma", "CUDA_ERROR_INVALID_VALUE"},
      {5, "hostNuma99", "CUDA_ERROR_INVALID_VALUE"},
      {5, "hostNumaCur", "CUDA_ERROR_INVALID_VALUE"},
      {5, "none", "CUDA_ERROR_INVALID_VALUE"},
      {5, "type99", "CUDA_ERROR_INVALID_VALUE"},
      {6, "dev0", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {6, "dev99", "CUDA_ERROR_INVALID_VALUE"},
      {6, "devM1", "CUDA_ERROR_INVALID_VALUE"},
      {6, "host", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {6, "host5", "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {6, "hostNuma", "CUDA_ERROR_INVALID_VALUE"},
      {6, "hostNuma99", "CUDA_ERROR_INVALID_VALUE"},
      {6, "hostNumaCur", "CUDA_ERROR_INVALID_VALUE"},
      {6, "none", "CUDA_ERROR_INVALID_VALUE"},
      {6, "type99", "CUDA_ERROR_INVALID_VALUE"},
  };
  const size_t n = 64 * kKiB;
  for (const Row& r : rows) {
    INFO("advice " << r.advice << " location " << r.loc);
    Managed m(n);  // a fresh allocation each: the probe's advise.m.*
    CHECK(then_st(cuMemAdvise(m, n, static_cast<CUmem_advise>(r.advice), named(r.loc)), m, n) == r.expect);
  }
}

TEST_CASE("cuMemAdvise: advice values that are not CUmem_advise", "[managed][advise]") {
  conformance_primary_ctx();
  Managed m(64 * kKiB);
  for (int advice : {0, 7, 100}) {
    INFO("advice " << advice);
    for (const char* l : {"dev0", "host", "hostNuma", "none"})
      CHECK_CU(cuMemAdvise(m, 64 * kKiB, static_cast<CUmem_advise>(advice), named(l)), CUDA_ERROR_INVALID_VALUE);
  }
  CHECK(st(m, 64 * kKiB) == kFresh);
}

TEST_CASE("cuMemAdvise: one allocation advised again and again", "[managed][advise]") {
  conformance_primary_ctx();
  const size_t n = 64 * kKiB;
  Managed m(n);
  const CUmemLocation numa = loc(CU_MEM_LOCATION_TYPE_HOST_NUMA, host_numa());
  const CUmemLocation numa_cur = loc(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0);
  struct Step {
    const char* name;
    int advice;
    CUmemLocation l;
    const char* expect;
  } steps[] = {
      {"setRM", 1, dev0(), "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"setRMagain", 1, dev0(), "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"unsetRM", 2, dev0(), "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"prefDev0", 3, dev0(), "st{rm=0 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {"prefHost", 3, host(), "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=2 pli=-1 lpt=0 lpi=-2}"},
      {"prefHostNuma", 3, numa, "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=2 pli=-1 lpt=0 lpi=-2}"},
      {"prefHostNumaCur", 3, numa_cur, "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=2 pli=-1 lpt=0 lpi=-2}"},
      {"unsetPrefDev99", 4, loc(CU_MEM_LOCATION_TYPE_DEVICE, 99), kFresh.c_str()},
      {"unsetPref", 4, dev0(), kFresh.c_str()},
      {"abDev0", 5, dev0(), "st{rm=0 pl=-2 ab=[0,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"abHost", 5, host(), "st{rm=0 pl=-2 ab=[0,-1] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"unsetAbDev0", 6, dev0(), "st{rm=0 pl=-2 ab=[-1,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"unsetAbHost", 6, host(), kFresh.c_str()},
      {"unsetAbNotSet", 6, dev0(), kFresh.c_str()},
      {"numa.rmDev0", 1, dev0(), "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"numa.rmHostNuma", 1, numa, "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"numa.unsetRmHostNuma", 2, numa, "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"numa.unsetRmHostNumaCur", 2, numa_cur, "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"numa.unsetRmDev0", 2, dev0(), kFresh.c_str()},
      {"numa.prefDev0", 3, dev0(), "st{rm=0 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {"numa.prefHostNuma", 3, numa, "st{rm=0 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {"numa.unsetPrefHostNuma", 4, numa, "st{rm=0 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {"numa.unsetPrefHostNuma99", 4, loc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 99),
       "st{rm=0 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {"numa.unsetPrefNone", 4, loc(CU_MEM_LOCATION_TYPE_INVALID, 0), "CUDA_ERROR_INVALID_VALUE"},
      {"numa.unsetPrefDev0", 4, dev0(), kFresh.c_str()},
      {"rmAndPrefAndAb.rm", 1, dev0(), "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"rmAndPrefAndAb.pref", 3, dev0(), "st{rm=1 pl=0 ab=[-2,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
      {"rmAndPrefAndAb.ab", 5, dev0(), "st{rm=1 pl=0 ab=[0,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}"},
  };
  for (const Step& s : steps) {
    INFO(s.name);
    CHECK(then_st(cuMemAdvise(m, n, static_cast<CUmem_advise>(s.advice), s.l), m, n) == s.expect);
  }
}

TEST_CASE("cuMemAdvise: ranges inside, at the edges of and past a managed allocation", "[managed][advise]") {
  conformance_primary_ctx();
  const size_t M = kMiB;
  struct Rc {
    const char* name;
    size_t off, len;
    const char* expect;  // the whole allocation's state after SET_READ_MOSTLY on the range
  } rs[] = {
      {"whole", 0, M, "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}"},
      {"firstHalf", 0, M / 2, kFresh.c_str()},  // pages that differ: the defaults
      {"interior4k", 4096, 4096, kFresh.c_str()},
      {"len0", 0, 0, "CUDA_ERROR_INVALID_VALUE"},
      {"wholePlus1", 0, M + 1, "CUDA_ERROR_INVALID_VALUE"},
      {"wholePlus4096", 0, M + 4096, "CUDA_ERROR_INVALID_VALUE"},
      {"wholePlus1MiB", 0, 2 * M, "CUDA_ERROR_INVALID_VALUE"},
      {"odd1len100", 1, 100, kFresh.c_str()},
      {"len1", 0, 1, kFresh.c_str()},
      {"end4096", M, 4096, "CUDA_ERROR_INVALID_VALUE"},
      {"lastByte", M - 1, 1, kFresh.c_str()},
      {"lastByteLen2", M - 1, 2, "CUDA_ERROR_INVALID_VALUE"},
  };
  for (const Rc& rc : rs) {
    INFO(rc.name);
    Managed m(M);
    CHECK(then_st(cuMemAdvise(m + rc.off, rc.len, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), m, M) == rc.expect);
    const bool ok = std::string(rc.expect).rfind("st{", 0) == 0;
    CHECK_CU(cuMemAdvise(m + rc.off, rc.len, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev0()),
             ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuMemAdvise: advice is per page; a range query answers only for pages that agree", "[managed][advise]") {
  conformance_primary_ctx();
  const size_t M = kMiB;
  Managed m(M);
  CHECK_CU(cuMemAdvise(m, M / 2, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_SUCCESS);
  CHECK_CU(cuMemAdvise(m, M / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev0()), CUDA_SUCCESS);
  CHECK_CU(cuMemAdvise(m + M / 2, M / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host()), CUDA_SUCCESS);
  CHECK_CU(cuMemAdvise(m, M / 2, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0()), CUDA_SUCCESS);
  CHECK(st(m, M) == kFresh);
  CHECK(st(m, M / 2) == "st{rm=1 pl=0 ab=[0,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}");
  CHECK(st(m + M / 2, M / 2) == "st{rm=0 pl=-1 ab=[-2,-2] lp=-2 plt=2 pli=-1 lpt=0 lpi=-2}");
  CHECK(st(m + 10, 1) == "st{rm=1 pl=0 ab=[0,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}");
  // Measured: 8 KiB straddling the halves (one page of each) answers the first page's advice:
  // the page holding a range's last byte does not count unless it is also the first.
  CHECK(st(m + M / 2 - 4096, 8192) == "st{rm=1 pl=0 ab=[0,-2] lp=-2 plt=1 pli=0 lpt=0 lpi=-2}");
  // With the other half never advised, the whole range has no preferred location: measured for an
  // allocation alone in its 2 MiB block (advice.partial2). Next to a live allocation in the same block
  // the H200 answered the advised half's location instead, so the first one goes first.
  m.reset();
  Managed m2(M);
  CHECK_CU(cuMemAdvise(m2, M / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host()), CUDA_SUCCESS);
  CHECK(st(m2, M) == kFresh);
}

TEST_CASE("cuMemAdvise: a range running from one managed allocation into the next", "[managed][advise]") {
  conformance_primary_ctx();
  Managed a(64 * kKiB), b(64 * kKiB);
  // Whether or not b follows a, a range past a's end is refused, and nothing is applied.
  CHECK_CU(cuMemAdvise(a, 128 * kKiB, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_ERROR_INVALID_VALUE);
  CHECK(st(a, 64 * kKiB) == kFresh);
  CHECK(st(b, 64 * kKiB) == kFresh);
  CHECK(st(a, 128 * kKiB) == std::string("st{rm=CUDA_ERROR_INVALID_VALUE pl=CUDA_ERROR_INVALID_VALUE "
                                         "ab=CUDA_ERROR_INVALID_VALUE lp=CUDA_ERROR_INVALID_VALUE "
                                         "plt=CUDA_ERROR_INVALID_VALUE pli=CUDA_ERROR_INVALID_VALUE "
                                         "lpt=CUDA_ERROR_INVALID_VALUE lpi=CUDA_ERROR_INVALID_VALUE}"));
}

TEST_CASE("cuMemAdvise: a sub-page allocation's requested size bounds the range", "[managed][advise]") {
  conformance_primary_ctx();
  Managed a(4097);
  CHECK_CU(cuMemAdvise(a, 4097, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_SUCCESS);
  CHECK_CU(cuMemAdvise(a, 4608, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuMemAdvise(a, 8192, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_ERROR_INVALID_VALUE);
  CHECK(st(a, 4097) == "st{rm=1 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}");
  CHECK_CU(cuMemPrefetchAsync(a, 4097, dev0(), 0, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuMemPrefetchAsync(a, 4608, dev0(), 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
}

TEST_CASE("cuMemAdvise, cuMemPrefetchAsync, cuMemRangeGetAttribute: memory that is not managed",
          "[managed][advise]") {
  conformance_primary_ctx();
  Others o;
  for (auto& [name, p] : o.all()) {
    INFO(name);
    for (int advice = 1; advice <= 6; ++advice)
      CHECK_CU(cuMemAdvise(p, 64 * kKiB, static_cast<CUmem_advise>(advice), dev0()), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemAdvise(p, 0, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemAdvise(p, 64 * kKiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host()), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemPrefetchAsync(p, 64 * kKiB, dev0(), 0, nullptr), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemPrefetchAsync(p, 64 * kKiB, host(), 0, nullptr), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuMemPrefetchAsync(p, 0, dev0(), 0, nullptr), CUDA_ERROR_INVALID_VALUE);
    for (int a = 1; a <= 8; ++a) {
      unsigned char buf[12];
      std::memset(buf, 0xab, sizeof buf);
      CHECK_CU(cuMemRangeGetAttribute(buf, a == 3 ? 8 : 4, static_cast<CUmem_range_attribute>(a), p, 64 * kKiB),
               CUDA_ERROR_INVALID_VALUE);
      CHECK(buf[0] == 0xab);
    }
    int v = -77;
    CHECK_CU(cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 0), CUDA_ERROR_INVALID_VALUE);
  }
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
}

TEST_CASE("cuMemAdvise, cuMemPrefetchAsync, cuMemRangeGetAttribute(s): no current context", "[managed][advise]") {
  conformance_primary_ctx();
  Managed m(64 * kKiB);
  const CUdeviceptr p = m;
  CUresult a = CUDA_SUCCESS, f = CUDA_SUCCESS, g = CUDA_SUCCESS, gs = CUDA_SUCCESS;
  std::thread([&] {  // a new thread has no current context
    a = cuMemAdvise(p, 64 * kKiB, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0());
    f = cuMemPrefetchAsync(p, 64 * kKiB, dev0(), 0, nullptr);
    int v = -77;
    g = cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 64 * kKiB);
    void* data[1] = {&v};
    size_t sizes[1] = {4};
    CUmem_range_attribute attrs[1] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY};
    gs = cuMemRangeGetAttributes(data, sizes, attrs, 1, p, 64 * kKiB);
  }).join();
  CHECK_CU(a, CUDA_ERROR_INVALID_CONTEXT);
  CHECK_CU(f, CUDA_ERROR_INVALID_CONTEXT);
  CHECK_CU(g, CUDA_ERROR_INVALID_CONTEXT);
  CHECK_CU(gs, CUDA_ERROR_INVALID_CONTEXT);
  CHECK(st(m, 64 * kKiB) == kFresh);
}

MP_CHILD(advise_before_init) {
  int v = -77;
  void* data[1] = {&v};
  size_t sizes[1] = {4};
  CUmem_range_attribute attrs[1] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY};
  const CUdeviceptr p = 0x10000;
  ch.send_int(cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()));
  ch.send_int(cuMemPrefetchAsync(p, 4096, dev0(), 0, nullptr));
  ch.send_int(cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 4096));
  ch.send_int(cuMemRangeGetAttributes(data, sizes, attrs, 1, p, 4096));
  return 0;
}

TEST_CASE("cuMemAdvise, cuMemPrefetchAsync, cuMemRangeGetAttribute(s): before cuInit", "[managed][advise]") {
  auto c = mp::spawn("advise_before_init");
  for (const char* api : {"cuMemAdvise", "cuMemPrefetchAsync", "cuMemRangeGetAttribute", "cuMemRangeGetAttributes"}) {
    INFO(api);
    CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_NOT_INITIALIZED);
  }
  CHECK(c.wait() == 0);
}

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

// ---- the CUDA 8 forms (a CUdevice instead of a CUmemLocation) --------------------------------
TEST_CASE("cuMemAdvise and cuMemPrefetchAsync: the CUdevice forms", "[managed][advise]") {
  conformance_primary_ctx();
  using AdviseV1 = CUresult(CUDAAPI*)(CUdeviceptr, size_t, CUmem_advise, CUdevice);
  using PrefetchV1 = CUresult(CUDAAPI*)(CUdeviceptr, size_t, CUdevice, CUstream);
  void* fa = nullptr;
  void* fp = nullptr;
  CUdriverProcAddressQueryResult q{};
  REQUIRE_CU(cuGetProcAddress("cuMemAdvise", &fa, 8000, CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_SUCCESS);
  REQUIRE_CU(cuGetProcAddress("cuMemPrefetchAsync", &fp, 8000, CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_SUCCESS);
  REQUIRE(fa);
  REQUIRE(fp);
  auto advise = reinterpret_cast<AdviseV1>(fa);
  auto prefetch = reinterpret_cast<PrefetchV1>(fp);
  Managed m(64 * kKiB);
  CHECK_CU(advise(m, 64 * kKiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU), CUDA_SUCCESS);
  CHECK_CU(advise(m, 64 * kKiB, CU_MEM_ADVISE_SET_ACCESSED_BY, 0), CUDA_SUCCESS);
  CHECK_CU(prefetch(m, 64 * kKiB, 0, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(st(m, 64 * kKiB) == "st{rm=0 pl=-1 ab=[0,-2] lp=0 plt=2 pli=-1 lpt=1 lpi=0}");
  CHECK_CU(prefetch(m, 64 * kKiB, CU_DEVICE_CPU, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(st(m, 64 * kKiB) == "st{rm=0 pl=-1 ab=[0,-2] lp=-1 plt=2 pli=-1 lpt=2 lpi=-1}");
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

#if !CUDA_SHIM_REAL_BACKEND
// ---- pageable host memory on a device with PAGEABLE_MEMORY_ACCESS (an emulator profile) --------
MP_CHILD(advise_pageable) {
  child_primary_ctx();
  int attr = -1;
  cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0);
  ch.send_int(attr);
  const size_t n = 64 * 1024;
  void* h = std::aligned_alloc(4096, n);
  std::memset(h, 1, n);
  const auto p = reinterpret_cast<CUdeviceptr>(h);
  ch.send_int(cuMemAdvise(p, n, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()));
  ch.send_int(cuMemAdvise(p, n / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host()));
  ch.send_int(cuMemAdvise(p, n, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0()));
  ch.send_int(cuMemPrefetchAsync(p, n, dev0(), 0, nullptr));
  ch.send_int(cuCtxSynchronize());
  auto s = st(p, n);
  ch.send_int(s.size());
  ch.send(s.data(), s.size());
  s = st(p, n / 2);
  ch.send_int(s.size());
  ch.send(s.data(), s.size());
  // Not mapped, NULL, length 0, running into device memory: refused.
  void* gap = ::mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ::munmap(static_cast<char*>(gap) + 4096, 4096);
  ch.send_int(cuMemAdvise(reinterpret_cast<CUdeviceptr>(gap), 3 * 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()));
  ch.send_int(cuMemAdvise(0, n, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()));
  ch.send_int(cuMemAdvise(p, 0, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()));
  CUdeviceptr d = 0;
  cuMemAlloc(&d, 4096);
  ch.send_int(cuMemAdvise(d, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()));
  cuMemFree(d);
  std::free(h);
  return 0;
}

TEST_CASE("pageable host memory takes advice and prefetches where the device has pageable memory access",
          "[managed][advise][emulator]") {
  auto c = mp::spawn("advise_pageable", {"CUDA_SHIM_PAGEABLE_MEMORY_ACCESS=1"});
  CHECK(c.ch.recv_int() == 1);
  for (const char* call : {"advise rm", "advise pref half", "advise ab", "prefetch", "sync"}) {
    INFO(call);
    CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  }
  auto text = [&] {
    std::string s(static_cast<size_t>(c.ch.recv_int()), '\0');
    c.ch.recv(&s[0], s.size());
    return s;
  };
  CHECK(text() == "st{rm=1 pl=-2 ab=[0,-2] lp=0 plt=0 pli=-2 lpt=1 lpi=0}");
  CHECK(text() == "st{rm=1 pl=-1 ab=[0,-2] lp=0 plt=2 pli=-1 lpt=1 lpi=0}");
  for (const char* call : {"unmapped page", "NULL", "length 0", "device memory"}) {
    INFO(call);
    CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_INVALID_VALUE);
  }
  CHECK(c.wait() == 0);
}

// A device without concurrent managed access (Windows, WSL, Jetson): prefetching to it and
// preferring it answer CUDA_ERROR_INVALID_DEVICE (reported by users of those systems).
MP_CHILD(advise_no_concurrent_access) {
  child_primary_ctx();
  int attr = -1;
  cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0);
  ch.send_int(attr);
  CUdeviceptr m = 0;
  if (cuMemAllocManaged(&m, 64 * 1024, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS) return 98;
  ch.send_int(cuMemPrefetchAsync(m, 64 * 1024, dev0(), 0, nullptr));
  ch.send_int(cuMemAdvise(m, 64 * 1024, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev0()));
  ch.send_int(cuMemPrefetchAsync(m, 64 * 1024, host(), 0, nullptr));
  ch.send_int(cuMemAdvise(m, 64 * 1024, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host()));
  ch.send_int(cuMemAdvise(m, 64 * 1024, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0()));
  ch.send_int(cuMemAdvise(m, 64 * 1024, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0()));
  ch.send_int(cuCtxSynchronize());
  cuMemFree(m);
  return 0;
}

TEST_CASE("a device without concurrent managed access refuses prefetches to it and preferring it",
          "[managed][advise][emulator]") {
  auto c = mp::spawn("advise_no_concurrent_access", {"CUDA_SHIM_CONCURRENT_MANAGED_ACCESS=0"});
  CHECK(c.ch.recv_int() == 0);
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_ERROR_INVALID_DEVICE);
  for (const char* call : {"prefetch to host", "prefer host", "read mostly", "accessed by", "sync"}) {
    INFO(call);
    CHECK_CU(static_cast<CUresult>(c.ch.recv_int()), CUDA_SUCCESS);
  }
  CHECK(c.wait() == 0);
}
#endif

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
