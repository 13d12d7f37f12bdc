// Driver entries: CUDA arrays, as far as cuda-shim makes them (levels of mipmapped arrays
// mapped from external memory; memory/array.hpp has their layout).
#include "abi/driver_api.hpp"
#include "core/driver.hpp"
#include "memory/array.hpp"

namespace cuda_shim::api {

Errc cuMipmappedArrayGetLevel(CUarray* pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level) noexcept {
  const char* api = "cuMipmappedArrayGetLevel";
  TRY(Driver::get().require_init(api));
  TRY(need(pLevelArray, api, "pLevelArray"));
  auto m = mem::mipmapped_arrays().find(hMipmappedArray);
  if (!m)
    return fail(Errc::invalid_handle, "{}: hMipmappedArray = {} is not a live mipmapped array", api,
                static_cast<void*>(hMipmappedArray));
  if (level >= m->levels)
    return fail(Errc::invalid_value, "{}: level {} does not exist in {} (levels 0 to {})", api, level, m->describe(),
                m->levels - 1);
  *pLevelArray = reinterpret_cast<CUarray>(m->level[level].get());
  return Errc::success;
}

Errc cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) noexcept {
  const char* api = "cuMipmappedArrayDestroy";
  TRY(Driver::get().require_init(api));
  auto m = mem::mipmapped_arrays().remove(hMipmappedArray);
  if (!m)
    return fail(Errc::invalid_handle, "{}: hMipmappedArray = {} is not a live mipmapped array (never created, or "
                "destroyed already)", api, static_cast<void*>(hMipmappedArray));
  for (auto& a : m->level) mem::arrays().remove(a.get());
  return Errc::success;
}

Errc cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* pArrayDescriptor, CUarray hArray) noexcept {
  const char* api = "cuArray3DGetDescriptor";
  TRY(Driver::get().require_init(api));
  TRY(need(pArrayDescriptor, api, "pArrayDescriptor"));
  mem::ArrayPtr a;
  TRY(mem::array_arg(hArray, api, "hArray", a));
  *pArrayDescriptor = a->desc;
  return Errc::success;
}

Errc cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* pArrayDescriptor, CUarray hArray) noexcept {
  const char* api = "cuArrayGetDescriptor";
  TRY(Driver::get().require_init(api));
  TRY(need(pArrayDescriptor, api, "pArrayDescriptor"));
  mem::ArrayPtr a;
  TRY(mem::array_arg(hArray, api, "hArray", a));
  pArrayDescriptor->Width = a->desc.Width;
  pArrayDescriptor->Height = a->desc.Height;
  pArrayDescriptor->Format = a->desc.Format;
  pArrayDescriptor->NumChannels = a->desc.NumChannels;
  return Errc::success;
}

Errc cuArrayDestroy(CUarray hArray) noexcept {
  const char* api = "cuArrayDestroy";
  TRY(Driver::get().require_init(api));
  mem::ArrayPtr a;
  TRY(mem::array_arg(hArray, api, "hArray", a));
  // Measured: destroying a mipmapped array's level succeeds, and so does destroying the mipmapped
  // array afterwards. The level lives as long as its mipmapped array.
  return Errc::success;
}

namespace {
Errc no_requirements(const void* out, const char* api) {
  TRY(need(out, api, "memoryRequirements"));
  // Measured: INVALID_VALUE for mapped and for ordinary arrays alike.
  return fail(Errc::invalid_value, "{}: only arrays created with CUDA_ARRAY3D_DEFERRED_MAPPING have memory "
              "requirements; this array already has its memory", api);
}
}  // namespace

Errc cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* req, CUarray array, CUdevice device) noexcept {
  const char* api = "cuArrayGetMemoryRequirements";
  TRY(Driver::get().require_init(api));
  mem::ArrayPtr a;
  TRY(mem::array_arg(array, api, "array", a));
  return no_requirements(req, api);
}

Errc cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* req, CUmipmappedArray mipmap,
                                           CUdevice device) noexcept {
  const char* api = "cuMipmappedArrayGetMemoryRequirements";
  TRY(Driver::get().require_init(api));
  if (!mem::mipmapped_arrays().find(mipmap))
    return fail(Errc::invalid_handle, "{}: mipmap = {} is not a live mipmapped array", api, static_cast<void*>(mipmap));
  return no_requirements(req, api);
}

}  // namespace cuda_shim::api
