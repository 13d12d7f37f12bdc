// Runtime entries: texture and surface objects. The runtime's descriptors name channel formats
// and read modes where the driver's name array formats and flags; each call converts and asks
// the driver (memory/api_texture.cpp).
#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "runtime/rt_array.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {
namespace {

Errc to_driver(const cudaResourceDesc& r, CUDA_RESOURCE_DESC& d, const char* api) {
  d = CUDA_RESOURCE_DESC{};
  d.resType = static_cast<CUresourcetype>(r.resType);
  d.flags = r.flags;
  switch (r.resType) {
    case cudaResourceTypeArray: d.res.array.hArray = reinterpret_cast<CUarray>(r.res.array.array); break;
    case cudaResourceTypeMipmappedArray:
      d.res.mipmap.hMipmappedArray = reinterpret_cast<CUmipmappedArray>(r.res.mipmap.mipmap);
      break;
    case cudaResourceTypeLinear:
      d.res.linear.devPtr = reinterpret_cast<CUdeviceptr>(r.res.linear.devPtr);
      d.res.linear.sizeInBytes = r.res.linear.sizeInBytes;
      if (!to_driver_format(r.res.linear.desc, d.res.linear.format, d.res.linear.numChannels))
        return fail(Errc::rt_invalid_channel_descriptor, "{}: pResDesc->res.linear.desc is not a channel format", api);
      break;
    case cudaResourceTypePitch2D:
      d.res.pitch2D.devPtr = reinterpret_cast<CUdeviceptr>(r.res.pitch2D.devPtr);
      d.res.pitch2D.width = r.res.pitch2D.width;
      d.res.pitch2D.height = r.res.pitch2D.height;
      d.res.pitch2D.pitchInBytes = r.res.pitch2D.pitchInBytes;
      if (!to_driver_format(r.res.pitch2D.desc, d.res.pitch2D.format, d.res.pitch2D.numChannels))
        return fail(Errc::rt_invalid_channel_descriptor, "{}: pResDesc->res.pitch2D.desc is not a channel format", api);
      break;
    default: break;  // the driver names it
  }
  return Errc::success;
}

cudaResourceDesc from_driver(const CUDA_RESOURCE_DESC& d) {
  cudaResourceDesc r{};
  r.resType = static_cast<cudaResourceType>(d.resType);
  r.flags = d.flags;
  switch (d.resType) {
    case CU_RESOURCE_TYPE_ARRAY: r.res.array.array = reinterpret_cast<cudaArray_t>(d.res.array.hArray); break;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      r.res.mipmap.mipmap = reinterpret_cast<cudaMipmappedArray_t>(d.res.mipmap.hMipmappedArray);
      break;
    case CU_RESOURCE_TYPE_LINEAR:
      r.res.linear.devPtr = reinterpret_cast<void*>(d.res.linear.devPtr);
      r.res.linear.desc = from_driver_format(d.res.linear.format, d.res.linear.numChannels);
      r.res.linear.sizeInBytes = d.res.linear.sizeInBytes;
      break;
    default:
      r.res.pitch2D.devPtr = reinterpret_cast<void*>(d.res.pitch2D.devPtr);
      r.res.pitch2D.desc = from_driver_format(d.res.pitch2D.format, d.res.pitch2D.numChannels);
      r.res.pitch2D.width = d.res.pitch2D.width;
      r.res.pitch2D.height = d.res.pitch2D.height;
      r.res.pitch2D.pitchInBytes = d.res.pitch2D.pitchInBytes;
      break;
  }
  return r;
}

CUDA_TEXTURE_DESC to_driver(const cudaTextureDesc& t) {
  CUDA_TEXTURE_DESC d{};
  for (int k = 0; k < 3; ++k) d.addressMode[k] = static_cast<CUaddress_mode>(t.addressMode[k]);
  d.filterMode = static_cast<CUfilter_mode>(t.filterMode);
  d.flags = (t.readMode == cudaReadModeElementType ? CU_TRSF_READ_AS_INTEGER : 0) |
            (t.normalizedCoords ? CU_TRSF_NORMALIZED_COORDINATES : 0) | (t.sRGB ? CU_TRSF_SRGB : 0) |
            (t.disableTrilinearOptimization ? CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION : 0) |
            (t.seamlessCubemap ? CU_TRSF_SEAMLESS_CUBEMAP : 0);
  d.maxAnisotropy = t.maxAnisotropy;
  d.mipmapFilterMode = static_cast<CUfilter_mode>(t.mipmapFilterMode);
  d.mipmapLevelBias = t.mipmapLevelBias;
  d.minMipmapLevelClamp = t.minMipmapLevelClamp;
  d.maxMipmapLevelClamp = t.maxMipmapLevelClamp;
  for (int k = 0; k < 4; ++k) d.borderColor[k] = t.borderColor[k];
  return d;
}

cudaTextureDesc from_driver(const CUDA_TEXTURE_DESC& d) {
  cudaTextureDesc t{};
  for (int k = 0; k < 3; ++k) t.addressMode[k] = static_cast<cudaTextureAddressMode>(d.addressMode[k]);
  t.filterMode = static_cast<cudaTextureFilterMode>(d.filterMode);
  t.readMode = (d.flags & CU_TRSF_READ_AS_INTEGER) ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
  t.sRGB = (d.flags & CU_TRSF_SRGB) != 0;
  t.normalizedCoords = (d.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
  t.disableTrilinearOptimization = (d.flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION) != 0;
  t.seamlessCubemap = (d.flags & CU_TRSF_SEAMLESS_CUBEMAP) != 0;
  t.maxAnisotropy = d.maxAnisotropy;
  t.mipmapFilterMode = static_cast<cudaTextureFilterMode>(d.mipmapFilterMode);
  t.mipmapLevelBias = d.mipmapLevelBias;
  t.minMipmapLevelClamp = d.minMipmapLevelClamp;
  t.maxMipmapLevelClamp = d.maxMipmapLevelClamp;
  for (int k = 0; k < 4; ++k) t.borderColor[k] = d.borderColor[k];
  return t;
}

// A texture's or surface's resource, from the driver's query `get`, in the runtime's form.
template <class Get>
Errc resource_desc(cudaResourceDesc* out, const char* api, Get get) {
  RT_TRY(rt::context(api));
  RT_TRY(rt::need(out, api, "pResDesc"));
  CUDA_RESOURCE_DESC r{};
  RT_TRY(get(&r));
  *out = from_driver(r);
  return Errc::success;
}

}  // namespace

Errc cudaCreateTextureObject(cudaTextureObject_t* pTexObject, const cudaResourceDesc* pResDesc,
                             const cudaTextureDesc* pTexDesc, const cudaResourceViewDesc* pResViewDesc) noexcept {
  const char* api = "cudaCreateTextureObject";
  RT_TRY(rt::context(api));
  RT_TRY(rt::need(pTexObject, api, "pTexObject"));
  RT_TRY(rt::need(pResDesc, api, "pResDesc"));
  RT_TRY(rt::need(pTexDesc, api, "pTexDesc"));
  CUDA_RESOURCE_DESC r;
  RT_TRY(to_driver(*pResDesc, r, api));
  const CUDA_TEXTURE_DESC t = to_driver(*pTexDesc);
  static_assert(sizeof(cudaResourceViewDesc) == sizeof(CUDA_RESOURCE_VIEW_DESC));
  return api::cuTexObjectCreate(pTexObject, &r, &t, reinterpret_cast<const CUDA_RESOURCE_VIEW_DESC*>(pResViewDesc));
}
Errc cudaDestroyTextureObject(cudaTextureObject_t texObject) noexcept {
  RT_TRY(rt::context("cudaDestroyTextureObject"));
  return api::cuTexObjectDestroy(texObject);
}
Errc cudaGetTextureObjectResourceDesc(cudaResourceDesc* pResDesc, cudaTextureObject_t texObject) noexcept {
  return resource_desc(pResDesc, "cudaGetTextureObjectResourceDesc",
                       [&](CUDA_RESOURCE_DESC* r) { return api::cuTexObjectGetResourceDesc(r, texObject); });
}
Errc cudaGetTextureObjectTextureDesc(cudaTextureDesc* pTexDesc, cudaTextureObject_t texObject) noexcept {
  const char* api = "cudaGetTextureObjectTextureDesc";
  RT_TRY(rt::context(api));
  RT_TRY(rt::need(pTexDesc, api, "pTexDesc"));
  CUDA_TEXTURE_DESC t{};
  RT_TRY(api::cuTexObjectGetTextureDesc(&t, texObject));
  *pTexDesc = from_driver(t);
  return Errc::success;
}
Errc cudaGetTextureObjectResourceViewDesc(cudaResourceViewDesc* pResViewDesc, cudaTextureObject_t texObject) noexcept {
  RT_TRY(rt::context("cudaGetTextureObjectResourceViewDesc"));
  return api::cuTexObjectGetResourceViewDesc(reinterpret_cast<CUDA_RESOURCE_VIEW_DESC*>(pResViewDesc), texObject);
}
Errc cudaCreateSurfaceObject(cudaSurfaceObject_t* pSurfObject, const cudaResourceDesc* pResDesc) noexcept {
  const char* api = "cudaCreateSurfaceObject";
  RT_TRY(rt::context(api));
  RT_TRY(rt::need(pSurfObject, api, "pSurfObject"));
  RT_TRY(rt::need(pResDesc, api, "pResDesc"));
  CUDA_RESOURCE_DESC r;
  RT_TRY(to_driver(*pResDesc, r, api));
  return api::cuSurfObjectCreate(pSurfObject, &r);
}
Errc cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject) noexcept {
  RT_TRY(rt::context("cudaDestroySurfaceObject"));
  return api::cuSurfObjectDestroy(surfObject);
}
Errc cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* pResDesc, cudaSurfaceObject_t surfObject) noexcept {
  return resource_desc(pResDesc, "cudaGetSurfaceObjectResourceDesc",
                       [&](CUDA_RESOURCE_DESC* r) { return api::cuSurfObjectGetResourceDesc(r, surfObject); });
}

}  // namespace cuda_shim::rtapi
