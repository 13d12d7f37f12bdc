// Runtime entries: allocation, pinned host memory, copies, memsets, pointer attributes.
// A stated cudaMemcpyKind is honoured, as NVIDIA's runtime does (measured on a real
// H200, .probe/out/facts.txt): HostToDevice needs a device-accessible destination
// (device, pinned or registered memory), DeviceToHost a device-accessible source,
// DeviceToDevice both, else cudaErrorInvalidValue; HostToHost and Default copy by
// unified address. A count of 0 succeeds before the kind is even checked.
#include <cstdint>

#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "memory/array.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {
using rt::need;

CUdeviceptr dp(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

using rt::check_kind;

// ---- linear copies ----------------------------------------------------------------------
Errc memcpy_sync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  if (count == 0) return Errc::success;
  RT_TRY(check_kind(kind, api));
  switch (kind) {
    case cudaMemcpyHostToDevice:
      return pt ? api::cuMemcpyHtoD_v2_ptds(dp(dst), src, count) : api::cuMemcpyHtoD_v2(dp(dst), src, count);
    case cudaMemcpyDeviceToHost:
      return pt ? api::cuMemcpyDtoH_v2_ptds(dst, dp(src), count) : api::cuMemcpyDtoH_v2(dst, dp(src), count);
    case cudaMemcpyDeviceToDevice:
      return pt ? api::cuMemcpyDtoD_v2_ptds(dp(dst), dp(src), count) : api::cuMemcpyDtoD_v2(dp(dst), dp(src), count);
    default:
      return pt ? api::cuMemcpy_ptds(dp(dst), dp(src), count) : api::cuMemcpy(dp(dst), dp(src), count);
  }
}

Errc memcpy_async(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t s, bool pt,
                  const char* api) {
  RT_TRY(rt::context(api));
  if (count == 0) return Errc::success;
  RT_TRY(check_kind(kind, api));
  switch (kind) {
    case cudaMemcpyHostToDevice:
      return pt ? api::cuMemcpyHtoDAsync_v2_ptsz(dp(dst), src, count, s)
                : api::cuMemcpyHtoDAsync_v2(dp(dst), src, count, s);
    case cudaMemcpyDeviceToHost:
      return pt ? api::cuMemcpyDtoHAsync_v2_ptsz(dst, dp(src), count, s)
                : api::cuMemcpyDtoHAsync_v2(dst, dp(src), count, s);
    case cudaMemcpyDeviceToDevice:
      return pt ? api::cuMemcpyDtoDAsync_v2_ptsz(dp(dst), dp(src), count, s)
                : api::cuMemcpyDtoDAsync_v2(dp(dst), dp(src), count, s);
    default:
      return pt ? api::cuMemcpyAsync_ptsz(dp(dst), dp(src), count, s) : api::cuMemcpyAsync(dp(dst), dp(src), count, s);
  }
}

// The driver's view of each end of a copy of kind `kind`.
CUmemorytype src_type(cudaMemcpyKind k) {
  return k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice ? CU_MEMORYTYPE_DEVICE
         : k == cudaMemcpyDefault                                       ? CU_MEMORYTYPE_UNIFIED
                                                                        : CU_MEMORYTYPE_HOST;
}
CUmemorytype dst_type(cudaMemcpyKind k) {
  return k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice ? CU_MEMORYTYPE_DEVICE
         : k == cudaMemcpyDefault                                       ? CU_MEMORYTYPE_UNIFIED
                                                                        : CU_MEMORYTYPE_HOST;
}
template <class M>
void set_src(M& m, cudaMemcpyKind k, const void* p) {
  m.srcMemoryType = src_type(k);
  if (m.srcMemoryType == CU_MEMORYTYPE_HOST) m.srcHost = p;
  else m.srcDevice = dp(p);
}
template <class M>
void set_dst(M& m, cudaMemcpyKind k, void* p) {
  m.dstMemoryType = dst_type(k);
  if (m.dstMemoryType == CU_MEMORYTYPE_HOST) m.dstHost = p;
  else m.dstDevice = dp(p);
}

