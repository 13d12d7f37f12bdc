#include "memory/texture.hpp"

#include <atomic>
#include <shared_mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "core/device_support.hpp"

namespace cuda_shim::mem {
namespace {

// Handles are never given twice (a stale one finds nothing), and never 0.
template <class T>
struct Table {
  std::shared_mutex m;
  std::unordered_map<uint64_t, std::shared_ptr<const T>> map;
  std::atomic<uint64_t> next{1};
  uint64_t add(std::shared_ptr<const T> o) {
    const uint64_t h = next.fetch_add(1, std::memory_order_relaxed);
    std::unique_lock lk(m);
    map.emplace(h, std::move(o));
    return h;
  }
  std::shared_ptr<const T> find(uint64_t h) {
    std::shared_lock lk(m);
    auto it = map.find(h);
    return it == map.end() ? nullptr : it->second;
  }
  bool remove(uint64_t h) {
    std::unique_lock lk(m);
    return map.erase(h) != 0;
  }
};
Table<TexObject>& textures() {
  static auto* t = new Table<TexObject>();  // leaked: kernels on worker threads outlive exit
  return *t;
}
Table<SurfObject>& surfaces() {
  static auto* t = new Table<SurfObject>();
  return *t;
}

constexpr unsigned kTexFlags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB |
                               CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP;

Errc bad(const char* api, const std::string& why) { return fail(Errc::invalid_value, "{}: {}", api, why); }

// A resource's arrays, format and texel size: the checks every texture and surface shares.
Errc resolve_array(const CUDA_RESOURCE_DESC& r, const char* api, TexObject& t) {
  if (r.resType == CU_RESOURCE_TYPE_ARRAY) {
    t.array = arrays().find(r.res.array.hArray);
    if (!t.array)
      return bad(api, fmt::format("pResDesc->res.array.hArray = {} is not a live CUDA array",
                                  static_cast<void*>(r.res.array.hArray)));
    t.format = t.array->desc.Format, t.channels = t.array->desc.NumChannels, t.elem = t.array->elem;
    return Errc::success;
  }
  t.mip = mipmapped_arrays().find(r.res.mipmap.hMipmappedArray);
  if (!t.mip)
    return bad(api, fmt::format("pResDesc->res.mipmap.hMipmappedArray = {} is not a live mipmapped array",
                                static_cast<void*>(r.res.mipmap.hMipmappedArray)));
  t.array = t.mip->level[0];
  t.format = t.mip->desc.Format, t.channels = t.mip->desc.NumChannels, t.elem = t.array->elem;
  return Errc::success;
}

// Device memory as a texture (linear or pitched 2D). Measured: the address must be 512-byte
// aligned (the device's texture alignment, for pitched memory too); the pitch a multiple of the
// pitch alignment (32); width and height within the 2D linear limits; neither the size nor
// the memory behind the address is checked when the object is made.
Errc resolve_memory(const CUDA_RESOURCE_DESC& r, int o, const char* api, TexObject& t) {
  const bool lin = r.resType == CU_RESOURCE_TYPE_LINEAR;
  const CUdeviceptr p = lin ? r.res.linear.devPtr : r.res.pitch2D.devPtr;
  t.format = lin ? r.res.linear.format : r.res.pitch2D.format;
  t.channels = lin ? r.res.linear.numChannels : r.res.pitch2D.numChannels;
  t.elem = element_size(t.format, t.channels);
  if (t.elem == 0)
    return bad(api, fmt::format("format {:#x} with {} channels is not a texture format", static_cast<unsigned>(t.format),
                                t.channels));
  const uint64_t align = static_cast<uint64_t>(device_attribute(o, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
  if (p == 0 || (align && p % align != 0))
    return bad(api, fmt::format("devPtr {:#x} is not {}-byte aligned (the device's texture alignment)", p, align));
  if (lin) return Errc::success;
  const uint64_t pitch_align = static_cast<uint64_t>(device_attribute(o, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT));
  const auto& q = r.res.pitch2D;
  if (pitch_align && q.pitchInBytes % pitch_align != 0)
    return bad(api, fmt::format("pitchInBytes {} is not a multiple of {} (the texture pitch alignment)", q.pitchInBytes,
                                pitch_align));
  const size_t mw = static_cast<size_t>(device_attribute(o, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH));
  const size_t mh = static_cast<size_t>(device_attribute(o, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT));
  if (q.width > mw || q.height > mh)
    return bad(api, fmt::format("a {}x{} pitched texture is beyond this device's {}x{}", q.width, q.height, mw, mh));
  return Errc::success;
}

Errc check_sampling(const CUDA_TEXTURE_DESC& d, const char* api) {
  for (int k = 0; k < 3; ++k)
    if (d.addressMode[k] > CU_TR_ADDRESS_MODE_BORDER)
      return bad(api, fmt::format("pTexDesc->addressMode[{}] = {} is not a CUaddress_mode", k,
                                  static_cast<int>(d.addressMode[k])));
  if (d.filterMode > CU_TR_FILTER_MODE_LINEAR || d.mipmapFilterMode > CU_TR_FILTER_MODE_LINEAR)
    return bad(api, fmt::format("pTexDesc->filterMode {} / mipmapFilterMode {} is not a CUfilter_mode",
                                static_cast<int>(d.filterMode), static_cast<int>(d.mipmapFilterMode)));
  if (d.flags & ~kTexFlags)
    return bad(api, fmt::format("pTexDesc->flags {:#x} holds bits outside the CU_TRSF_* set", d.flags));
  return Errc::success;
}

// Measured: CU_TRSF_SEAMLESS_CUBEMAP is refused on anything but a cubemap array.
Errc check_seamless(const CUDA_TEXTURE_DESC& d, const TexObject& t, const char* api) {
  if (!(d.flags & CU_TRSF_SEAMLESS_CUBEMAP)) return Errc::success;
  if (t.array && (t.array->desc.Flags & CUDA_ARRAY3D_CUBEMAP)) return Errc::success;
  return bad(api, "CU_TRSF_SEAMLESS_CUBEMAP is for cubemap textures");
}

// Bytes per texel of a resource view format (0: none, or a block-compressed one).
size_t view_bytes(CUresourceViewFormat f) {
  const unsigned v = static_cast<unsigned>(f);
  if (v >= 0x01 && v <= 0x12) {  // UINT/SINT: 1, 2 or 4 channels of 8, 16 or 32 bits
    const unsigned group = (v - 1) / 3, ch = 1u << ((v - 1) % 3);
    return ch * (group < 2 ? 1 : group < 4 ? 2 : 4);
  }
  if (v >= 0x13 && v <= 0x18) return (1u << ((v - 0x13) % 3)) * (v < 0x16 ? 2 : 4);  // FLOAT 16/32
  return 0;
}

// Measured: a view over an array must describe it (an 8-wide view of a 64-wide array is
// refused, and so is a format of another texel size, or none); over device memory it is
// accepted and not kept.
Errc check_view(const CUDA_RESOURCE_VIEW_DESC& v, const TexObject& t, const char* api) {
  if (!t.array) return Errc::success;
  if (view_bytes(v.format) != t.elem)
    return bad(api, fmt::format("the resource view's format {:#x} does not have the array's {}-byte texels",
                                static_cast<unsigned>(v.format), t.elem));
  if (v.width != t.array->desc.Width || v.height != t.array->desc.Height || v.depth != t.array->desc.Depth)
    return bad(api, fmt::format("the resource view is {}x{}x{}, the array {}x{}x{}", v.width, v.height, v.depth,
                                t.array->desc.Width, t.array->desc.Height, t.array->desc.Depth));
  return Errc::success;
}

}  // namespace

Errc create_texture(const CUDA_RESOURCE_DESC* res, const CUDA_TEXTURE_DESC* tex, const CUDA_RESOURCE_VIEW_DESC* view,
                    int ordinal, const char* api, uint64_t& out) {
  if (!res) return bad(api, "pResDesc is NULL");
  if (!tex) return bad(api, "pTexDesc is NULL");
  auto t = std::make_shared<TexObject>();
  t->res = *res;
  t->tex = *tex;
  switch (res->resType) {
    case CU_RESOURCE_TYPE_ARRAY:
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: TRY(resolve_array(*res, api, *t)); break;
    case CU_RESOURCE_TYPE_LINEAR:
    case CU_RESOURCE_TYPE_PITCH2D: TRY(resolve_memory(*res, ordinal, api, *t)); break;
    default:
      return bad(api, fmt::format("pResDesc->resType {} is not a CUresourcetype", static_cast<int>(res->resType)));
  }
  TRY(check_sampling(*tex, api));
  TRY(check_seamless(*tex, *t, api));
  if (view) {
    TRY(check_view(*view, *t, api));
    t->view = *view;
    t->has_view = t->array != nullptr;
  }
  out = textures().add(std::move(t));
  return Errc::success;
}

Errc create_surface(const CUDA_RESOURCE_DESC* res, const char* api, uint64_t& out) {
  if (!res) return bad(api, "pResDesc is NULL");
  if (res->resType != CU_RESOURCE_TYPE_ARRAY)
    return bad(api, fmt::format("pResDesc->resType {}: a surface's resource is an array (CU_RESOURCE_TYPE_ARRAY)",
                                static_cast<int>(res->resType)));
  auto s = std::make_shared<SurfObject>();
  s->res = *res;
  s->array = arrays().find(res->res.array.hArray);
  if (!s->array)
    return bad(api, fmt::format("pResDesc->res.array.hArray = {} is not a live CUDA array",
                                static_cast<void*>(res->res.array.hArray)));
  out = surfaces().add(std::move(s));
  return Errc::success;
}

bool destroy_texture(uint64_t h) noexcept { return textures().remove(h); }
bool destroy_surface(uint64_t h) noexcept { return surfaces().remove(h); }
TexPtr find_texture(uint64_t h) noexcept { return textures().find(h); }
SurfPtr find_surface(uint64_t h) noexcept { return surfaces().find(h); }
size_t texture_count() noexcept {
  std::shared_lock lk(textures().m);
  return textures().map.size();
}

}  // namespace cuda_shim::mem
