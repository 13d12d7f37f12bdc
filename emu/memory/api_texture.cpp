// Driver entries: texture and surface objects (memory/texture.hpp). Their rules were measured on
// an H200 (tests/probe/cases/texture.cases): destroying never fails, and a query of a handle
// that names no object is INVALID_VALUE.
#include "abi/driver_api.hpp"
#include "core/context.hpp"
#include "core/driver.hpp"
#include "memory/texture.hpp"

namespace cuda_shim::api {
namespace {

Errc no_texture(const char* api, uint64_t h) {
  return fail(Errc::invalid_value, "{}: {:#x} is not a live texture object", api, h);
}
Errc no_surface(const char* api, uint64_t h) {
  return fail(Errc::invalid_value, "{}: {:#x} is not a live surface object", api, h);
}

// A texture query: `read` copies what the object holds into *out.
template <class T, class Read>
Errc query_texture(T* out, const char* what, CUtexObject h, const char* api, Read read) {
  TRY(Driver::get().require_init(api));
  TRY(need(out, api, what));
  mem::TexPtr t = mem::find_texture(h);
  if (!t) return no_texture(api, h);
  read(*t, *out);
  return Errc::success;
}

}  // namespace

Errc cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc, const CUDA_TEXTURE_DESC* pTexDesc,
                       const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) noexcept {
  const char* api = "cuTexObjectCreate";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pTexObject, api, "pTexObject"));
  // Measured: a view of format NONE over an array is refused with the handle set to 0.
  if (pResDesc && pTexDesc && pResViewDesc && pResViewDesc->format == CU_RES_VIEW_FORMAT_NONE &&
      pResDesc->resType == CU_RESOURCE_TYPE_ARRAY)
    *pTexObject = 0;
  uint64_t h = 0;
  TRY(mem::create_texture(pResDesc, pTexDesc, pResViewDesc, ctx->ordinal(), api, h));
  *pTexObject = h;
  return Errc::success;
}

Errc cuTexObjectDestroy(CUtexObject texObject) noexcept {
  TRY(Driver::get().require_init("cuTexObjectDestroy"));
  mem::destroy_texture(texObject);  // measured: success for any handle, 0 and garbage included
  return Errc::success;
}

Errc cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) noexcept {
  return query_texture(pResDesc, "pResDesc", texObject, "cuTexObjectGetResourceDesc",
                       [](const mem::TexObject& t, CUDA_RESOURCE_DESC& o) { o = t.res; });
}

Errc cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) noexcept {
  return query_texture(pTexDesc, "pTexDesc", texObject, "cuTexObjectGetTextureDesc",
                       [](const mem::TexObject& t, CUDA_TEXTURE_DESC& o) { o = t.tex; });
}

Errc cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc, CUtexObject texObject) noexcept {
  // Measured: without a view, success and nothing written.
  return query_texture(pResViewDesc, "pResViewDesc", texObject, "cuTexObjectGetResourceViewDesc",
                       [](const mem::TexObject& t, CUDA_RESOURCE_VIEW_DESC& o) {
                         if (t.has_view) o = t.view;
                       });
}

Errc cuSurfObjectCreate(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) noexcept {
  const char* api = "cuSurfObjectCreate";
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(need(pSurfObject, api, "pSurfObject"));  // NVIDIA's driver crashes here (SIGSEGV, H200)
  uint64_t h = 0;
  TRY(mem::create_surface(pResDesc, api, h));
  *pSurfObject = h;
  return Errc::success;
}

Errc cuSurfObjectDestroy(CUsurfObject surfObject) noexcept {
  TRY(Driver::get().require_init("cuSurfObjectDestroy"));
  mem::destroy_surface(surfObject);  // measured: success for any handle
  return Errc::success;
}

Errc cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) noexcept {
  const char* api = "cuSurfObjectGetResourceDesc";
  TRY(Driver::get().require_init(api));
  TRY(need(pResDesc, api, "pResDesc"));
  mem::SurfPtr s = mem::find_surface(surfObject);
  if (!s) return no_surface(api, surfObject);
  *pResDesc = s->res;
  return Errc::success;
}

}  // namespace cuda_shim::api