// ---- 2D copies ----------------------------------------------------------------------------
Errc make_2d(CUDA_MEMCPY2D& m, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
             cudaMemcpyKind kind, const char* api) {
  RT_TRY(check_kind(kind, api));
  if (width > dpitch || width > spitch)
    return fail(Errc::rt_invalid_pitch_value, "{}: width {} is larger than a pitch (dpitch {}, spitch {})", api, width,
                dpitch, spitch);
  m = CUDA_MEMCPY2D{};
  set_src(m, kind, src);
  m.srcPitch = spitch;
  set_dst(m, kind, dst);
  m.dstPitch = dpitch;
  m.WidthInBytes = width;
  m.Height = height;
  return Errc::success;
}

Errc memcpy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
              cudaMemcpyKind kind, bool async, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  if (width == 0 || height == 0) return Errc::success;
  CUDA_MEMCPY2D m;
  RT_TRY(make_2d(m, dst, dpitch, src, spitch, width, height, kind, api));
  if (async) return pt ? api::cuMemcpy2DAsync_v2_ptsz(&m, s) : api::cuMemcpy2DAsync_v2(&m, s);
  return pt ? api::cuMemcpy2D_v2_ptds(&m) : api::cuMemcpy2D_v2(&m);
}

// ---- 3D copies ----------------------------------------------------------------------------
template <class M>
void fill_3d(M& m, cudaMemcpyKind k, const cudaPos& sp, const cudaPitchedPtr& s, const cudaPos& dpos,
             const cudaPitchedPtr& d, const cudaExtent& e) {
  m.srcXInBytes = sp.x, m.srcY = sp.y, m.srcZ = sp.z;
  set_src(m, k, s.ptr);
  m.srcPitch = s.pitch;
  m.srcHeight = s.ysize;
  m.dstXInBytes = dpos.x, m.dstY = dpos.y, m.dstZ = dpos.z;
  set_dst(m, k, d.ptr);
  m.dstPitch = d.pitch;
  m.dstHeight = d.ysize;
  m.WidthInBytes = e.width;
  m.Height = e.height;
  m.Depth = e.depth;
}

// The bytes of one element of the array a copy names (cudaMemcpy3D counts positions and the
// extent in elements of the array taking part, in bytes otherwise).
Errc element_bytes(cudaArray_const_t a, size_t& out) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  RT_TRY(api::cuArray3DGetDescriptor_v2(&d, reinterpret_cast<CUarray>(const_cast<cudaArray_t>(a))));
  out = mem::element_size(d.Format, d.NumChannels);
  return Errc::success;
}

// An array end of a 3D copy: the driver's array operand at a byte position.
template <class M>
void array_end(M& m, bool src, cudaArray_const_t a, const cudaPos& pos, size_t elem) {
  CUarray h = reinterpret_cast<CUarray>(const_cast<cudaArray_t>(a));
  if (src) {
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY, m.srcArray = h, m.srcXInBytes = pos.x * elem;
    m.srcHost = nullptr, m.srcDevice = 0, m.srcPitch = 0, m.srcHeight = 0;
  } else {
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY, m.dstArray = h, m.dstXInBytes = pos.x * elem;
    m.dstHost = nullptr, m.dstDevice = 0, m.dstPitch = 0, m.dstHeight = 0;
  }
}

