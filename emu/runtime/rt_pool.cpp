// Runtime entries: memory pools and the stream-ordered allocator. The runtime's pool
// types share the driver's layouts (the ABI test checks it), so these forward to the
// driver entries after the runtime's implicit initialization.
#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {
using rt::need;

static_assert(sizeof(cudaMemPoolProps) == sizeof(CUmemPoolProps));
static_assert(sizeof(cudaMemAccessDesc) == sizeof(CUmemAccessDesc));
static_assert(sizeof(cudaMemLocation) == sizeof(CUmemLocation));

CUmemoryPool cu(cudaMemPool_t p) { return reinterpret_cast<CUmemoryPool>(p); }

Errc malloc_async(void** p, size_t size, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(need(p, api, "devPtr"));
  CUdeviceptr d = 0;
  Errc e = pt ? api::cuMemAllocAsync_ptsz(&d, size, s) : api::cuMemAllocAsync(&d, size, s);
  *p = reinterpret_cast<void*>(d);
  return e;
}

Errc malloc_from_pool(void** p, size_t size, cudaMemPool_t pool, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(need(p, api, "ptr"));
  CUdeviceptr d = 0;
  Errc e = pt ? api::cuMemAllocFromPoolAsync_ptsz(&d, size, cu(pool), s)
              : api::cuMemAllocFromPoolAsync(&d, size, cu(pool), s);
  *p = reinterpret_cast<void*>(d);
  return e;
}

Errc free_async(void* p, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  auto d = reinterpret_cast<CUdeviceptr>(p);
  return pt ? api::cuMemFreeAsync_ptsz(d, s) : api::cuMemFreeAsync(d, s);
}

}  // namespace

Errc cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) noexcept {
  return malloc_async(devPtr, size, hStream, false, "cudaMallocAsync");
}
Errc cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) noexcept {
  return malloc_async(devPtr, size, hStream, true, "cudaMallocAsync");
}
Errc cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) noexcept {
  return malloc_from_pool(ptr, size, memPool, stream, false, "cudaMallocFromPoolAsync");
}
Errc cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) noexcept {
  return malloc_from_pool(ptr, size, memPool, stream, true, "cudaMallocFromPoolAsync");
}
Errc cudaFreeAsync(void* devPtr, cudaStream_t hStream) noexcept {
  return free_async(devPtr, hStream, false, "cudaFreeAsync");
}
Errc cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) noexcept {
  return free_async(devPtr, hStream, true, "cudaFreeAsync");
}

