// Runtime entries: advice, prefetches and range attributes of managed memory (forwarders: the
// runtime's codes mirror the driver's, measured on NVIDIA's 580.159.04 / CUDA 13.0). The
// runtime's location, advice and attribute enums have the driver's layout and values.
#include <cstring>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {

static_assert(sizeof(cudaMemLocation) == sizeof(CUmemLocation));
static_assert(static_cast<int>(cudaMemAdviseSetAccessedBy) == CU_MEM_ADVISE_SET_ACCESSED_BY);
static_assert(static_cast<int>(cudaMemRangeAttributeLastPrefetchLocationId) ==
              CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID);
static_assert(static_cast<int>(cudaMemLocationTypeHostNumaCurrent) == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);

CUmemLocation to_driver(const cudaMemLocation& l) {
  CUmemLocation d;
  std::memcpy(&d, &l, sizeof d);
  return d;
}
CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

Errc cudaMemAdvise(const void* devPtr, size_t count, enum cudaMemoryAdvise advice,
                   struct cudaMemLocation location) noexcept {
  RT_TRY(rt::context("cudaMemAdvise"));
  return api::cuMemAdvise_v2(dptr(devPtr), count, static_cast<CUmem_advise>(advice), to_driver(location));
}

Errc cudaMemPrefetchAsync(const void* devPtr, size_t count, struct cudaMemLocation location, unsigned int flags,
                          cudaStream_t stream) noexcept {
  RT_TRY(rt::context("cudaMemPrefetchAsync"));
  return api::cuMemPrefetchAsync_v2(dptr(devPtr), count, to_driver(location), flags, stream);
}
Errc cudaMemPrefetchAsync_ptsz(const void* devPtr, size_t count, struct cudaMemLocation location,
                               unsigned int flags, cudaStream_t stream) noexcept {
  RT_TRY(rt::context("cudaMemPrefetchAsync"));
  return api::cuMemPrefetchAsync_v2_ptsz(dptr(devPtr), count, to_driver(location), flags, stream);
}

Errc cudaMemRangeGetAttribute(void* data, size_t dataSize, enum cudaMemRangeAttribute attribute,
                              const void* devPtr, size_t count) noexcept {
  RT_TRY(rt::context("cudaMemRangeGetAttribute"));
  return api::cuMemRangeGetAttribute(data, dataSize, static_cast<CUmem_range_attribute>(attribute), dptr(devPtr),
                                     count);
}

Errc cudaMemRangeGetAttributes(void** data, size_t* dataSizes, enum cudaMemRangeAttribute* attributes,
                               size_t numAttributes, const void* devPtr, size_t count) noexcept {
  RT_TRY(rt::context("cudaMemRangeGetAttributes"));
  static_assert(sizeof(enum cudaMemRangeAttribute) == sizeof(CUmem_range_attribute));
  return api::cuMemRangeGetAttributes(data, dataSizes, reinterpret_cast<CUmem_range_attribute*>(attributes),
                                      numAttributes, dptr(devPtr), count);
}

}  // namespace cuda_shim::rtapi