Errc memcpy3d(const cudaMemcpy3DParms* p, bool async, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(need(p, api, "p"));
  if (p->extent.width == 0 || p->extent.height == 0 || p->extent.depth == 0) return Errc::success;
  RT_TRY(check_kind(p->kind, api));
  CUDA_MEMCPY3D m{};
  fill_3d(m, p->kind, p->srcPos, p->srcPtr, p->dstPos, p->dstPtr, p->extent);
  if (p->srcArray || p->dstArray) {
    size_t elem = 1;
    RT_TRY(element_bytes(p->srcArray ? p->srcArray : p->dstArray, elem));
    m.WidthInBytes = p->extent.width * elem;
    if (p->srcArray) array_end(m, true, p->srcArray, p->srcPos, elem);
    if (p->dstArray) array_end(m, false, p->dstArray, p->dstPos, elem);
  }
  if (async) return pt ? api::cuMemcpy3DAsync_v2_ptsz(&m, s) : api::cuMemcpy3DAsync_v2(&m, s);
  return pt ? api::cuMemcpy3D_v2_ptds(&m) : api::cuMemcpy3D_v2(&m);
}

Errc memcpy3d_peer(const cudaMemcpy3DPeerParms* p, bool async, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(need(p, api, "p"));
  if (p->srcArray || p->dstArray)
    return fail(Errc::not_supported, "{}: CUDA arrays are not emulated by cuda-shim yet", api);
  CUcontext sc = nullptr, dc = nullptr;
  RT_TRY(rt::primary(p->srcDevice, sc, api));
  RT_TRY(rt::primary(p->dstDevice, dc, api));
  if (p->extent.width == 0 || p->extent.height == 0 || p->extent.depth == 0) return Errc::success;
  CUDA_MEMCPY3D_PEER m{};
  fill_3d(m, cudaMemcpyDefault, p->srcPos, p->srcPtr, p->dstPos, p->dstPtr, p->extent);
  m.srcContext = sc;
  m.dstContext = dc;
  if (async) return pt ? api::cuMemcpy3DPeerAsync_ptsz(&m, s) : api::cuMemcpy3DPeerAsync(&m, s);
  return pt ? api::cuMemcpy3DPeer_ptds(&m) : api::cuMemcpy3DPeer(&m);
}

// ---- memsets --------------------------------------------------------------------------------
Errc memset_2d(void* ptr, size_t pitch, int value, size_t width, size_t height, bool async, cudaStream_t s, bool pt) {
  auto uc = static_cast<unsigned char>(value);
  if (async)
    return pt ? api::cuMemsetD2D8Async_ptsz(dp(ptr), pitch, uc, width, height, s)
              : api::cuMemsetD2D8Async(dp(ptr), pitch, uc, width, height, s);
  return pt ? api::cuMemsetD2D8_v2_ptds(dp(ptr), pitch, uc, width, height)
            : api::cuMemsetD2D8_v2(dp(ptr), pitch, uc, width, height);
}

Errc memset3d(cudaPitchedPtr p, int value, cudaExtent e, bool async, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  if (e.width == 0 || e.height == 0 || e.depth == 0) return Errc::success;
  if (e.width > p.pitch)
    return fail(Errc::invalid_value, "{}: extent.width {} is larger than the pitch {}", api, e.width, p.pitch);
  // One 2D memset per slice, in stream order; slices are pitch * ysize bytes apart.
  size_t slice = p.pitch * p.ysize;
  for (size_t z = 0; z < e.depth; ++z)
    RT_TRY(memset_2d(static_cast<char*>(p.ptr) + z * slice, p.pitch, value, e.width, e.height, async, s, pt));
  return Errc::success;
}

}  // namespace

// ---- allocation -----------------------------------------------------------------------------
Errc cudaMalloc(void** devPtr, size_t size) noexcept {
  RT_TRY(rt::context("cudaMalloc"));
  RT_TRY(need(devPtr, "cudaMalloc", "devPtr"));
  *devPtr = nullptr;  // measured: null on failure, and for a 0-byte request (which succeeds)
  if (size == 0) return Errc::success;
  CUdeviceptr d = 0;
  RT_TRY(api::cuMemAlloc_v2(&d, size));
  *devPtr = reinterpret_cast<void*>(d);
  return Errc::success;
}

Errc cudaFree(void* devPtr) noexcept {
  RT_TRY(rt::context("cudaFree"));  // cudaFree(0): the classic way to create the context
  if (!devPtr) return Errc::success;
  return api::cuMemFree_v2(dp(devPtr));
}

