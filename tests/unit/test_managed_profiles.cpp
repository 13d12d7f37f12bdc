// Emulator-only: device profiles other than the H200's. CTest runs this binary with
// CUDA_SHIM_CONCURRENT_MANAGED_ACCESS=0 (the host may not touch managed memory the device may be
// using: GLOBAL memory while any stream runs work, SINGLE memory while its stream does) and
// CUDA_SHIM_PAGEABLE_MEMORY_ACCESS=1 (plain malloc'd memory can be attached), with
// CUDA_SHIM_MANAGED_FAULT=quiet. Host functions stand in for kernels: a stream is busy while one
// runs.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "unit_common.hpp"

namespace {

// A host function that holds its stream busy until released.
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> entered{false};
  static void CUDA_CB run(void* p) {
    auto* g = static_cast<Gate*>(p);
    g->entered = true;
    while (!g->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void hold(CUstream s) {
    REQUIRE(cuLaunchHostFunc(s, &Gate::run, this) == CUDA_SUCCESS);
    while (!entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void release(CUstream s) {
    open = true;
    REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  }
};

struct Stream {
  CUstream s = nullptr;
  Stream() { REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS); }
  ~Stream() {
    if (s) cuStreamDestroy(s);
  }
  operator CUstream() const { return s; }
  unsigned long long id() const {
    unsigned long long v = 0;
    cuStreamGetId(s, &v);
    return v;
  }
};

CUdeviceptr managed(size_t n, unsigned flags = CU_MEM_ATTACH_GLOBAL) {
  CUdeviceptr p = 0;
  REQUIRE(cuMemAllocManaged(&p, n, flags) == CUDA_SUCCESS);
  return p;
}

// Touches the memory from host code: a write and a read back.
int touch(CUdeviceptr p, int v) {
  auto* q = reinterpret_cast<volatile int*>(p);
  *q = v;
  return *q;
}

std::string last_violation() {
  char buf[1024];
  cuShimGetLastManagedViolation(buf, sizeof buf);
  return buf;
}

void attach(CUstream s, CUdeviceptr p, unsigned flags) {
  REQUIRE(cuStreamAttachMemAsync(s, p, 0, flags) == CUDA_SUCCESS);
}

unsigned attached(CUdeviceptr p, unsigned long long* stream = nullptr) {
  unsigned f = 0;
  unsigned long long id = 0;
  REQUIRE(cuShimGetManagedAttachment(p, &f, &id) == CUDA_SUCCESS);
  if (stream) *stream = id;
  return f;
}

}  // namespace

TEST_CASE("the profile reports no concurrent managed access, and pageable access", "[managed][profile]") {
  primary();
  int v = -1;
  REQUIRE(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0) == CUDA_SUCCESS);
  CHECK(v == 0);
  REQUIRE(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0) == CUDA_SUCCESS);
  CHECK(v == 1);
}

TEST_CASE("GLOBAL memory: the host may touch it while the device is idle, not while a stream runs",
          "[managed][profile]") {
  primary();
  CUdeviceptr p = managed(4096);
  const auto before = cuShimManagedViolations();
  CHECK(touch(p, 1) == 1);
  CHECK(cuShimManagedViolations() == before);
  Stream s;
  Gate g;
  g.hold(s);
  CHECK(touch(p, 2) == 2);  // reported, then allowed: teaching mode
  CHECK(cuShimManagedViolations() == before + 1);
  CHECK(last_violation().find("attached GLOBAL") != std::string::npos);
  CHECK(last_violation().find("stream id " + std::to_string(s.id())) != std::string::npos);
  CHECK(last_violation().find("CONCURRENT_MANAGED_ACCESS = 0") != std::string::npos);
  g.release(s);
  CHECK(touch(p, 3) == 3);  // idle again
  CHECK(cuShimManagedViolations() == before + 1);
  CHECK(cuMemFree(p) == CUDA_SUCCESS);
}

