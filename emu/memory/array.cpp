#include "memory/array.hpp"
#include "core/fresh_alloc.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cuda_shim::mem {

Registry<Array>& arrays() {
  static auto* r = new Registry<Array>();  // leaked: outlives worker threads
  return *r;
}
Registry<MipmappedArray>& mipmapped_arrays() {
  static auto* r = new Registry<MipmappedArray>();
  return *r;
}

size_t element_size(CUarray_format f, unsigned ch) noexcept {
  size_t b = 0;
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: b = 1; break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: b = 2; break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT: b = 4; break;
    // Formats whose channel count is part of the format.
    case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return ch == 1 ? 1 : 0;
    case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2: return ch == 2 ? 2 : 0;
    case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4: return ch == 4 ? 4 : 0;
    case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: return ch == 1 ? 2 : 0;
    case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2: return ch == 2 ? 4 : 0;
    case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return ch == 4 ? 8 : 0;
    case CU_AD_FORMAT_UNORM_INT_101010_2: return ch == 4 ? 4 : 0;
    default: return 0;
  }
  return ch == 1 || ch == 2 || ch == 4 ? b * ch : 0;
}

const char* format_name(CUarray_format f) noexcept {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: return "CU_AD_FORMAT_UNSIGNED_INT8";
    case CU_AD_FORMAT_UNSIGNED_INT16: return "CU_AD_FORMAT_UNSIGNED_INT16";
    case CU_AD_FORMAT_UNSIGNED_INT32: return "CU_AD_FORMAT_UNSIGNED_INT32";
    case CU_AD_FORMAT_SIGNED_INT8: return "CU_AD_FORMAT_SIGNED_INT8";
    case CU_AD_FORMAT_SIGNED_INT16: return "CU_AD_FORMAT_SIGNED_INT16";
    case CU_AD_FORMAT_SIGNED_INT32: return "CU_AD_FORMAT_SIGNED_INT32";
    case CU_AD_FORMAT_HALF: return "CU_AD_FORMAT_HALF";
    case CU_AD_FORMAT_FLOAT: return "CU_AD_FORMAT_FLOAT";
    default: return "a format cuda-shim does not lay out";
  }
}

Array::~Array() {
  if (charged) uncharge(ordinal, charged);
}
MipmappedArray::~MipmappedArray() {
  if (charged) uncharge(ordinal, charged);
}

bool is_opaque_format(CUarray_format f) noexcept {
  const unsigned v = static_cast<unsigned>(f);
  const bool bc = v >= 0x91 && v <= 0x9e, video = (v >= 0x9f && v <= 0xa9 && v != 0xa0) || (v >= 0xb0 && v <= 0xb5);
  return bc || video;
}

unsigned max_levels(const CUDA_ARRAY3D_DESCRIPTOR& d) noexcept {
  const bool layered = d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
  size_t biggest = std::max({d.Width, d.Height, layered ? size_t(0) : d.Depth});
  unsigned most = 1;
  while ((biggest >>= 1) != 0) ++most;
  return most;
}

Errc linear_range(const ArrayPtr& a, size_t offset, size_t bytes, const char* api, const char* what, char*& out) {
  // Measured on an H200: byte-offset copies reach the array's first row only (Width elements),
  // whatever its dimensions: 1D, layered 1D, the first row of a mipmap level; a 2D array's
  // second row is out of range.
  const size_t row = a->pitch;
  if (offset > row || bytes > row - offset)
    return fail(Errc::invalid_value, "{}: bytes [{}, {}) lie outside {}'s reach: byte-offset copies address the first "
                "row of an array ({} elements, {} bytes); use cuMemcpy2D/cuMemcpy3D for the rest", api, offset,
                offset + bytes, what, a->desc.Width, row);
  out = a->host + offset;
  return Errc::success;
}

std::string MipmappedArray::describe() const {
  try {
    return fmt::format("the {}x{}x{} {}x{} mipmapped array of {} level{}", desc.Width, desc.Height, desc.Depth,
                       format_name(desc.Format), desc.NumChannels, levels, levels == 1 ? "" : "s");
  } catch (...) {
    return "a mipmapped array";
  }
}