Errc cudaMallocHost(void** ptr, size_t size) noexcept {
  RT_TRY(rt::context("cudaMallocHost"));
  RT_TRY(need(ptr, "cudaMallocHost", "ptr"));
  if (size == 0) {
    *ptr = nullptr;
    return Errc::success;
  }
  return api::cuMemAllocHost_v2(ptr, size);
}

Errc cudaFreeHost(void* ptr) noexcept {
  RT_TRY(rt::context("cudaFreeHost"));
  if (!ptr) return Errc::success;
  return api::cuMemFreeHost(ptr);
}

Errc cudaHostAlloc(void** pHost, size_t size, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaHostAlloc"));
  RT_TRY(need(pHost, "cudaHostAlloc", "pHost"));
  constexpr unsigned kMask = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
  if (flags & ~kMask)
    return fail(Errc::invalid_value, "cudaHostAlloc: flags {:#x} contain unknown bits (valid: Portable 0x1, "
                "Mapped 0x2, WriteCombined 0x4)", flags);
  if (size == 0) {
    *pHost = nullptr;
    return Errc::success;
  }
  return api::cuMemHostAlloc(pHost, size, flags);  // cudaHostAlloc* flags are CU_MEMHOSTALLOC_* flags
}

Errc cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaHostGetDevicePointer"));
  RT_TRY(need(pDevice, "cudaHostGetDevicePointer", "pDevice"));
  CUdeviceptr d = 0;
  RT_TRY(api::cuMemHostGetDevicePointer_v2(&d, pHost, flags));
  *pDevice = reinterpret_cast<void*>(d);
  return Errc::success;
}

Errc cudaHostGetFlags(unsigned int* pFlags, void* pHost) noexcept {
  RT_TRY(rt::context("cudaHostGetFlags"));
  return api::cuMemHostGetFlags(pFlags, pHost);
}

Errc cudaHostRegister(void* ptr, size_t size, unsigned int flags) noexcept {
  RT_TRY(rt::context("cudaHostRegister"));
  constexpr unsigned kMask =
      cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
  if (flags & ~kMask)
    return fail(Errc::invalid_value, "cudaHostRegister: flags {:#x} contain unknown bits (valid: Portable 0x1, "
                "Mapped 0x2, IoMemory 0x4, ReadOnly 0x8)", flags);
  return api::cuMemHostRegister_v2(ptr, size, flags);  // same values as CU_MEMHOSTREGISTER_*
}

Errc cudaHostUnregister(void* ptr) noexcept {
  RT_TRY(rt::context("cudaHostUnregister"));
  return api::cuMemHostUnregister(ptr);
}

Errc cudaMemGetInfo(size_t* free, size_t* total) noexcept {
  RT_TRY(rt::context("cudaMemGetInfo"));
  return api::cuMemGetInfo_v2(free, total);
}

Errc cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) noexcept {
  RT_TRY(rt::context("cudaMallocPitch"));
  RT_TRY(need(devPtr, "cudaMallocPitch", "devPtr"));
  RT_TRY(need(pitch, "cudaMallocPitch", "pitch"));
  CUdeviceptr d = 0;
  // The element size only bounds the driver's choice of pitch; 4 is the runtime's choice.
  RT_TRY(api::cuMemAllocPitch_v2(&d, pitch, width, height, 4));
  *devPtr = reinterpret_cast<void*>(d);
  return Errc::success;
}

