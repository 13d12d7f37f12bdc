// Emulator-only: memory pools where NVIDIA's driver crashes or hangs (garbage handles, a
// NULL attribute value, maxSize = SIZE_MAX, a destroyed stream) get the documented error
// code instead; refusals explain which rule they broke on which pool; and the allocator
// keeps its books straight under churn.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "unit_common.hpp"

namespace {
constexpr size_t kMiB = size_t(1) << 20;

CUmemPoolProps props(CUmemLocationType t = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0) {
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = t;
  p.location.id = id;
  return p;
}
bool says(const std::string& what) {
  std::string w = last_why();
  INFO("explanation: " << w);
  return w.find(what) != std::string::npos;
}
unsigned long long attr(CUmemoryPool p, CUmemPool_attribute a) {
  cuuint64_t v = 0;
  REQUIRE(cuMemPoolGetAttribute(p, a, &v) == CUDA_SUCCESS);
  return v;
}
}  // namespace

TEST_CASE("garbage pool handles are refused, never followed", "[mempool][robustness]") {
  primary();
  auto g = reinterpret_cast<CUmemoryPool>(0x12345678);
  cuuint64_t v = 0;
  CHECK(cuMemPoolGetAttribute(g, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("is not a live memory pool"));
  CUdeviceptr d = 0;
  CHECK(cuMemAllocFromPoolAsync(&d, 16, g, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemPoolDestroy(g) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuDeviceSetMemPool(0, g) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemPoolTrimTo(g, 0) == CUDA_ERROR_INVALID_VALUE);
  CUmemAccessDesc a{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CHECK(cuMemPoolSetAccess(g, &a, 1) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuMemPoolSetAttribute with a NULL value is CUDA_ERROR_INVALID_VALUE", "[mempool][robustness]") {
  primary();
  CUmemPoolProps p = props();
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("value is NULL"));
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

TEST_CASE("maxSize = SIZE_MAX is CUDA_ERROR_OUT_OF_MEMORY (the real driver hangs)", "[mempool][robustness]") {
  primary();
  CUmemPoolProps p = props();
  p.maxSize = SIZE_MAX;
  CUmemoryPool pool = nullptr;
  CHECK(cuMemPoolCreate(&pool, &p) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(says("address space"));
}

TEST_CASE("stream-ordered calls on a destroyed stream are CUDA_ERROR_INVALID_HANDLE", "[mempool][robustness]") {
  primary();
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE(cuMemAllocAsync(&d, 16, s) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(d, s) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuMemAllocAsync(&d, 16, reinterpret_cast<CUstream>(0x1234560)) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);
}

TEST_CASE("a destroyed pool cannot become a device's current pool", "[mempool][robustness]") {
  // Deviation, on purpose: the real driver accepts a destroyed pool that still has live
  // allocations here, after which allocating from the device is undefined.
  primary();
  CUmemPoolProps p = props();
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&d, 16, pool, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  CHECK(cuDeviceSetMemPool(0, pool) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("destroyed with cuMemPoolDestroy"));
  CHECK(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
}

TEST_CASE("refusals name the rule and the pool", "[mempool][explain]") {
  primary();
  CUmemoryPool pool = nullptr;
  CUmemPoolProps p = props(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
  CHECK(cuMemPoolCreate(&pool, &p) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT is not allowed for pools"));
  p = props(CU_MEM_LOCATION_TYPE_HOST);
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CHECK(cuMemPoolCreate(&pool, &p) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("not IPC capable"));
  p = props();
  p.reserved[3] = 1;
  CHECK(cuMemPoolCreate(&pool, &p) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("reserved must be all zero"));

  CUmemoryPool def = nullptr;
  REQUIRE(cuDeviceGetDefaultMemPool(&def, 0) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(def) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("default pool, which cannot be destroyed"));
  CHECK(says("device 0"));

  p = props();
  p.maxSize = 32 * kMiB;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  CUdeviceptr a = 0, b = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&a, 30 * kMiB, pool, nullptr) == CUDA_SUCCESS);
  CHECK(cuMemAllocFromPoolAsync(&b, 4 * kMiB, pool, nullptr) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(says("capacity of 33554432 bytes"));
  char handle[32];
  std::snprintf(handle, sizeof handle, "%p", static_cast<void*>(pool));
  CHECK(says(std::string("pool ") + handle));
  CHECK(cuMemFreeAsync(a + 512, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("512 bytes into the allocation"));
  CHECK(cuMemFreeAsync(a, nullptr) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(a, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("not a live allocation"));
  cuuint64_t five = 5;
  CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &five) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("can only be reset, by setting it to 0"));
  CUmemAccessDesc d{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_NONE};
  CHECK(cuMemPoolSetAccess(pool, &d, 1) == CUDA_ERROR_INVALID_DEVICE);
  CHECK(says("its own access cannot be revoked"));
  CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

// Issue 22, item 8: a pool grows by 32 MiB chunks of device memory; when the device cannot give
// one, the explanation blamed the pool's own capacity.
TEST_CASE("a pool that cannot grow because the device is full says so", "[mempool][explain]") {
  primary();
  size_t free_b = 0, total = 0;
  REQUIRE(cuMemGetInfo(&free_b, &total) == CUDA_SUCCESS);
  CUdeviceptr fill = 0;  // all but 16 MiB (sparse: it costs address space only)
  REQUIRE(cuMemAlloc(&fill, free_b - 16 * kMiB) == CUDA_SUCCESS);
  auto p = props();
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  CHECK(cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(d == 0);
  CHECK(says("has no memory left for the pool to grow by"));
  CHECK(!says("within its capacity"));
  CHECK(cuMemFree(fill) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

TEST_CASE("explanations when a copy touches pool memory it may not", "[mempool][explain]") {
  primary();
  CUmemPoolProps p = props(CU_MEM_LOCATION_TYPE_HOST);
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  CUdeviceptr h = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&h, 64, pool, nullptr) == CUDA_SUCCESS);
  char buf[64];
  CHECK(cuMemcpyDtoH(buf, h, 64) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("is host memory from pool"));
  CHECK(cuMemFreeAsync(h, nullptr) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
  CHECK(cuMemcpyDtoH(buf, h, 8) == CUDA_ERROR_INVALID_VALUE);
  CHECK(says("in no live allocation"));
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

TEST_CASE("the allocator's books balance under random stream-ordered churn", "[mempool][stress]") {
  primary();
  CUstream s[3];
  for (auto& x : s) REQUIRE(cuStreamCreate(&x, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CUmemPoolProps p = props();
  p.maxSize = 256 * kMiB;
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  std::mt19937_64 rng(42);
  struct Live {
    CUdeviceptr p;
    size_t n;
  };
  std::vector<Live> live;
  unsigned long long expect_used = 0;
  for (int step = 0; step < 12000; ++step) {
    unsigned op = rng() % 100;
    CUstream st = s[rng() % 3];
    if (op < 55 || live.empty()) {
      size_t n = 1 + rng() % (op < 5 ? 8 * kMiB : 64 * 1024);
      CUdeviceptr d = 0;
      CUresult r = cuMemAllocFromPoolAsync(&d, n, pool, st);
      REQUIRE((r == CUDA_SUCCESS || r == CUDA_ERROR_OUT_OF_MEMORY));
      if (r == CUDA_SUCCESS) {
        REQUIRE(d % 512 == 0);
        // No two live allocations overlap.
        for (const Live& l : live) REQUIRE((d + n <= l.p || l.p + l.n <= d));
        live.push_back({d, n});
        expect_used += n;
      }
    } else if (op < 95) {
      size_t i = rng() % live.size();
      REQUIRE(cuMemFreeAsync(live[i].p, st) == CUDA_SUCCESS);
      expect_used -= live[i].n;
      live[i] = live.back();
      live.pop_back();
    } else if (op < 98) {
      REQUIRE(cuStreamSynchronize(st) == CUDA_SUCCESS);
    } else {
      REQUIRE(cuMemPoolTrimTo(pool, (rng() % 4) * 32 * kMiB) == CUDA_SUCCESS);
    }
    REQUIRE(attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == expect_used);
    REQUIRE(attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) <= 256 * kMiB);
    REQUIRE(attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) % (32 * kMiB) == 0);
  }
  for (const Live& l : live) REQUIRE(cuMemFreeAsync(l.p, s[0]) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
  CHECK(attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
  // Everything coalesced back: the whole capacity is one allocation again.
  CUdeviceptr all = 0;
  CHECK(cuMemAllocFromPoolAsync(&all, 256 * kMiB, pool, s[0]) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(all, s[0]) == CUDA_SUCCESS);
  for (auto& x : s) REQUIRE(cuStreamDestroy(x) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

TEST_CASE("many threads allocate and free from one pool at once", "[mempool][stress]") {
  primary();
  CUcontext c = nullptr;
  REQUIRE(cuCtxGetCurrent(&c) == CUDA_SUCCESS);
  CUmemoryPool def = nullptr;
  REQUIRE(cuDeviceGetDefaultMemPool(&def, 0) == CUDA_SUCCESS);
  unsigned long long used0 = attr(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      cuCtxSetCurrent(c);
      CUstream s = nullptr;
      if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        ++failures;
        return;
      }
      std::vector<CUdeviceptr> mine;
      for (int i = 0; i < 600; ++i) {
        CUdeviceptr d = 0;
        if (cuMemAllocAsync(&d, 256 + 512 * (i % 7), s) != CUDA_SUCCESS) ++failures;
        else mine.push_back(d);
        if (i % 3 == 2) {
          if (cuMemFreeAsync(mine.back(), s) != CUDA_SUCCESS) ++failures;
          mine.pop_back();
        }
        if (i % 150 == 0) cuStreamSynchronize(s);
      }
      for (auto d : mine)
        if (cuMemFreeAsync(d, t % 2 ? s : nullptr) != CUDA_SUCCESS) ++failures;
      cuStreamSynchronize(s);
      cuStreamDestroy(s);
    });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(attr(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == used0);
}

TEST_CASE("a retired pool's window is never served from a thread's cache", "[mempool][robustness]") {
  // Frees look up the pool window through a per-thread cache; once a destroyed pool's
  // last allocation is freed its window goes, and a new pool may reuse the addresses.
  primary();
  for (int round = 0; round < 50; ++round) {
    CUmemPoolProps p = props();
    p.maxSize = 32 * kMiB;
    CUmemoryPool pool = nullptr;
    REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
    CUdeviceptr d = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&d, 4096, pool, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
    REQUIRE(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);  // retires the window
    CHECK(cuMemFreeAsync(d, nullptr) == CUDA_ERROR_INVALID_VALUE);
    unsigned t = 0;
    CHECK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d) == CUDA_ERROR_INVALID_VALUE);
  }
  REQUIRE(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
}

TEST_CASE("a destroyed pool that served a device's allocations leaves no memory behind", "[mempool][robustness]") {
  // The thread's cache of its device's current pool kept a destroyed pool, its memfd and its
  // window alive until the thread's next stream-ordered allocation.
  primary();
  auto pool_fds = [] {
    int n = 0;
    char link[256], path[64];
    for (int fd = 0; fd < 1024; ++fd) {
      std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
      ssize_t k = ::readlink(path, link, sizeof link - 1);
      if (k > 0 && std::string(link, static_cast<size_t>(k)).find("cuda-shim:pool:") != std::string::npos) ++n;
    }
    return n;
  };
  CUmemoryPool def = nullptr;
  REQUIRE(cuDeviceGetDefaultMemPool(&def, 0) == CUDA_SUCCESS);
  const int before = pool_fds();
  CUmemPoolProps p = props();
  p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;  // so that its memfd is its own
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &p) == CUDA_SUCCESS);
  int exported = -1;  // exported: its own memfd whatever the budget of them (CUDA_SHIM_POOL_OWN_FILES)
  REQUIRE(cuMemPoolExportToShareableHandle(&exported, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
          CUDA_SUCCESS);
  ::close(exported);
  REQUIRE(cuDeviceSetMemPool(0, pool) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE(cuMemAllocAsync(&d, 4096, nullptr) == CUDA_SUCCESS);  // from the current pool
  REQUIRE(cuMemFreeAsync(d, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(pool_fds() == before + 1);
  REQUIRE(cuDeviceSetMemPool(0, def) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  CHECK(pool_fds() == before);
}

namespace {
// The shared file unexportable pools take their windows from (memory/pool_backing.hpp), and
// how many descriptors the process holds.
int shared_pool_file(int& open_fds) {
  int found = -1;
  open_fds = 0;
  char link[256], path[64];
  for (int fd = 0; fd < 4096; ++fd) {
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t k = ::readlink(path, link, sizeof link - 1);
    if (k <= 0) continue;
    ++open_fds;
    if (std::string(link, static_cast<size_t>(k)).find("memfd:cuda-shim-pools") != std::string::npos) found = fd;
  }
  return found;
}
}  // namespace

TEST_CASE("pools without handle types hold no descriptor each, and give their memory back", "[mempool][robustness]") {
  // Under `ulimit -n 1024` a descriptor per pool stopped programs at about a thousand pools.
  primary();
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  {
    CUmemPoolProps p = props();
    p.maxSize = 32 * kMiB;
    CUmemoryPool first = nullptr;
    REQUIRE(cuMemPoolCreate(&first, &p) == CUDA_SUCCESS);
    REQUIRE(cuMemAllocFromPoolAsync(&d, 4096, first, s) == CUDA_SUCCESS);
    REQUIRE(cuMemFreeAsync(d, s) == CUDA_SUCCESS);
    REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(first) == CUDA_SUCCESS);
  }
  int fds0 = 0;
  REQUIRE(shared_pool_file(fds0) >= 0);
  constexpr int kPools = 300;
  std::vector<CUmemoryPool> pools(kPools);
  std::vector<CUdeviceptr> ptrs(kPools);
  for (int i = 0; i < kPools; ++i) {
    CUmemPoolProps p = props();
    p.maxSize = 32 * kMiB;
    REQUIRE(cuMemPoolCreate(&pools[i], &p) == CUDA_SUCCESS);
    REQUIRE(cuMemAllocFromPoolAsync(&ptrs[i], kMiB, pools[i], s) == CUDA_SUCCESS);
    REQUIRE(cuMemsetD8Async(ptrs[i], static_cast<unsigned char>(i + 1), kMiB, s) == CUDA_SUCCESS);
  }
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  int fds1 = 0;
  const int file = shared_pool_file(fds1);
  REQUIRE(file >= 0);
  CHECK(fds1 == fds0);
  // Each pool's memory is its own: no window aliases another's.
  for (int i = 0; i < kPools; i += 37) {
    unsigned char b = 0;
    REQUIRE(cuMemcpyDtoH(&b, ptrs[i] + kMiB - 1, 1) == CUDA_SUCCESS);
    CHECK(b == static_cast<unsigned char>(i + 1));
  }
  struct stat st {};
  REQUIRE(::fstat(file, &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_blocks) * 512 >= uint64_t(kPools) * kMiB);
  for (int i = 0; i < kPools; ++i) {
    REQUIRE(cuMemFreeAsync(ptrs[i], s) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolDestroy(pools[i]) == CUDA_SUCCESS);
  }
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  // Destroyed pools' pages went back to the system.
  REQUIRE(::fstat(file, &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_blocks) * 512 < uint64_t(kPools) * kMiB / 16);
  REQUIRE(cuStreamDestroy(s) == CUDA_SUCCESS);
}
