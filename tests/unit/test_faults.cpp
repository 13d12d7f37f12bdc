// Fault injection (docs/faults.md): each rule fires exactly on the calls it names, before the
// entry does anything, and nowhere else. Rules set with cuShimSetFaults restart the counts; the
// variable's behaviour (read at process start) is checked in a child run of this binary.
#define CUDA_SHIM_ENABLE_13030_API 1  // the logical endpoint entries (the LE_FAULT alias)
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "unit_common.hpp"

namespace {
// Removes every rule when a test ends, even a failing one.
struct Faults {
  explicit Faults(const char* spec) { REQUIRE(cuShimSetFaults(spec) == CUDA_SUCCESS); }
  ~Faults() { cuShimSetFaults(nullptr); }
};
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("faults: @N fails the Nth call only, leaving the outputs untouched", "[faults]") {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  Faults f("cuDeviceGetCount:CUDA_ERROR_OUT_OF_MEMORY@3");
  for (int call = 1; call <= 6; ++call) {
    int n = -7;
    CUresult r = cuDeviceGetCount(&n);
    if (call == 3) {
      CHECK(r == CUDA_ERROR_OUT_OF_MEMORY);
      CHECK(n == -7);
      CHECK(has(last_why(), "injected by cuShimSetFaults rule 'cuDeviceGetCount:CUDA_ERROR_OUT_OF_MEMORY@3' (call #3)"));
      CHECK(cuShimGetLastExplanationCode() == CUDA_ERROR_OUT_OF_MEMORY);
    } else {
      CHECK(r == CUDA_SUCCESS);
      CHECK(n >= 1);
    }
  }
  // Other entries are not touched.
  int v = 0;
  CHECK(cuDriverGetVersion(&v) == CUDA_SUCCESS);
}

TEST_CASE("faults: @N-M fails the range, * is CUDA_ERROR_UNKNOWN, whitespace is ignored", "[faults]") {
  Faults f("  cuDriverGetVersion : * @ 2 - 4 ");
  std::vector<CUresult> got;
  for (int i = 0; i < 6; ++i) {
    int v = 0;
    got.push_back(cuDriverGetVersion(&v));
  }
  CHECK(got == std::vector<CUresult>{CUDA_SUCCESS, CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN,
                                     CUDA_SUCCESS, CUDA_SUCCESS});
}

TEST_CASE("faults: a rule without @ fails every call until the rules are cleared", "[faults]") {
  primary();
  CUmemAllocationProp p = {};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  size_t gran = 0;
  REQUIRE(cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS);
  {
    Faults f("cuMemCreate:CUDA_ERROR_NOT_PERMITTED");
    for (int i = 0; i < 3; ++i) {
      CUmemGenericAllocationHandle h = 12345;
      CHECK(cuMemCreate(&h, gran, &p, 0) == CUDA_ERROR_NOT_PERMITTED);
      CHECK(h == 12345);
    }
  }
  CUmemGenericAllocationHandle h = 0;
  REQUIRE(cuMemCreate(&h, gran, &p, 0) == CUDA_SUCCESS);
  CHECK(cuMemRelease(h) == CUDA_SUCCESS);
}

TEST_CASE("faults: bad specs are refused whole and change nothing", "[faults]") {
  Faults f("cuDriverGetVersion:CUDA_ERROR_INVALID_CONTEXT");
  struct Bad {
    const char* spec;
    const char* why;
  };
  const Bad bad[] = {
      {"cuNoSuchEntry:CUDA_ERROR_UNKNOWN", "rule 1 'cuNoSuchEntry:CUDA_ERROR_UNKNOWN' (at character 1)"},
      {"cuMemCreate:CUDA_ERROR_UNKNOWN,cudaNoSuch:*", "rule 2 'cudaNoSuch:*' (at character 32)"},
      {"cuMemCreate", "expected ENTRY:ERROR[@WHEN]"},
      {"cuMemCreate:CUDA_ERROR_BOGUS", "'CUDA_ERROR_BOGUS' is not a CUresult name"},
      {"cuMemCreate:cudaErrorMemoryAllocation", "is not a CUresult name (cuMemCreate is a driver entry)"},
      {"cudaMalloc:CUDA_ERROR_OUT_OF_MEMORY", "is not a cudaError_t name"},
      {"cuMemCreate:CUDA_SUCCESS", "success is not a fault"},
      {"cuMemCreate:*@0", "calls count from 1"},
      {"cuMemCreate:*@4-2", "a range is N-M"},
      {"cuMemCreate:*@p=1.5", "a probability is p=F"},
      {"cuMemCreate:*@x", "@WHEN is N, N-M or p=F"},
      {"cuMemCreate:*,,cuMemFree:*", "rule 2 '' (at character 15): empty rule"},
      {"seed=abc", "a seed is seed=N"},
      {"cudaGetLastError:*", "cannot be made to fail"},
  };
  for (const Bad& b : bad) {
    INFO(b.spec);
    CHECK(cuShimSetFaults(b.spec) == CUDA_ERROR_INVALID_VALUE);
    CHECK(has(last_why(), b.why));
    CHECK(has(last_why(), "the rules in force are unchanged"));
  }
  // The rule set before the refusals is still the one in force, its count going on.
  int v = 0;
  CHECK(cuDriverGetVersion(&v) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(has(last_why(), "(call #1)"));
}

TEST_CASE("faults: a runtime call counts once, under its cuda* name only", "[faults]") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  // The driver rules would fail every allocation if the runtime reached them through the
  // exported symbols; only the user's cudaMalloc calls count.
  Faults f("cudaMalloc:cudaErrorMemoryAllocation@2,cuMemAlloc:*,cuMemAllocAsync:*,cuMemAllocFromPoolAsync:*");
  void* p[3] = {};
  CHECK(cudaMalloc(&p[0], 256) == cudaSuccess);
  void* sentinel = reinterpret_cast<void*>(0x1234);
  p[1] = sentinel;
  CHECK(cudaMalloc(&p[1], 256) == cudaErrorMemoryAllocation);
  CHECK(p[1] == sentinel);
  CHECK(has(last_why(), "injected by cuShimSetFaults rule 'cudaMalloc:cudaErrorMemoryAllocation@2' (call #2)"));
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);  // the runtime's last-error rule holds
  CHECK(cudaMalloc(&p[2], 256) == cudaSuccess);
  void* a = nullptr;
  CHECK(cudaMallocAsync(&a, 256, nullptr) == cudaSuccess);
  CHECK(cudaFreeAsync(a, nullptr) == cudaSuccess);
  CHECK(cudaStreamSynchronize(nullptr) == cudaSuccess);
  CHECK(cudaFree(p[0]) == cudaSuccess);
  CHECK(cudaFree(p[2]) == cudaSuccess);
  // The driver names do count the program's own driver calls (cuMemAlloc covers cuMemAlloc_v2).
  CUdeviceptr d = 0;
  CHECK(cuMemAlloc(&d, 256) == CUDA_ERROR_UNKNOWN);
  CHECK(d == 0);
}