Errc cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr) noexcept {
  RT_TRY(rt::context("cudaPointerGetAttributes"));
  RT_TRY(need(attributes, "cudaPointerGetAttributes", "attributes"));
  CUpointer_attribute q[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                             CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                             CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  unsigned mem_type = 0;
  CUdeviceptr dev_ptr = 0;
  void* host_ptr = nullptr;
  unsigned managed = 0;
  int ordinal = cudaInvalidDeviceId;
  void* data[] = {&mem_type, &dev_ptr, &host_ptr, &managed, &ordinal};
  // Unknown pointers are not an error: the driver answers zeros, the runtime "unregistered".
  RT_TRY(api::cuPointerGetAttributes(5, q, data, dp(ptr)));
  cudaPointerAttributes a{};
  if (managed) {
    a.type = cudaMemoryTypeManaged;
  } else if (mem_type == CU_MEMORYTYPE_DEVICE) {
    a.type = cudaMemoryTypeDevice;
    host_ptr = nullptr;  // device memory has no host address
  } else if (mem_type == CU_MEMORYTYPE_HOST) {
    a.type = cudaMemoryTypeHost;
  } else {
    // Measured: memory the driver does not know (malloc'd, stack, garbage, freed, NULL)
    // is "unregistered" host memory: device -2, no device pointer, the pointer itself
    // as the host pointer.
    a.type = cudaMemoryTypeUnregistered;
    ordinal = cudaInvalidDeviceId;
    dev_ptr = 0;
    host_ptr = const_cast<void*>(ptr);
  }
  a.device = ordinal;
  a.devicePointer = reinterpret_cast<void*>(dev_ptr);
  a.hostPointer = host_ptr;
  *attributes = a;
  return Errc::success;
}

// ---- copies --------------------------------------------------------------------------------
Errc cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) noexcept {
  return memcpy_sync(dst, src, count, kind, false, "cudaMemcpy");
}
Errc cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) noexcept {
  return memcpy_sync(dst, src, count, kind, true, "cudaMemcpy");
}
Errc cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t s) noexcept {
  return memcpy_async(dst, src, count, kind, s, false, "cudaMemcpyAsync");
}
Errc cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t s) noexcept {
  return memcpy_async(dst, src, count, kind, s, true, "cudaMemcpyAsync");
}

Errc cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                  enum cudaMemcpyKind kind) noexcept {
  return memcpy2d(dst, dpitch, src, spitch, width, height, kind, false, nullptr, false, "cudaMemcpy2D");
}
Errc cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                       enum cudaMemcpyKind kind) noexcept {
  return memcpy2d(dst, dpitch, src, spitch, width, height, kind, false, nullptr, true, "cudaMemcpy2D");
}
Errc cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                       enum cudaMemcpyKind kind, cudaStream_t s) noexcept {
  return memcpy2d(dst, dpitch, src, spitch, width, height, kind, true, s, false, "cudaMemcpy2DAsync");
}
Errc cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            enum cudaMemcpyKind kind, cudaStream_t s) noexcept {
  return memcpy2d(dst, dpitch, src, spitch, width, height, kind, true, s, true, "cudaMemcpy2DAsync");
}

Errc cudaMemcpy3D(const struct cudaMemcpy3DParms* p) noexcept { return memcpy3d(p, false, nullptr, false, "cudaMemcpy3D"); }
Errc cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms* p) noexcept {
  return memcpy3d(p, false, nullptr, true, "cudaMemcpy3D");
}
Errc cudaMemcpy3DAsync(const struct cudaMemcpy3DParms* p, cudaStream_t s) noexcept {
  return memcpy3d(p, true, s, false, "cudaMemcpy3DAsync");
}
Errc cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms* p, cudaStream_t s) noexcept {
  return memcpy3d(p, true, s, true, "cudaMemcpy3DAsync");
}
Errc cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms* p) noexcept {
  return memcpy3d_peer(p, false, nullptr, false, "cudaMemcpy3DPeer");
}
Errc cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms* p) noexcept {
  return memcpy3d_peer(p, false, nullptr, true, "cudaMemcpy3DPeer");
}
Errc cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms* p, cudaStream_t s) noexcept {
  return memcpy3d_peer(p, true, s, false, "cudaMemcpy3DPeerAsync");
}
Errc cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms* p, cudaStream_t s) noexcept {
  return memcpy3d_peer(p, true, s, true, "cudaMemcpy3DPeerAsync");
}