Errc cudaMemPoolCreate(cudaMemPool_t* memPool, const struct cudaMemPoolProps* poolProps) noexcept {
  RT_TRY(rt::context("cudaMemPoolCreate"));
  return api::cuMemPoolCreate(reinterpret_cast<CUmemoryPool*>(memPool),
                              reinterpret_cast<const CUmemPoolProps*>(poolProps));
}
Errc cudaMemPoolDestroy(cudaMemPool_t memPool) noexcept {
  RT_TRY(rt::context("cudaMemPoolDestroy"));
  return api::cuMemPoolDestroy(cu(memPool));
}
Errc cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) noexcept {
  RT_TRY(rt::context("cudaMemPoolTrimTo"));
  return api::cuMemPoolTrimTo(cu(memPool), minBytesToKeep);
}
Errc cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value) noexcept {
  RT_TRY(rt::context("cudaMemPoolSetAttribute"));
  return api::cuMemPoolSetAttribute(cu(memPool), static_cast<CUmemPool_attribute>(attr), value);
}
Errc cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value) noexcept {
  RT_TRY(rt::context("cudaMemPoolGetAttribute"));
  return api::cuMemPoolGetAttribute(cu(memPool), static_cast<CUmemPool_attribute>(attr), value);
}
Errc cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc* descList, size_t count) noexcept {
  RT_TRY(rt::context("cudaMemPoolSetAccess"));
  return api::cuMemPoolSetAccess(cu(memPool), reinterpret_cast<const CUmemAccessDesc*>(descList), count);
}
Errc cudaMemPoolGetAccess(enum cudaMemAccessFlags* flags, cudaMemPool_t memPool, struct cudaMemLocation* location) noexcept {
  RT_TRY(rt::context("cudaMemPoolGetAccess"));
  return api::cuMemPoolGetAccess(reinterpret_cast<CUmemAccess_flags*>(flags), cu(memPool),
                                 reinterpret_cast<CUmemLocation*>(location));
}
Errc cudaMemPoolExportToShareableHandle(void* shareableHandle, cudaMemPool_t memPool,
                                        enum cudaMemAllocationHandleType handleType, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaMemPoolExportToShareableHandle"));
  return api::cuMemPoolExportToShareableHandle(shareableHandle, cu(memPool),
                                               static_cast<CUmemAllocationHandleType>(handleType), flags);
}
Errc cudaMemPoolImportFromShareableHandle(cudaMemPool_t* memPool, void* shareableHandle,
                                          enum cudaMemAllocationHandleType handleType, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaMemPoolImportFromShareableHandle"));
  return api::cuMemPoolImportFromShareableHandle(reinterpret_cast<CUmemoryPool*>(memPool), shareableHandle,
                                                 static_cast<CUmemAllocationHandleType>(handleType), flags);
}
Errc cudaMemPoolExportPointer(struct cudaMemPoolPtrExportData* exportData, void* ptr) noexcept {
  RT_TRY(rt::context("cudaMemPoolExportPointer"));
  static_assert(sizeof(cudaMemPoolPtrExportData) == sizeof(CUmemPoolPtrExportData));
  return api::cuMemPoolExportPointer(reinterpret_cast<CUmemPoolPtrExportData*>(exportData),
                                     reinterpret_cast<CUdeviceptr>(ptr));
}
Errc cudaMemPoolImportPointer(void** ptr, cudaMemPool_t memPool, struct cudaMemPoolPtrExportData* exportData) noexcept {
  const char* api = "cudaMemPoolImportPointer";
  RT_TRY(rt::context(api));
  RT_TRY(need(ptr, api, "ptr"));
  CUdeviceptr d = 0;
  Errc e = api::cuMemPoolImportPointer(&d, cu(memPool), reinterpret_cast<CUmemPoolPtrExportData*>(exportData));
  *ptr = reinterpret_cast<void*>(d);
  return e;
}
Errc cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) noexcept {
  RT_TRY(rt::init());
  return api::cuDeviceGetDefaultMemPool(reinterpret_cast<CUmemoryPool*>(memPool), device);
}
Errc cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) noexcept {
  RT_TRY(rt::init());
  return api::cuDeviceGetMemPool(reinterpret_cast<CUmemoryPool*>(memPool), device);
}
Errc cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) noexcept {
  RT_TRY(rt::init());
  return api::cuDeviceSetMemPool(device, cu(memPool));
}
Errc cudaMemGetDefaultMemPool(cudaMemPool_t* memPool, struct cudaMemLocation* location,
                              enum cudaMemAllocationType type) noexcept {
  RT_TRY(rt::init());
  return api::cuMemGetDefaultMemPool(reinterpret_cast<CUmemoryPool*>(memPool),
                                     reinterpret_cast<CUmemLocation*>(location), static_cast<CUmemAllocationType>(type));
}
Errc cudaMemGetMemPool(cudaMemPool_t* memPool, struct cudaMemLocation* location,
                       enum cudaMemAllocationType type) noexcept {
  RT_TRY(rt::init());
  return api::cuMemGetMemPool(reinterpret_cast<CUmemoryPool*>(memPool), reinterpret_cast<CUmemLocation*>(location),
                              static_cast<CUmemAllocationType>(type));
}
Errc cudaMemSetMemPool(struct cudaMemLocation* location, enum cudaMemAllocationType type,
                       cudaMemPool_t memPool) noexcept {
  RT_TRY(rt::init());
  return api::cuMemSetMemPool(reinterpret_cast<CUmemLocation*>(location), static_cast<CUmemAllocationType>(type),
                              cu(memPool));
}

}  // namespace cuda_shim::rtapi