namespace {

constexpr size_t kLevelAlign = 512;
size_t shrink(size_t v, unsigned l) { return v == 0 ? 0 : std::max<size_t>(1, v >> l); }

// The level's descriptor: every extent halves, except a layered array's layer count.
CUDA_ARRAY3D_DESCRIPTOR level_desc(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned l) {
  CUDA_ARRAY3D_DESCRIPTOR x = d;
  x.Width = shrink(d.Width, l);
  x.Height = shrink(d.Height, l);
  if (!(d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP))) x.Depth = shrink(d.Depth, l);
  return x;
}

}  // namespace

Errc plan_mipmap(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels, const char* api, const char* what,
                 std::vector<size_t>& offsets, size_t& total) {
  const size_t elem = element_size(d.Format, d.NumChannels);
  if (elem == 0)
    return fail(Errc::invalid_value, "{}: {}.Format {:#x} with NumChannels {} is not an array format cuda-shim lays out "
                "(8/16/32-bit integers, HALF or FLOAT with 1, 2 or 4 channels, or the UNORM/SNORM formats)", api, what,
                static_cast<unsigned>(d.Format), d.NumChannels);
  // Measured: Flags are not checked (0x80000000 is accepted and read back).
  if (d.Width == 0 || (d.Height == 0 && d.Depth != 0))
    return fail(Errc::invalid_value, "{}: {} is {}x{}x{}: Width must be non-zero, and a 3D array needs a Height", api,
                what, d.Width, d.Height, d.Depth);
  if ((d.Flags & CUDA_ARRAY3D_CUBEMAP) && (d.Width != d.Height || d.Depth % 6 != 0 || d.Depth == 0))
    return fail(Errc::invalid_value, "{}: {} is a cubemap: Width must equal Height and Depth must be 6 (or a multiple "
                "of 6 when layered)", api, what);
  const unsigned most = max_levels(d);
  // Measured: more levels than the extent has is INVALID_VALUE; 0 levels corrupts the real
  // driver's heap (SIGABRT), answered here with the documented INVALID_VALUE.
  if (levels == 0 || levels > most)
    return fail(Errc::invalid_value, "{}: numLevels {} is outside [1, {}]: a {}x{}x{} array has {} mipmap level{} down "
                "to 1x1", api, levels, most, d.Width, d.Height, d.Depth, most, most == 1 ? "" : "s");
  offsets.clear();
  total = 0;
  for (unsigned l = 0; l < levels; ++l) {
    CUDA_ARRAY3D_DESCRIPTOR x = level_desc(d, l);
    const size_t rows = std::max<size_t>(1, x.Height), slices = std::max<size_t>(1, x.Depth);
    if (x.Width > SIZE_MAX / elem / rows / slices / 2)
      return fail(Errc::invalid_value, "{}: {} describes more memory than can exist", api, what);
    total = (total + kLevelAlign - 1) / kLevelAlign * kLevelAlign;
    offsets.push_back(total);
    total += x.Width * elem * rows * slices;
  }
  return Errc::success;
}

MipmappedArrayPtr make_mipmap(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels, const std::vector<size_t>& offsets,
                              RangePtr memory, size_t offset) {
  auto m = make_fresh<MipmappedArray>();
  m->desc = d;
  m->levels = levels;
  for (unsigned l = 0; l < levels; ++l) {
    auto a = make_fresh<Array>();
    a->desc = level_desc(d, l);
    a->elem = element_size(d.Format, d.NumChannels);
    a->pitch = a->desc.Width * a->elem;
    a->rows = std::max<size_t>(1, a->desc.Height);
    a->slices = std::max<size_t>(1, a->desc.Depth);
    a->bytes = a->pitch * a->rows * a->slices;
    a->host = memory->host + offset + offsets[l];
    a->memory = memory;
    a->parent = m;
    a->level = l;
    m->level.push_back(a);
  }
  return m;
}

Errc array_arg(CUarray h, const char* api, const char* what, ArrayPtr& out) {
  out = arrays().find(h);
  if (!out)
    return fail(Errc::invalid_handle, "{}: {} = {} is not a live CUDA array (never created, or destroyed)", api, what,
                static_cast<void*>(h));
  return Errc::success;
}

}  // namespace cuda_shim::mem
