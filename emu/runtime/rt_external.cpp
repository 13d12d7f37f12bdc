// Runtime entries: external memory and semaphores, and the arrays they map. The runtime's
// descriptors have the driver's layout except the mipmapped-array one, whose channel
// format and extent become a CUDA_ARRAY3D_DESCRIPTOR here.
#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {

static_assert(sizeof(cudaExternalMemoryHandleDesc) == sizeof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC));
static_assert(sizeof(cudaExternalMemoryBufferDesc) == sizeof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC));
static_assert(sizeof(cudaExternalSemaphoreHandleDesc) == sizeof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC));
static_assert(sizeof(cudaExternalSemaphoreSignalParams) == sizeof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS));
static_assert(sizeof(cudaExternalSemaphoreWaitParams) == sizeof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS));

// A channel format as the driver's (format, channel count); false when it has none.
bool to_driver_format(const cudaChannelFormatDesc& f, CUarray_format& fmt, unsigned& channels) {
  const int bits[4] = {f.x, f.y, f.z, f.w};
  channels = 0;
  while (channels < 4 && bits[channels] != 0) ++channels;
  for (unsigned i = channels; i < 4; ++i)
    if (bits[i] != 0) return false;  // a gap between channels
  if (channels == 0 || channels == 3) return false;
  for (unsigned i = 1; i < channels; ++i)
    if (bits[i] != bits[0]) return false;
  switch (f.f) {
    case cudaChannelFormatKindSigned:
      fmt = bits[0] == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits[0] == 16 ? CU_AD_FORMAT_SIGNED_INT16
            : bits[0] == 32 ? CU_AD_FORMAT_SIGNED_INT32 : CU_AD_FORMAT_MAX;
      break;
    case cudaChannelFormatKindUnsigned:
      fmt = bits[0] == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits[0] == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
            : bits[0] == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : CU_AD_FORMAT_MAX;
      break;
    case cudaChannelFormatKindFloat:
      fmt = bits[0] == 16 ? CU_AD_FORMAT_HALF : bits[0] == 32 ? CU_AD_FORMAT_FLOAT : CU_AD_FORMAT_MAX;
      break;
    default: return false;
  }
  return fmt != CU_AD_FORMAT_MAX;
}

cudaChannelFormatDesc from_driver_format(CUarray_format fmt, unsigned channels) {
  int b = 0;
  cudaChannelFormatKind k = cudaChannelFormatKindNone;
  switch (fmt) {
    case CU_AD_FORMAT_UNSIGNED_INT8: b = 8, k = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_UNSIGNED_INT16: b = 16, k = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_UNSIGNED_INT32: b = 32, k = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_SIGNED_INT8: b = 8, k = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_SIGNED_INT16: b = 16, k = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_SIGNED_INT32: b = 32, k = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_HALF: b = 16, k = cudaChannelFormatKindFloat; break;
    case CU_AD_FORMAT_FLOAT: b = 32, k = cudaChannelFormatKindFloat; break;
    default: break;
  }
  cudaChannelFormatDesc d{};
  d.x = b;
  d.y = channels > 1 ? b : 0;
  d.z = channels > 2 ? b : 0;
  d.w = channels > 3 ? b : 0;
  d.f = k;
  return d;
}

