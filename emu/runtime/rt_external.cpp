// Runtime entries: external memory and semaphores (the arrays they map: rt_array.cpp). The
// runtime's descriptors have the driver's layout except the mipmapped-array one, whose channel
// format and extent become a CUDA_ARRAY3D_DESCRIPTOR here.
#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_array.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {

static_assert(sizeof(cudaExternalMemoryHandleDesc) == sizeof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC));
static_assert(sizeof(cudaExternalMemoryBufferDesc) == sizeof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC));
static_assert(sizeof(cudaExternalSemaphoreHandleDesc) == sizeof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC));
static_assert(sizeof(cudaExternalSemaphoreSignalParams) == sizeof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS));
static_assert(sizeof(cudaExternalSemaphoreWaitParams) == sizeof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS));

// The runtime's external handles are the driver's under other type names.
CUexternalMemory cu(cudaExternalMemory_t m) { return reinterpret_cast<CUexternalMemory>(m); }
CUexternalMemory* cu(cudaExternalMemory_t* m) { return reinterpret_cast<CUexternalMemory*>(m); }
CUexternalSemaphore* cu(cudaExternalSemaphore_t* s) { return reinterpret_cast<CUexternalSemaphore*>(s); }
CUexternalSemaphore cu(cudaExternalSemaphore_t s) { return reinterpret_cast<CUexternalSemaphore>(s); }
const CUexternalSemaphore* cu(const cudaExternalSemaphore_t* s) { return reinterpret_cast<const CUexternalSemaphore*>(s); }

}  // namespace

Errc cudaImportExternalMemory(cudaExternalMemory_t* extMem_out, const cudaExternalMemoryHandleDesc* desc) noexcept {
  RT_TRY(rt::context("cudaImportExternalMemory"));
  return api::cuImportExternalMemory(cu(extMem_out), reinterpret_cast<const CUDA_EXTERNAL_MEMORY_HANDLE_DESC*>(desc));
}
Errc cudaExternalMemoryGetMappedBuffer(void** devPtr, cudaExternalMemory_t extMem,
                                       const cudaExternalMemoryBufferDesc* desc) noexcept {
  const char* api = "cudaExternalMemoryGetMappedBuffer";
  RT_TRY(rt::context(api));
  RT_TRY(need(devPtr, api, "devPtr"));
  CUdeviceptr d = 0;
  RT_TRY(api::cuExternalMemoryGetMappedBuffer(&d, cu(extMem), reinterpret_cast<const CUDA_EXTERNAL_MEMORY_BUFFER_DESC*>(desc)));
  *devPtr = reinterpret_cast<void*>(d);
  return Errc::success;
}
Errc cudaExternalMemoryGetMappedMipmappedArray(cudaMipmappedArray_t* mipmap, cudaExternalMemory_t extMem,
                                               const cudaExternalMemoryMipmappedArrayDesc* desc) noexcept {
  const char* api = "cudaExternalMemoryGetMappedMipmappedArray";
  RT_TRY(rt::context(api));
  RT_TRY(need(desc, api, "mipmapDesc"));
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC d{};
  d.offset = desc->offset;
  if (!to_driver_format(desc->formatDesc, d.arrayDesc.Format, d.arrayDesc.NumChannels))
    return fail(Errc::invalid_value, "{}: mipmapDesc->formatDesc ({}, {}, {}, {} bits, kind {}) is not a channel "
                "format an array holds (1, 2 or 4 equal channels of 8/16/32-bit integers or 16/32-bit floats)", api,
                desc->formatDesc.x, desc->formatDesc.y, desc->formatDesc.z, desc->formatDesc.w,
                static_cast<int>(desc->formatDesc.f));
  d.arrayDesc.Width = desc->extent.width;
  d.arrayDesc.Height = desc->extent.height;
  d.arrayDesc.Depth = desc->extent.depth;
  d.arrayDesc.Flags = desc->flags;
  d.numLevels = desc->numLevels;
  for (unsigned i = 0; i < 16; ++i) d.reserved[i] = desc->reserved[i];
  return api::cuExternalMemoryGetMappedMipmappedArray(reinterpret_cast<CUmipmappedArray*>(mipmap), cu(extMem), &d);
}
Errc cudaDestroyExternalMemory(cudaExternalMemory_t extMem) noexcept {
  RT_TRY(rt::context("cudaDestroyExternalMemory"));
  return api::cuDestroyExternalMemory(cu(extMem));
}

Errc cudaImportExternalSemaphore(cudaExternalSemaphore_t* extSem_out,
                                 const cudaExternalSemaphoreHandleDesc* desc) noexcept {
  RT_TRY(rt::context("cudaImportExternalSemaphore"));
  return api::cuImportExternalSemaphore(cu(extSem_out), reinterpret_cast<const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC*>(desc));
}
Errc cudaSignalExternalSemaphoresAsync(const cudaExternalSemaphore_t* sems, const cudaExternalSemaphoreSignalParams* p,
                                       unsigned int n, cudaStream_t stream) noexcept {
  RT_TRY(rt::context("cudaSignalExternalSemaphoresAsync"));
  return api::cuSignalExternalSemaphoresAsync(cu(sems), reinterpret_cast<const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS*>(p),
                                              n, stream);
}
Errc cudaSignalExternalSemaphoresAsync_ptsz(const cudaExternalSemaphore_t* sems,
                                            const cudaExternalSemaphoreSignalParams* p, unsigned int n,
                                            cudaStream_t stream) noexcept {
  RT_TRY(rt::context("cudaSignalExternalSemaphoresAsync"));
  return api::cuSignalExternalSemaphoresAsync_ptsz(
      cu(sems), reinterpret_cast<const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS*>(p), n, stream);
}
Errc cudaWaitExternalSemaphoresAsync(const cudaExternalSemaphore_t* sems, const cudaExternalSemaphoreWaitParams* p,
                                     unsigned int n, cudaStream_t stream) noexcept {
  RT_TRY(rt::context("cudaWaitExternalSemaphoresAsync"));
  return api::cuWaitExternalSemaphoresAsync(cu(sems), reinterpret_cast<const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS*>(p), n,
                                            stream);
}
Errc cudaWaitExternalSemaphoresAsync_ptsz(const cudaExternalSemaphore_t* sems,
                                          const cudaExternalSemaphoreWaitParams* p, unsigned int n,
                                          cudaStream_t stream) noexcept {
  RT_TRY(rt::context("cudaWaitExternalSemaphoresAsync"));
  return api::cuWaitExternalSemaphoresAsync_ptsz(cu(sems), reinterpret_cast<const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS*>(p),
                                                 n, stream);
}
Errc cudaDestroyExternalSemaphore(cudaExternalSemaphore_t extSem) noexcept {
  RT_TRY(rt::context("cudaDestroyExternalSemaphore"));
  return api::cuDestroyExternalSemaphore(cu(extSem));
}

}  // namespace cuda_shim::rtapi
