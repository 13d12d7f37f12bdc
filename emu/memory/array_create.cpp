// CUDA arrays with memory of their own (cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate):
// the descriptor rules an H200 applied (tests/probe/cases/array.cases), the device's limits from
// its profile, and device memory charged as cuMemAlloc charges it (an H200's free memory fell by
// exactly the array's bytes).
#include <fmt/format.h>

#include <algorithm>

#include "core/context.hpp"
#include "core/device_support.hpp"
#include "core/driver.hpp"
#include "core/fresh_alloc.hpp"
#include "memory/array.hpp"
#include "memory/device_alloc.hpp"

namespace cuda_shim::mem {
namespace {

constexpr unsigned kKnownFlags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP |
                                 CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_DEPTH_TEXTURE |
                                 CUDA_ARRAY3D_COLOR_ATTACHMENT | CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING |
                                 0x100u /* CUDA_ARRAY3D_VIDEO_ENCODE_DECODE */ | 0x80000000u /* accepted, measured */;

int attr(int ordinal, CUdevice_attribute a) { return device_attribute(ordinal, a); }

// The limit a descriptor's shape has on this device, as the attributes name them: its kind
// ("2D layered") and the largest width, height and depth (layers for layered arrays).
struct Limit {
  const char* kind;
  size_t w, h, d;
};

Limit limit_for(const CUDA_ARRAY3D_DESCRIPTOR& d, int o) {
  const bool surf = d.Flags & CUDA_ARRAY3D_SURFACE_LDST;
  auto A = [&](CUdevice_attribute tex, CUdevice_attribute srf) { return size_t(attr(o, surf ? srf : tex)); };
  if (d.Flags & CUDA_ARRAY3D_CUBEMAP) {
    if (d.Flags & CUDA_ARRAY3D_LAYERED)
      return {"cubemap layered", A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH,
                                   CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH), 0,
              6 * A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS,
                    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS)};
    return {"cubemap", A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH),
            0, 6};
  }
  if (d.Flags & CUDA_ARRAY3D_LAYERED) {
    if (d.Height == 0)
      return {"1D layered", A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH,
                              CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH), 0,
              A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS)};
    return {"2D layered", A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH),
            A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT),
            A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS)};
  }
  if (d.Height == 0)
    return {"1D", A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH), 0, 0};
  if (d.Depth == 0) {
    if (d.Flags & CUDA_ARRAY3D_TEXTURE_GATHER)
      return {"2D gather", size_t(attr(o, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH)),
              size_t(attr(o, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT)), 0};
    return {"2D", A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH),
            A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT), 0};
  }
  return {"3D", A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH),
          A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT),
          A(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH)};
}

// Measured: a 3D texture array may instead use the alternate limits (8192 x 8192 x 32768 on an
// H200: 1 x 1 x 16385 is accepted, 1 x 16385 x 1 is not).
bool fits_alternate_3d(const CUDA_ARRAY3D_DESCRIPTOR& d, int o) {
  if (d.Flags & (CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP) || d.Depth == 0 || d.Height == 0)
    return false;
  return d.Width <= size_t(attr(o, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE)) &&
         d.Height <= size_t(attr(o, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE)) &&
         d.Depth <= size_t(attr(o, CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE));
}

Errc check_shape(const CUDA_ARRAY3D_DESCRIPTOR& d, const char* api, const char* what) {
  const char* shape = "{}: {} is {}x{}x{} with Flags {:#x}: ";
  auto bad = [&](const char* rule) {
    return fail(Errc::invalid_value, fmt::runtime(std::string(shape) + rule), api, what, d.Width, d.Height, d.Depth,
                d.Flags);
  };
  if (d.Flags & ~kKnownFlags) return bad("a flag outside the CUDA_ARRAY3D_* set");
  // Measured on an H200: every depth-texture and colour-attachment array is refused.
  if (d.Flags & (CUDA_ARRAY3D_DEPTH_TEXTURE | CUDA_ARRAY3D_COLOR_ATTACHMENT))
    return bad("CUDA_ARRAY3D_DEPTH_TEXTURE and CUDA_ARRAY3D_COLOR_ATTACHMENT arrays are refused on this device");
  if (d.Width == 0) return bad("Width must be non-zero");
  const bool layered = d.Flags & CUDA_ARRAY3D_LAYERED, cube = d.Flags & CUDA_ARRAY3D_CUBEMAP;
  if (cube) {
    if (d.Width != d.Height) return bad("a cubemap's faces are square (Width == Height)");
    if (layered ? (d.Depth == 0 || d.Depth % 6 != 0) : d.Depth != 6)
      return bad(layered ? "a layered cubemap's Depth is a non-zero multiple of 6" : "a cubemap's Depth is 6");
  } else if (layered) {
    if (d.Depth == 0) return bad("a layered array's Depth (its layer count) must be non-zero");
  } else if (d.Height == 0 && d.Depth != 0) {
    return bad("a 3D array needs a Height");
  }
  if ((d.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) && (d.Height == 0 || d.Depth != 0 || layered || cube))
    return bad("CUDA_ARRAY3D_TEXTURE_GATHER is for 2D arrays only");
  return Errc::success;
}