TEST_CASE("memory attached to the host stays usable while streams run", "[managed][profile]") {
  primary();
  CUdeviceptr a = managed(4096, CU_MEM_ATTACH_HOST);
  CUdeviceptr b = managed(4096);
  attach(nullptr, b, CU_MEM_ATTACH_HOST);
  CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
  const auto before = cuShimManagedViolations();
  Stream s;
  Gate g;
  g.hold(s);
  CHECK(touch(a, 4) == 4);
  CHECK(touch(b, 5) == 5);
  CHECK(cuShimManagedViolations() == before);
  g.release(s);
  cuMemFree(a);
  cuMemFree(b);
}

TEST_CASE("SINGLE memory: usable while its own stream is idle, even if others run", "[managed][profile]") {
  primary();
  Stream mine, other;
  CUdeviceptr p = managed(8192);
  attach(mine, p, CU_MEM_ATTACH_SINGLE);
  CHECK(cuStreamSynchronize(mine) == CUDA_SUCCESS);
  unsigned long long sid = 0;
  CHECK(attached(p, &sid) == CU_MEM_ATTACH_SINGLE);
  CHECK(sid == mine.id());
  const auto before = cuShimManagedViolations();
  {
    Gate g;
    g.hold(other);
    CHECK(touch(p, 6) == 6);
    CHECK(cuShimManagedViolations() == before);
    g.release(other);
  }
  {
    Gate g;
    g.hold(mine);
    CHECK(touch(p + 4096, 7) == 7);
    CHECK(cuShimManagedViolations() == before + 1);
    CHECK(last_violation().find("attached SINGLE to stream id " + std::to_string(mine.id())) != std::string::npos);
    g.release(mine);
  }
  cuMemFree(p);
}

TEST_CASE("host functions stand in for kernels: they may touch the memory themselves", "[managed][profile]") {
  primary();
  CUdeviceptr p = managed(4096);
  Stream s;
  const auto before = cuShimManagedViolations();
  struct Work {
    CUdeviceptr p;
    int seen = 0;
    static void CUDA_CB run(void* w) {
      auto* x = static_cast<Work*>(w);
      x->seen = touch(x->p, 42);
    }
  } w{p};
  Gate g;
  g.hold(s);
  REQUIRE(cuLaunchHostFunc(s, &Work::run, &w) == CUDA_SUCCESS);
  g.release(s);
  CHECK(w.seen == 42);
  CHECK(cuShimManagedViolations() == before);
  cuMemFree(p);
}

TEST_CASE("an attach takes effect in stream order", "[managed][profile]") {
  primary();
  Stream s;
  CUdeviceptr p = managed(4096);
  Gate g;
  g.hold(s);
  attach(s, p, CU_MEM_ATTACH_HOST);
  CHECK(attached(p) == CU_MEM_ATTACH_GLOBAL);  // queued behind the gate
  g.release(s);
  CHECK(attached(p) == CU_MEM_ATTACH_HOST);
  cuMemFree(p);
}

TEST_CASE("destroying a stream returns its memory to the default association once its work is done",
          "[managed][profile]") {
  primary();
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CUdeviceptr g_mem = managed(4096), h_mem = managed(4096, CU_MEM_ATTACH_HOST);
  attach(s, g_mem, CU_MEM_ATTACH_SINGLE);
  attach(s, h_mem, CU_MEM_ATTACH_SINGLE);
  Gate g;
  g.hold(s);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
  CHECK(attached(g_mem) == CU_MEM_ATTACH_SINGLE);  // its work is still running
  g.open = true;
  for (int i = 0; i < 2000 && attached(g_mem) == CU_MEM_ATTACH_SINGLE; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(attached(g_mem) == CU_MEM_ATTACH_GLOBAL);
  CHECK(attached(h_mem) == CU_MEM_ATTACH_HOST);  // each to its own default
  cuMemFree(g_mem);
  cuMemFree(h_mem);
}

TEST_CASE("pageable memory attaches with a length on a device with pageable access", "[managed][profile]") {
  primary();
  void* m = std::malloc(8192);
  auto p = reinterpret_cast<CUdeviceptr>(m);
  CHECK(cuStreamAttachMemAsync(nullptr, p, 8192, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  CHECK(cuStreamAttachMemAsync(nullptr, p, 0, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_INVALID_VALUE);
  CHECK(last_why().find("length must be given") != std::string::npos);
  CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
  std::free(m);
}
