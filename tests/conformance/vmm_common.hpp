// Helpers for the virtual memory management conformance tests (NVIDIA's API only, so they
// also run on the real driver). Expected values are the real driver's (H100, driver 580).
#pragma once
#include <cstring>
#include <vector>

#include "common.hpp"

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kGran = 2 * kMiB;  // measured: minimum = recommended granularity, every location

inline CUmemAllocationProp vmm_prop(CUmemLocationType t = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0,
                                    unsigned handle_types = CU_MEM_HANDLE_TYPE_NONE) {
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(handle_types);
  p.location.type = t;
  p.location.id = id;
  return p;
}

// The host NUMA node next to device 0 (where HOST_NUMA allocations live).
inline int host_numa_id() {
  int id = 0;
  REQUIRE_CU(cuDeviceGetAttribute(&id, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0), CUDA_SUCCESS);
  return id;
}

inline CUmemAccessDesc access_desc(CUmemLocationType t, int id, CUmemAccess_flags f) {
  CUmemAccessDesc d;
  std::memset(&d, 0, sizeof d);
  d.location.type = t;
  d.location.id = id;
  d.flags = f;
  return d;
}

inline CUresult grant(CUdeviceptr p, size_t n, CUmemLocationType t = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0,
                      CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
  CUmemAccessDesc d = access_desc(t, id, f);
  return cuMemSetAccess(p, n, &d, 1);
}

inline unsigned long long access_of(CUdeviceptr p, CUmemLocationType t = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0) {
  CUmemLocation l;
  l.type = t;
  l.id = id;
  unsigned long long f = 0xdead;
  REQUIRE_CU(cuMemGetAccess(&f, &l, p), CUDA_SUCCESS);
  return f;
}

// A reservation freed at scope exit (mappings in it must be gone by then).
struct ScopedReserve {
  CUdeviceptr base = 0;
  size_t size = 0;
  explicit ScopedReserve(size_t n, size_t align = 0) : size(n) {
    REQUIRE_CU(cuMemAddressReserve(&base, n, align, 0, 0), CUDA_SUCCESS);
  }
  ScopedReserve(const ScopedReserve&) = delete;
  ~ScopedReserve() {
    if (base) {
      cuCtxSynchronize();
      cuMemUnmap(base, size);
      cuMemAddressFree(base, size);
    }
  }
  operator CUdeviceptr() const { return base; }
};

// One reference to an allocation handle, released at scope exit unless released by the test.
struct ScopedHandle {
  CUmemGenericAllocationHandle h = 0;
  ScopedHandle() = default;
  ScopedHandle(size_t n, const CUmemAllocationProp& p) { REQUIRE_CU(cuMemCreate(&h, n, &p, 0), CUDA_SUCCESS); }
  ScopedHandle(const ScopedHandle&) = delete;
  ~ScopedHandle() {
    if (h) cuMemRelease(h);
  }
  CUresult release() {
    CUresult r = cuMemRelease(h);
    h = 0;
    return r;
  }
  operator CUmemGenericAllocationHandle() const { return h; }
};

inline std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  return v;
}