// Device memory for an array: charged to the device as cuMemAlloc charges (512-byte units), never
// entered in the address space (no pointer names an array's bytes).
Errc give_memory(const std::shared_ptr<Context>& ctx, size_t bytes, const char* api, RangePtr& out, size_t& acc) {
  TRY(device_range(ctx, bytes, api, out));
  acc = out->accounted;
  return Errc::success;
}

// Bytes of one array of this shape in the emulator's row-major layout.
bool layout(const CUDA_ARRAY3D_DESCRIPTOR& d, size_t elem, Array& a) {
  a.elem = elem;
  a.pitch = d.Width * elem;
  a.rows = std::max<size_t>(1, d.Height);
  a.slices = std::max<size_t>(1, d.Depth);
  if (d.Width > SIZE_MAX / elem / a.rows / a.slices / 2) return false;
  a.bytes = a.pitch * a.rows * a.slices;
  return true;
}

}  // namespace

Errc check_array_desc(const CUDA_ARRAY3D_DESCRIPTOR& d, int ordinal, const char* api, const char* what, size_t& elem) {
  elem = element_size(d.Format, d.NumChannels);
  // Measured on an H200: every NV12 descriptor tried (1 and 3 channels, 64x64) was refused.
  if (d.Format == CU_AD_FORMAT_NV12)
    return fail(Errc::invalid_value, "{}: {}.Format is CU_AD_FORMAT_NV12: planar video arrays are refused here (an H200 "
                "refused every NV12 descriptor tried)", api, what);
  if (elem == 0) {
    if (is_opaque_format(d.Format))
      return fail(Errc::not_supported, "{}: {}.Format {:#x} is a block-compressed or video format: cuda-shim does not "
                  "emulate arrays of it (NVIDIA's driver makes them)", api, what, static_cast<unsigned>(d.Format));
    return fail(Errc::invalid_value, "{}: {}.Format {:#x} with NumChannels {} is not an array format (8/16/32-bit "
                "integers, HALF or FLOAT with 1, 2 or 4 channels, or a UNORM/SNORM format with its own count)", api,
                what, static_cast<unsigned>(d.Format), d.NumChannels);
  }
  TRY(check_shape(d, api, what));
  const Limit l = limit_for(d, ordinal);
  const size_t h = (d.Flags & CUDA_ARRAY3D_CUBEMAP) ? 0 : d.Height;
  if ((d.Width > l.w || h > l.h || d.Depth > l.d) && !fits_alternate_3d(d, ordinal))
    return fail(Errc::invalid_value, "{}: {} is {}x{}x{}, beyond this device's {} {} limit of {}x{}x{}", api, what,
                d.Width, d.Height, d.Depth, l.kind, (d.Flags & CUDA_ARRAY3D_SURFACE_LDST) ? "surface" : "texture", l.w,
                l.h, l.d);
  return Errc::success;
}

Errc create_array(const std::shared_ptr<Context>& ctx, const CUDA_ARRAY3D_DESCRIPTOR& d, const char* api,
                  const char* what, ArrayPtr& out) {
  const int o = ctx->ordinal();
  size_t elem = 0;
  TRY(check_array_desc(d, o, api, what, elem));
  auto a = make_fresh<Array>();
  a->desc = d;
  if (!layout(d, elem, *a))
    return fail(Errc::invalid_value, "{}: {} describes more memory than can exist", api, what);
  TRY(give_memory(ctx, a->bytes, api, a->memory, a->charged));
  a->host = a->memory->host;
  a->own = true;
  a->ordinal = o;
  out = std::move(a);
  return Errc::success;
}

Errc create_mipmap(const std::shared_ptr<Context>& ctx, const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels,
                   const char* api, const char* what, MipmappedArrayPtr& out) {
  size_t elem = 0;
  TRY(check_array_desc(d, ctx->ordinal(), api, what, elem));
  // Measured on an H200: 0 levels and more levels than the extent has are accepted; the
  // mipmapped array then has the levels its extent allows (at least one).
  levels = std::clamp(levels, 1u, max_levels(d));
  std::vector<size_t> offsets;
  size_t total = 0;
  TRY(plan_mipmap(d, levels, api, what, offsets, total));
  RangePtr mem;
  size_t charged = 0;
  TRY(give_memory(ctx, total, api, mem, charged));
  out = make_mipmap(d, levels, offsets, mem, 0);
  out->charged = charged;
  out->ordinal = ctx->ordinal();
  return Errc::success;
}

}  // namespace cuda_shim::mem
