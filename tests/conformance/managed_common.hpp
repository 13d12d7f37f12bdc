// Helpers shared by the managed-memory conformance tests (NVIDIA's API only, so they also run
// on the real driver).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "common.hpp"

// A cuMemAllocManaged allocation, freed with cuMemFree when it goes.
struct Managed {
  CUdeviceptr p = 0;
  explicit Managed(size_t n, unsigned flags = CU_MEM_ATTACH_GLOBAL) {
    REQUIRE_CU(cuMemAllocManaged(&p, n, flags), CUDA_SUCCESS);
  }
  Managed(const Managed&) = delete;
  Managed& operator=(const Managed&) = delete;
  ~Managed() { reset(); }
  void reset() {
    if (p) cuMemFree(p);
    p = 0;
  }
  operator CUdeviceptr() const { return p; }
  // Host code uses the same pointer.
  unsigned char* host() const { return reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(p)); }
};

// The small helpers of test_managed.cpp and test_managed_access.cpp, in a namespace of their own
// so that a test with helpers of the same names can include this header too.
namespace managed_conf {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;
// What the tests preset outputs to, to see whether a failing call wrote them.
constexpr unsigned long long kSentinel = 0xdead0000beefULL;

inline CUmemLocation dev0() {
  CUmemLocation l;
  std::memset(&l, 0, sizeof l);
  l.type = CU_MEM_LOCATION_TYPE_DEVICE;
  l.id = 0;
  return l;
}

inline void* vp(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
inline CUdeviceptr dp(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// cuPointerGetAttribute into a zeroed 8-byte slot (enough for every attribute read here).
inline CUresult attr(CUpointer_attribute a, CUdeviceptr p, unsigned long long& v) {
  v = 0;
  return cuPointerGetAttribute(&v, a, p);
}

inline std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + seed);
  return v;
}
inline bool equal(const void* a, const void* b, size_t n) { return std::memcmp(a, b, n) == 0; }

}  // namespace managed_conf
