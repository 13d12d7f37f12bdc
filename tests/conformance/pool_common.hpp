// Helpers for the memory-pool conformance tests (NVIDIA's API only, so they also run
// on the real driver). Expected values are the real driver's (H200 x2, driver 580).
#pragma once
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "common.hpp"

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kChunk = 32 * kMiB;  // a pool's reservation granularity

inline CUmemPoolProps pool_props(CUmemLocationType t = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0,
                                 CUmemAllocationType type = CU_MEM_ALLOCATION_TYPE_PINNED) {
  CUmemPoolProps p;
  std::memset(&p, 0, sizeof p);
  p.allocType = type;
  p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p.location.type = t;
  p.location.id = id;
  return p;
}

// A pool destroyed at scope exit (after synchronizing the context).
struct ScopedPool {
  CUmemoryPool pool = nullptr;
  explicit ScopedPool(const CUmemPoolProps& p) { REQUIRE_CU(cuMemPoolCreate(&pool, &p), CUDA_SUCCESS); }
  ScopedPool(const ScopedPool&) = delete;
  ~ScopedPool() {
    cuCtxSynchronize();
    if (pool) cuMemPoolDestroy(pool);
  }
  operator CUmemoryPool() const { return pool; }
};

struct ScopedStream {
  CUstream s = nullptr;
  explicit ScopedStream(unsigned flags = CU_STREAM_NON_BLOCKING) {
    REQUIRE_CU(cuStreamCreate(&s, flags), CUDA_SUCCESS);
  }
  ScopedStream(const ScopedStream&) = delete;
  ~ScopedStream() {
    if (s) {
      cuStreamSynchronize(s);
      cuStreamDestroy(s);
    }
  }
  operator CUstream() const { return s; }
};

inline unsigned long long pool_attr(CUmemoryPool p, CUmemPool_attribute a) {
  cuuint64_t v = 0;
  REQUIRE_CU(cuMemPoolGetAttribute(p, a, &v), CUDA_SUCCESS);
  return v;
}
inline unsigned long long reserved(CUmemoryPool p) { return pool_attr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT); }
inline unsigned long long used(CUmemoryPool p) { return pool_attr(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT); }

inline void set_reuse(CUmemoryPool p, int follow, int opportunistic, int internal) {
  REQUIRE_CU(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &follow), CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &opportunistic), CUDA_SUCCESS);
  REQUIRE_CU(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &internal), CUDA_SUCCESS);
}

// Holds a stream busy until released: a host function that waits. (The real driver runs
// every host function of a context on one thread: never block two streams this way.)
// Going out of scope releases the stream and waits until the host function has let go of
// the Blocker (it may still be polling `open` just after release()).
struct Blocker {
  std::atomic<bool> open{false};
  std::atomic<int> waiting{0};
  static void CUDA_CB wait(void* p) {
    auto* b = static_cast<Blocker*>(p);
    while (!b->open.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
    b->waiting.fetch_sub(1);  // the last touch
  }
  void block(CUstream s) {
    open = false;
    waiting.fetch_add(1);
    CUresult r = cuLaunchHostFunc(s, wait, this);
    if (r != CUDA_SUCCESS) waiting.fetch_sub(1);
    REQUIRE_CU(r, CUDA_SUCCESS);
  }
  void release() { open = true; }
  Blocker() = default;
  Blocker(const Blocker&) = delete;
  ~Blocker() {
    open = true;
    while (waiting.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
};

// Waits until the stream's work completed without synchronizing (cuStreamQuery does not
// count as the host observing it).
inline void wait_idle_unobserved(CUstream s) {
  for (int i = 0; i < 20000 && cuStreamQuery(s) == CUDA_ERROR_NOT_READY; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

inline int device_count() {
  int n = 0;
  REQUIRE_CU(cuDeviceGetCount(&n), CUDA_SUCCESS);
  return n;
}

inline size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Pool kinds whose shared behaviour the templated tests check.
struct DevicePool {
  static constexpr const char* name = "device";
  static CUmemPoolProps props() { return pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0); }
  static constexpr bool host_accessible = false;
  static constexpr bool device_pointer = true;
  static constexpr unsigned mem_type = CU_MEMORYTYPE_DEVICE;
  static constexpr cudaMemoryType rt_type = cudaMemoryTypeDevice;
  static constexpr bool managed = false;
};
struct HostPool {
  static constexpr const char* name = "host";
  static CUmemPoolProps props() { return pool_props(CU_MEM_LOCATION_TYPE_HOST, 0); }
  static constexpr bool host_accessible = true;
  static constexpr bool device_pointer = false;
  static constexpr unsigned mem_type = CU_MEMORYTYPE_HOST;
  static constexpr cudaMemoryType rt_type = cudaMemoryTypeHost;
  static constexpr bool managed = false;
};
struct HostNumaPool {
  static constexpr const char* name = "host NUMA";
  static CUmemPoolProps props() {
    int numa = 0;
    REQUIRE_CU(cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0), CUDA_SUCCESS);
    return pool_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, numa);
  }
  static constexpr bool host_accessible = true;
  static constexpr bool device_pointer = false;
  static constexpr unsigned mem_type = CU_MEMORYTYPE_HOST;
  static constexpr cudaMemoryType rt_type = cudaMemoryTypeHost;
  static constexpr bool managed = false;
};
struct ManagedPool {
  static constexpr const char* name = "managed";
  static CUmemPoolProps props() {
    return pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED);
  }
  static constexpr bool host_accessible = true;
  static constexpr bool device_pointer = true;
  static constexpr unsigned mem_type = CU_MEMORYTYPE_DEVICE;
  static constexpr cudaMemoryType rt_type = cudaMemoryTypeManaged;
  static constexpr bool managed = true;
};
struct ManagedNoLocationPool : ManagedPool {
  static constexpr const char* name = "managed, no location";
  static CUmemPoolProps props() { return pool_props(CU_MEM_LOCATION_TYPE_NONE, 0, CU_MEM_ALLOCATION_TYPE_MANAGED); }
};
