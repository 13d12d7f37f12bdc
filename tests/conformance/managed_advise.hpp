// Helpers shared by the managed-memory advice, prefetch and range-query conformance tests
// (test_managed_advise.cpp, test_managed_prefetch.cpp, test_managed_range.cpp): the probe's named
// locations and its printed range state (tools/probe/probe_managed.cpp), and memory that is not
// managed. NVIDIA's API only, so they also run on the real driver.
#pragma once
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "managed_common.hpp"

namespace managed_conf {


inline CUmemLocation loc(int type, int id) {
  CUmemLocation l;
  std::memset(&l, 0, sizeof l);
  l.type = static_cast<CUmemLocationType>(type);
  l.id = id;
  return l;
}
inline cudaMemLocation rtloc(int type, int id) {
  cudaMemLocation l;
  std::memset(&l, 0, sizeof l);
  l.type = static_cast<cudaMemLocationType>(type);
  l.id = id;
  return l;
}
inline CUmemLocation host() { return loc(CU_MEM_LOCATION_TYPE_HOST, 0); }

// The host NUMA node device 0 is attached to (the probe's "hostNuma" id).
inline int host_numa() {
  int v = -1;
  cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, 0);
  return v < 0 ? 0 : v;
}

// The probe's named locations.
inline CUmemLocation named(const std::string& n) {
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

inline std::string num(CUresult r, int v) { return r == CUDA_SUCCESS ? std::to_string(v) : cu_name(r); }

// The range state, as the probe prints it.
inline std::string st(CUdeviceptr p, size_t n) {
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
inline std::string then_st(CUresult r, CUdeviceptr p, size_t n) { return r ? cu_name(r) : st(p, n); }

inline const std::string kFresh = "st{rm=0 pl=-2 ab=[-2,-2] lp=-2 plt=0 pli=-2 lpt=0 lpi=-2}";

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

}  // namespace managed_conf