TEST_CASE("faults: an injected cuMemAllocFromPoolAsync leaves the pool and the pointer as they were", "[faults]") {
  primary();
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
  CUdeviceptr first = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&first, 1 << 20, pool, nullptr) == CUDA_SUCCESS);
  auto attrs = [&] {
    std::array<cuuint64_t, 4> a{};
    const CUmemPool_attribute which[] = {CU_MEMPOOL_ATTR_USED_MEM_CURRENT, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                                         CU_MEMPOOL_ATTR_USED_MEM_HIGH, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH};
    for (int i = 0; i < 4; ++i) REQUIRE(cuMemPoolGetAttribute(pool, which[i], &a[i]) == CUDA_SUCCESS);
    return a;
  };
  const auto before = attrs();
  {
    Faults f("cuMemAllocFromPoolAsync:CUDA_ERROR_OUT_OF_MEMORY@1");
    CUdeviceptr d = 0xdead0000;
    CHECK(cuMemAllocFromPoolAsync(&d, 4 << 20, pool, nullptr) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(d == 0xdead0000);
    CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
    CHECK(attrs() == before);
    CUdeviceptr second = 0;
    CHECK(cuMemAllocFromPoolAsync(&second, 4 << 20, pool, nullptr) == CUDA_SUCCESS);  // call #2
    CHECK(cuMemFreeAsync(second, nullptr) == CUDA_SUCCESS);
  }
  CHECK(cuMemFreeAsync(first, nullptr) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

TEST_CASE("faults: p=F with a seed fails the same calls on every run", "[faults]") {
  auto run = [](const char* spec) {
    Faults f(spec);
    std::string pattern;
    for (int i = 0; i < 400; ++i) {
      int v = 0;
      pattern += cuDriverGetVersion(&v) == CUDA_SUCCESS ? '.' : 'x';
    }
    return pattern;
  };
  const std::string a = run("seed=7, cuDriverGetVersion:CUDA_ERROR_UNKNOWN@p=0.25");
  CHECK(a == run("cuDriverGetVersion:CUDA_ERROR_UNKNOWN@p=0.25,seed=7"));
  CHECK(a != run("seed=8,cuDriverGetVersion:CUDA_ERROR_UNKNOWN@p=0.25"));
  const auto fails = std::count(a.begin(), a.end(), 'x');
  CHECK(fails > 60);
  CHECK(fails < 140);
  CHECK(run("cuDriverGetVersion:CUDA_ERROR_UNKNOWN@p=0") == std::string(400, '.'));
  CHECK(run("cuDriverGetVersion:CUDA_ERROR_UNKNOWN@p=1") == std::string(400, 'x'));
}

// ---- the variables, read at process start: a child run of this binary --------------------

TEST_CASE("faults child", "[.faults_child]") {
  const std::string mode = std::getenv("FAULTS_CHILD") ? std::getenv("FAULTS_CHILD") : "";
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int n = 0;
  if (mode == "env") {
    CHECK(cuDeviceGetCount(&n) == CUDA_SUCCESS);
    CHECK(cuDeviceGetCount(&n) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(has(last_why(), "injected by CUDA_SHIM_FAULTS rule 'cuDeviceGetCount:CUDA_ERROR_OUT_OF_MEMORY@2' (call #2)"));
    CHECK(cuDeviceGetCount(&n) == CUDA_SUCCESS);
  } else if (mode == "malformed") {
    for (int i = 0; i < 4; ++i) CHECK(cuDeviceGetCount(&n) == CUDA_SUCCESS);
  } else if (mode == "le_alias") {
    CUlogicalEndpointProp p = {};
    p.type = CU_LOGICAL_ENDPOINT_TYPE_UNICAST;
    p.unicast.device = 0;
    cuuint64_t a = 0, mx = 0;
    CHECK(cuLogicalEndpointGetLimits(&a, &mx, &p) == CUDA_ERROR_ILLEGAL_STATE);
    CHECK(has(last_why(), "CUDA_SHIM_LE_FAULT=illegal_state"));
    CHECK(cuDeviceGetCount(&n) == CUDA_SUCCESS);
  } else {
    FAIL("FAULTS_CHILD names no mode");
  }
}

namespace {
// Runs this binary's child test with `env` prepended; returns its exit status and output.
int child(const std::string& env, std::string& out) { return run_self(env, "[.faults_child]", out); }
int count(const std::string& s, const std::string& part) {
  int n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("faults: CUDA_SHIM_FAULTS applies from the first call; the trace marks injected calls", "[faults]") {
  std::string out;
  CHECK(child("FAULTS_CHILD=env CUDA_SHIM_TRACE=1 CUDA_SHIM_FAULTS='cuDeviceGetCount:CUDA_ERROR_OUT_OF_MEMORY@2'",
              out) == 0);
  INFO(out);
  CHECK(count(out, "cuDeviceGetCount -> CUDA_ERROR_OUT_OF_MEMORY [injected]: cuDeviceGetCount: injected by") == 1);
  CHECK(count(out, "cuDeviceGetCount -> success") == 2);
}

TEST_CASE("faults: the configuration file's faults key, and the variable over it", "[faults]") {
  char path[] = "/tmp/cuda-shim-faults-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string text = "faults = cuDeviceGetCount:CUDA_ERROR_OUT_OF_MEMORY@2\n";
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
  std::string out;
  CHECK(child(std::string("FAULTS_CHILD=env CUDA_SHIM_CONFIG=") + path, out) == 0);
  INFO(out);
  // The variable replaces the file's rules: here a rule that never fires in the child.
  std::string out2;
  CHECK(child(std::string("FAULTS_CHILD=malformed CUDA_SHIM_CONFIG=") + path +
                  " CUDA_SHIM_FAULTS='cuDeviceGetCount:CUDA_ERROR_OUT_OF_MEMORY@9'",
              out2) == 0);
  INFO(out2);
  unlink(path);
}

TEST_CASE("faults: a malformed CUDA_SHIM_FAULTS is reported once and ignored whole", "[faults]") {
  std::string out;
  CHECK(child("FAULTS_CHILD=malformed CUDA_SHIM_FAULTS='cuDeviceGetCount:CUDA_ERROR_OUT_OF_MEMORY@2, cuBogus:*'",
              out) == 0);
  INFO(out);
  CHECK(count(out, "cuda-shim: CUDA_SHIM_FAULTS: rule 2 'cuBogus:*' (at character 46): 'cuBogus' is not an entry "
                   "point") == 1);
  CHECK(count(out, "the setting is ignored") == 1);
}

TEST_CASE("faults: CUDA_SHIM_LE_FAULT=illegal_state is an alias of a rule set", "[faults]") {
  std::string out;
  CHECK(child("FAULTS_CHILD=le_alias CUDA_SHIM_LE_FAULT=illegal_state", out) == 0);
  INFO(out);
}
