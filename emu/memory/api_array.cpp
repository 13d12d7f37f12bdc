// Driver entries: CUDA arrays and mipmapped arrays, made here (array_create.cpp) or mapped from
// external memory; memory/array.hpp has their layout.
#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "memory/array.hpp"

namespace cuda_shim::api {

namespace {
// cuArrayCreate and cuArray3DCreate: one array of its own, under a new handle.
Errc new_array(CUarray* pHandle, const void* desc, const CUDA_ARRAY3D_DESCRIPTOR& d, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pHandle, api, "pHandle"));
  TRY(need(desc, api, "pAllocateArray"));
  mem::ArrayPtr a;
  TRY(mem::create_array(ctx, d, api, "*pAllocateArray", a));
  *pHandle = static_cast<CUarray>(mem::arrays().add(std::move(a)));
  return Errc::success;
}
}  // namespace

Errc cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray) noexcept {
  return new_array(pHandle, pAllocateArray, pAllocateArray ? *pAllocateArray : CUDA_ARRAY3D_DESCRIPTOR{},
                   "cuArray3DCreate");
}

Errc cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* pAllocateArray) noexcept {
  // A 1D or 2D array: the 3D descriptor with Depth 0 and no flags.
  CUDA_ARRAY3D_DESCRIPTOR d{};
  if (pAllocateArray)
    d = {pAllocateArray->Width, pAllocateArray->Height, 0, pAllocateArray->Format, pAllocateArray->NumChannels, 0};
  return new_array(pHandle, pAllocateArray, d, "cuArrayCreate");
}

Errc cuMipmappedArrayCreate(CUmipmappedArray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pMipmappedArrayDesc,
                            unsigned int numMipmapLevels) noexcept {
  const char* api = "cuMipmappedArrayCreate";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pHandle, api, "pHandle"));
  TRY(need(pMipmappedArrayDesc, api, "pMipmappedArrayDesc"));
  mem::MipmappedArrayPtr m;
  TRY(mem::create_mipmap(ctx, *pMipmappedArrayDesc, numMipmapLevels, api, "*pMipmappedArrayDesc", m));
  for (auto& l : m->level) mem::arrays().add(l);
  *pHandle = static_cast<CUmipmappedArray>(mem::mipmapped_arrays().add(std::move(m)));
  return Errc::success;
}

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
  // Measured: destroying a mipmapped array's level succeeds, its descriptor still reads back, and
  // destroying the mipmapped array afterwards succeeds. The level lives as long as its mipmapped
  // array. An array of its own goes (its memory once copies in flight let go of it).
  if (a->own) mem::arrays().remove(hArray);
  return Errc::success;
}

namespace {
Errc no_requirements(const void* out, const char* api) {
  TRY(need(out, api, "memoryRequirements"));
  // Measured: INVALID_VALUE for mapped and for ordinary arrays alike.
  return fail(Errc::invalid_value, "{}: only arrays created with CUDA_ARRAY3D_DEFERRED_MAPPING have memory "
              "requirements; this array already has its memory", api);
}
// Measured: a 64x64 FLOAT deferred-mapping array (16 KiB) needs 64 KiB aligned to 64 KiB.
constexpr size_t kDeferredGranule = 64 << 10;
}  // namespace

Errc cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS* req, CUarray array, CUdevice device) noexcept {
  const char* api = "cuArrayGetMemoryRequirements";
  TRY(Driver::get().require_init(api));
  mem::ArrayPtr a;
  TRY(mem::array_arg(array, api, "array", a));
  if (!a->own || !(a->desc.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING)) return no_requirements(req, api);
  TRY(need(req, api, "memoryRequirements"));
  *req = CUDA_ARRAY_MEMORY_REQUIREMENTS{};
  req->size = (a->bytes + kDeferredGranule - 1) / kDeferredGranule * kDeferredGranule;
  req->alignment = kDeferredGranule;
  return Errc::success;
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