CUarray cu(cudaArray_t a) { return reinterpret_cast<CUarray>(a); }
// The runtime's external handles are the driver's under other type names.
CUexternalMemory cu(cudaExternalMemory_t m) { return reinterpret_cast<CUexternalMemory>(m); }
CUexternalMemory* cu(cudaExternalMemory_t* m) { return reinterpret_cast<CUexternalMemory*>(m); }
CUexternalSemaphore* cu(cudaExternalSemaphore_t* s) { return reinterpret_cast<CUexternalSemaphore*>(s); }
CUexternalSemaphore cu(cudaExternalSemaphore_t s) { return reinterpret_cast<CUexternalSemaphore>(s); }
const CUexternalSemaphore* cu(const cudaExternalSemaphore_t* s) { return reinterpret_cast<const CUexternalSemaphore*>(s); }
CUdeviceptr dp(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// cudaMemcpy2DToArray / FromArray as one driver 2D copy: the array side's offsets are
// wOffset bytes and hOffset rows.
Errc copy_2d_array(cudaArray_t arr, size_t w_off, size_t h_off, bool to_array, const void* lin, size_t pitch,
                   size_t width, size_t height, cudaMemcpyKind kind, bool async, cudaStream_t s, bool pt,
                   const char* api) {
  RT_TRY(rt::context(api));
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return fail(Errc::rt_invalid_memcpy_direction, "{}: kind {} is not a cudaMemcpyKind", api, static_cast<int>(kind));
  CUDA_MEMCPY2D m{};
  const bool lin_host = to_array ? (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost)
                                 : (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost);
  const CUmemorytype lt = kind == cudaMemcpyDefault ? CU_MEMORYTYPE_UNIFIED
                          : lin_host                ? CU_MEMORYTYPE_HOST
                                                    : CU_MEMORYTYPE_DEVICE;
  if (to_array) {
    m.srcMemoryType = lt;
    m.srcHost = lin;
    m.srcDevice = dp(lin);
    m.srcPitch = pitch;
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    m.dstArray = cu(arr);
    m.dstXInBytes = w_off;
    m.dstY = h_off;
  } else {
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    m.srcArray = cu(arr);
    m.srcXInBytes = w_off;
    m.srcY = h_off;
    m.dstMemoryType = lt;
    m.dstHost = const_cast<void*>(lin);
    m.dstDevice = dp(lin);
    m.dstPitch = pitch;
  }
  m.WidthInBytes = width;
  m.Height = height;
  if (async) return pt ? api::cuMemcpy2DAsync_v2_ptsz(&m, s) : api::cuMemcpy2DAsync_v2(&m, s);
  return pt ? api::cuMemcpy2D_v2_ptds(&m) : api::cuMemcpy2D_v2(&m);
}

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

// ---- arrays ---------------------------------------------------------------------------------
Errc cudaGetMipmappedArrayLevel(cudaArray_t* levelArray, cudaMipmappedArray_const_t mipmap, unsigned int level) noexcept {
  RT_TRY(rt::context("cudaGetMipmappedArrayLevel"));
  return api::cuMipmappedArrayGetLevel(reinterpret_cast<CUarray*>(levelArray),
                                       reinterpret_cast<CUmipmappedArray>(const_cast<cudaMipmappedArray*>(mipmap)),
                                       level);
}
Errc cudaFreeMipmappedArray(cudaMipmappedArray_t mipmap) noexcept {
  RT_TRY(rt::context("cudaFreeMipmappedArray"));
  return api::cuMipmappedArrayDestroy(reinterpret_cast<CUmipmappedArray>(mipmap));
}
Errc cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array) noexcept {
  RT_TRY(rt::context("cudaArrayGetInfo"));
  CUDA_ARRAY3D_DESCRIPTOR d{};
  RT_TRY(api::cuArray3DGetDescriptor_v2(&d, cu(array)));
  if (desc) *desc = from_driver_format(d.Format, d.NumChannels);
  if (extent) *extent = cudaExtent{d.Width, d.Height, d.Depth};
  if (flags) *flags = d.Flags;
  return Errc::success;
}
// The four 2D copies to and from an array, once on the legacy default stream and once on the
// per-thread one (_ptds / _ptsz): the same body, which tells them apart by PT.
#define CUDA_SHIM_ARRAY_COPIES(SYNC, ASYNC, PT)                                                                      \
  Errc cudaMemcpy2DToArray##SYNC(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,     \
                                 size_t width, size_t height, cudaMemcpyKind kind) noexcept {                        \
    return copy_2d_array(dst, wOffset, hOffset, true, src, spitch, width, height, kind, false, nullptr, PT,           \
                         "cudaMemcpy2DToArray");                                                                     \
  }                                                                                                                   \
  Errc cudaMemcpy2DFromArray##SYNC(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,  \
                                   size_t width, size_t height, cudaMemcpyKind kind) noexcept {                      \
    return copy_2d_array(const_cast<cudaArray_t>(src), wOffset, hOffset, false, dst, dpitch, width, height, kind,     \
                         false, nullptr, PT, "cudaMemcpy2DFromArray");                                               \
  }                                                                                                                   \
  Errc cudaMemcpy2DToArrayAsync##ASYNC(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,             \
                                       size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,              \
                                       cudaStream_t stream) noexcept {                                               \
    return copy_2d_array(dst, wOffset, hOffset, true, src, spitch, width, height, kind, true, stream, PT,             \
                         "cudaMemcpy2DToArrayAsync");                                                                \
  }                                                                                                                   \
  Errc cudaMemcpy2DFromArrayAsync##ASYNC(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,            \
                                         size_t hOffset, size_t width, size_t height, cudaMemcpyKind kind,           \
                                         cudaStream_t stream) noexcept {                                             \
    return copy_2d_array(const_cast<cudaArray_t>(src), wOffset, hOffset, false, dst, dpitch, width, height, kind,     \
                         true, stream, PT, "cudaMemcpy2DFromArrayAsync");                                            \
  }
CUDA_SHIM_ARRAY_COPIES(, , false)
CUDA_SHIM_ARRAY_COPIES(_ptds, _ptsz, true)
#undef CUDA_SHIM_ARRAY_COPIES

}  // namespace cuda_shim::rtapi
