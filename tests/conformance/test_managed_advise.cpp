// Advice of managed memory: cuMemAdvise (the CUDA 13 CUmemLocation forms and the CUDA 8 CUdevice
// forms), what it refuses and what it records, and on emulator profiles pageable host memory and a
// device without concurrent managed access. Expected codes and values measured on NVIDIA's driver
// 580.159.04 (H200, CUDA 13.0; tools/probe/probe_managed.cpp, whose keys the tables below copy:
// "st{...}" is the range state read back attribute by attribute). Prefetches and managed pools:
// test_managed_prefetch.cpp; range queries and the runtime's forms: test_managed_range.cpp.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "common.hpp"
#include "managed_advise.hpp"
#include "multiprocess.hpp"

using namespace managed_conf;

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