Errc cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) noexcept {
  const char* api = "cudaMemcpyPeer";
  RT_TRY(rt::context(api));
  CUcontext sc = nullptr, dc = nullptr;
  RT_TRY(rt::primary(srcDevice, sc, api));
  RT_TRY(rt::primary(dstDevice, dc, api));
  if (count == 0) return Errc::success;
  return api::cuMemcpyPeer(dp(dst), dc, dp(src), sc, count);
}
Errc cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                         cudaStream_t s) noexcept {
  const char* api = "cudaMemcpyPeerAsync";
  RT_TRY(rt::context(api));
  CUcontext sc = nullptr, dc = nullptr;
  RT_TRY(rt::primary(srcDevice, sc, api));
  RT_TRY(rt::primary(dstDevice, dc, api));
  if (count == 0) return Errc::success;
  return api::cuMemcpyPeerAsync(dp(dst), dc, dp(src), sc, count, s);
}

// ---- memsets --------------------------------------------------------------------------------
Errc cudaMemset(void* devPtr, int value, size_t count) noexcept {
  RT_TRY(rt::context("cudaMemset"));
  if (count == 0) return Errc::success;
  return api::cuMemsetD8_v2(dp(devPtr), static_cast<unsigned char>(value), count);
}
Errc cudaMemset_ptds(void* devPtr, int value, size_t count) noexcept {
  RT_TRY(rt::context("cudaMemset"));
  if (count == 0) return Errc::success;
  return api::cuMemsetD8_v2_ptds(dp(devPtr), static_cast<unsigned char>(value), count);
}
Errc cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaMemsetAsync"));
  if (count == 0) return Errc::success;
  return api::cuMemsetD8Async(dp(devPtr), static_cast<unsigned char>(value), count, s);
}
Errc cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaMemsetAsync"));
  if (count == 0) return Errc::success;
  return api::cuMemsetD8Async_ptsz(dp(devPtr), static_cast<unsigned char>(value), count, s);
}
Errc cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) noexcept {
  RT_TRY(rt::context("cudaMemset2D"));
  if (width == 0 || height == 0) return Errc::success;
  return memset_2d(devPtr, pitch, value, width, height, false, nullptr, false);
}
Errc cudaMemset2D_ptds(void* devPtr, size_t pitch, int value, size_t width, size_t height) noexcept {
  RT_TRY(rt::context("cudaMemset2D"));
  if (width == 0 || height == 0) return Errc::success;
  return memset_2d(devPtr, pitch, value, width, height, false, nullptr, true);
}
Errc cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaMemset2DAsync"));
  if (width == 0 || height == 0) return Errc::success;
  return memset_2d(devPtr, pitch, value, width, height, true, s, false);
}
Errc cudaMemset2DAsync_ptsz(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                            cudaStream_t s) noexcept {
  RT_TRY(rt::context("cudaMemset2DAsync"));
  if (width == 0 || height == 0) return Errc::success;
  return memset_2d(devPtr, pitch, value, width, height, true, s, true);
}
Errc cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent e) noexcept {
  return memset3d(p, value, e, false, nullptr, false, "cudaMemset3D");
}
Errc cudaMemset3D_ptds(struct cudaPitchedPtr p, int value, struct cudaExtent e) noexcept {
  return memset3d(p, value, e, false, nullptr, true, "cudaMemset3D");
}
Errc cudaMemset3DAsync(struct cudaPitchedPtr p, int value, struct cudaExtent e, cudaStream_t s) noexcept {
  return memset3d(p, value, e, true, s, false, "cudaMemset3DAsync");
}
Errc cudaMemset3DAsync_ptsz(struct cudaPitchedPtr p, int value, struct cudaExtent e, cudaStream_t s) noexcept {
  return memset3d(p, value, e, true, s, true, "cudaMemset3DAsync");
}

}  // namespace cuda_shim::rtapi
