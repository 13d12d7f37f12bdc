// Runtime entries: CUDA arrays and mipmapped arrays (cudaMalloc*Array, cudaFreeArray,
// cudaArrayGetInfo) and the copies that name them. Channel formats become the driver's array
// formats; every array is the driver's (cudaArray_t is a CUarray), so copies are driver copies:
// the runtime's row-and-byte offsets become 2D copies, and cudaMemcpy3D's element units bytes.
#include "abi/driver_api.hpp"
#include "abi/runtime_api.hpp"
#include "memory/array.hpp"
#include "runtime/rt_array.hpp"
#include "runtime/rt_state.hpp"

namespace cuda_shim::rtapi {

namespace {

struct NormFormat {
  cudaChannelFormatKind kind;
  CUarray_format fmt;
  int bits;
  unsigned channels;
};
// The normalized kinds name their format and channel count themselves.
constexpr NormFormat kNormalized[] = {
    {cudaChannelFormatKindUnsignedNormalized8X1, CU_AD_FORMAT_UNORM_INT8X1, 8, 1},
    {cudaChannelFormatKindUnsignedNormalized8X2, CU_AD_FORMAT_UNORM_INT8X2, 8, 2},
    {cudaChannelFormatKindUnsignedNormalized8X4, CU_AD_FORMAT_UNORM_INT8X4, 8, 4},
    {cudaChannelFormatKindUnsignedNormalized16X1, CU_AD_FORMAT_UNORM_INT16X1, 16, 1},
    {cudaChannelFormatKindUnsignedNormalized16X2, CU_AD_FORMAT_UNORM_INT16X2, 16, 2},
    {cudaChannelFormatKindUnsignedNormalized16X4, CU_AD_FORMAT_UNORM_INT16X4, 16, 4},
    {cudaChannelFormatKindSignedNormalized8X1, CU_AD_FORMAT_SNORM_INT8X1, 8, 1},
    {cudaChannelFormatKindSignedNormalized8X2, CU_AD_FORMAT_SNORM_INT8X2, 8, 2},
    {cudaChannelFormatKindSignedNormalized8X4, CU_AD_FORMAT_SNORM_INT8X4, 8, 4},
    {cudaChannelFormatKindSignedNormalized16X1, CU_AD_FORMAT_SNORM_INT16X1, 16, 1},
    {cudaChannelFormatKindSignedNormalized16X2, CU_AD_FORMAT_SNORM_INT16X2, 16, 2},
    {cudaChannelFormatKindSignedNormalized16X4, CU_AD_FORMAT_SNORM_INT16X4, 16, 4},
};

CUarray cu(cudaArray_t a) { return reinterpret_cast<CUarray>(a); }
CUarray cu(cudaArray_const_t a) { return reinterpret_cast<CUarray>(const_cast<cudaArray_t>(a)); }
CUdeviceptr dp(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

using rt::check_kind;

// Measured: a NULL array is cudaErrorInvalidResourceHandle (the driver says INVALID_VALUE).
Errc check_array(const void* a, const char* api, const char* what) {
  if (a) return Errc::success;
  return fail(Errc::invalid_handle, "{}: {} is NULL", api, what);
}

// How the linear end of a copy is read for `kind` (to_array: the linear end is the source).
CUmemorytype linear_type(cudaMemcpyKind kind, bool to_array) {
  if (kind == cudaMemcpyDefault) return CU_MEMORYTYPE_UNIFIED;
  const bool host = to_array ? (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost)
                             : (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost);
  return host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
}

// One 2D copy between an array's box at (x bytes, y rows) and linear memory of `pitch`.
CUDA_MEMCPY2D array_2d(CUarray arr, size_t x, size_t y, bool to_array, const void* lin, size_t pitch,
                       CUmemorytype lt, size_t width, size_t height) {
  CUDA_MEMCPY2D m{};
  if (to_array) {
    m.srcMemoryType = lt, m.srcHost = lin, m.srcDevice = dp(lin), m.srcPitch = pitch;
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY, m.dstArray = arr, m.dstXInBytes = x, m.dstY = y;
  } else {
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY, m.srcArray = arr, m.srcXInBytes = x, m.srcY = y;
    m.dstMemoryType = lt, m.dstHost = const_cast<void*>(lin), m.dstDevice = dp(lin), m.dstPitch = pitch;
  }
  m.WidthInBytes = width;
  m.Height = height;
  return m;
}

Errc issue_2d(const CUDA_MEMCPY2D& m, bool async, cudaStream_t s, bool pt) {
  if (async) return pt ? api::cuMemcpy2DAsync_v2_ptsz(&m, s) : api::cuMemcpy2DAsync_v2(&m, s);
  return pt ? api::cuMemcpy2D_v2_ptds(&m) : api::cuMemcpy2D_v2(&m);
}

// cudaMemcpy2DToArray / FromArray: one driver 2D copy; the array side's offsets are wOffset
// bytes and hOffset rows. Measured: a pitch below the width is cudaErrorInvalidPitchValue.
Errc copy_2d_array(cudaArray_t arr, size_t w_off, size_t h_off, bool to_array, const void* lin, size_t pitch,
                   size_t width, size_t height, cudaMemcpyKind kind, bool async, cudaStream_t s, bool pt,
                   const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(rt::check_direction(kind, to_array, api, "an array"));  // measured: as a symbol's
  RT_TRY(check_array(arr, api, to_array ? "dst" : "src"));
  if (width != 0 && height != 0 && pitch < width)
    return fail(Errc::rt_invalid_pitch_value, "{}: the pitch {} is smaller than the width {}", api, pitch, width);
  return issue_2d(array_2d(cu(arr), w_off, h_off, to_array, lin, pitch, linear_type(kind, to_array), width, height),
                  async, s, pt);
}

// An array's row length in bytes and its row count (rows of every slice), for the runtime's
// linear copies (cudaMemcpyToArray and friends), which run on from row to row.
Errc array_rows(CUarray a, size_t& row_bytes, size_t& rows) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  RT_TRY(api::cuArray3DGetDescriptor_v2(&d, a));
  row_bytes = d.Width * mem::element_size(d.Format, d.NumChannels);
  rows = std::max<size_t>(1, d.Height) * std::max<size_t>(1, d.Depth);
  return Errc::success;
}

// cudaMemcpyToArray / FromArray: `count` bytes from (wOffset bytes, hOffset rows) on, running
// on into the next rows (measured: 600 bytes from byte 16 of row 1 of 256-byte rows succeed; a
// count past the last row fails). At most three driver copies: the first row's rest, whole
// rows, the last row's start.
Errc copy_linear_array(cudaArray_t arr, size_t w_off, size_t h_off, bool to_array, const void* lin, size_t count,
                       cudaMemcpyKind kind, bool async, cudaStream_t s, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(rt::check_direction(kind, to_array, api, "an array"));  // measured: as a symbol's
  if (count == 0) return Errc::success;
  RT_TRY(check_array(arr, api, to_array ? "dst" : "src"));
  size_t row = 0, rows = 0;
  RT_TRY(array_rows(cu(arr), row, rows));
  if (w_off > row || h_off >= rows || count > (rows - h_off) * row - w_off)
    return fail(Errc::invalid_value, "{}: {} bytes from byte {} of row {} run past the array's {} rows of {} bytes", api,
                count, w_off, h_off, rows, row);
  const CUmemorytype lt = linear_type(kind, to_array);
  const char* p = static_cast<const char*>(lin);
  size_t y = h_off;
  if (w_off != 0 || count < row) {  // the first row's rest
    const size_t n = std::min(count, row - w_off);
    RT_TRY(issue_2d(array_2d(cu(arr), w_off, y++, to_array, p, n, lt, n, 1), async, s, pt));
    p += n, count -= n;
  }
  if (const size_t full = count / row) {
    RT_TRY(issue_2d(array_2d(cu(arr), 0, y, to_array, p, row, lt, row, full), async, s, pt));
    p += full * row, count -= full * row, y += full;
  }
  if (count) RT_TRY(issue_2d(array_2d(cu(arr), 0, y, to_array, p, count, lt, count, 1), async, s, pt));
  return Errc::success;
}

// cudaMemcpyArrayToArray: `count` bytes, running on from row to row on both sides; one copy per
// stretch that stays inside a row of each.
Errc copy_array_to_array(cudaArray_t dst, size_t wd, size_t hd, cudaArray_const_t src, size_t ws, size_t hs,
                         size_t count, cudaMemcpyKind kind, bool pt, const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(check_kind(kind, api));
  if (count == 0) return Errc::success;
  RT_TRY(check_array(dst, api, "dst"));
  RT_TRY(check_array(src, api, "src"));
  size_t drow = 0, drows = 0, srow = 0, srows = 0;
  RT_TRY(array_rows(cu(dst), drow, drows));
  RT_TRY(array_rows(cu(src), srow, srows));
  if (wd > drow || hd >= drows || count > (drows - hd) * drow - wd || ws > srow || hs >= srows ||
      count > (srows - hs) * srow - ws)
    return fail(Errc::invalid_value, "{}: {} bytes run past the end of the source or destination array", api, count);
  while (count) {
    if (wd == drow) wd = 0, ++hd;
    if (ws == srow) ws = 0, ++hs;
    const size_t n = std::min({count, drow - wd, srow - ws});
    CUDA_MEMCPY2D m{};
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY, m.srcArray = cu(src), m.srcXInBytes = ws, m.srcY = hs;
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY, m.dstArray = cu(dst), m.dstXInBytes = wd, m.dstY = hd;
    m.WidthInBytes = n, m.Height = 1;
    RT_TRY(issue_2d(m, false, nullptr, pt));
    wd += n, ws += n, count -= n;
  }
  return Errc::success;
}

// The channel format, or cudaErrorInvalidChannelDescriptor (measured: *array is set to NULL first).
Errc channel_format(const cudaChannelFormatDesc& c, const char* api, CUarray_format& fmt, unsigned& ch) {
  if (to_driver_format(c, fmt, ch)) return Errc::success;
  return fail(Errc::rt_invalid_channel_descriptor, "{}: the channel format ({}, {}, {}, {} bits, kind {}) is not one an "
              "array holds: 1, 2 or 4 equal channels of 8/16/32-bit integers or 16/32-bit floats, or a normalized kind "
              "with its own bit counts", api, c.x, c.y, c.z, c.w, static_cast<int>(c.f));
}

}  // namespace

bool to_driver_format(const cudaChannelFormatDesc& f, CUarray_format& fmt, unsigned& channels) {
  const int bits[4] = {f.x, f.y, f.z, f.w};
  channels = 0;
  while (channels < 4 && bits[channels] != 0) ++channels;
  for (unsigned i = channels; i < 4; ++i)
    if (bits[i] != 0) return false;  // a gap between channels
  if (f.f == cudaChannelFormatKindNV12) {  // the driver's NV12 format, which it judges (measured: refused)
    fmt = CU_AD_FORMAT_NV12;
    return true;
  }
  if (f.f == cudaChannelFormatKindUnsignedNormalized1010102) {
    fmt = CU_AD_FORMAT_UNORM_INT_101010_2;
    return f.x == 10 && f.y == 10 && f.z == 10 && f.w == 2;
  }
  if (channels == 0 || channels == 3) return false;
  for (unsigned i = 1; i < channels; ++i)
    if (bits[i] != bits[0]) return false;
  for (const NormFormat& n : kNormalized)
    if (n.kind == f.f) return (fmt = n.fmt, n.bits == bits[0] && n.channels == channels);
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
    case CU_AD_FORMAT_UNORM_INT_101010_2:
      return cudaChannelFormatDesc{10, 10, 10, 2, cudaChannelFormatKindUnsignedNormalized1010102};
    default:
      for (const NormFormat& n : kNormalized)
        if (n.fmt == fmt) b = n.bits, k = n.kind;
      break;
  }
  cudaChannelFormatDesc d{};
  d.x = b;
  d.y = channels > 1 ? b : 0;
  d.z = channels > 2 ? b : 0;
  d.w = channels > 3 ? b : 0;
  d.f = k;
  return d;
}

// ---- allocation -----------------------------------------------------------------------------
namespace {
// What the three allocations share: the output cleared (measured: even when the format is
// refused) and the channel format as the driver's, into d (which holds the extent and flags).
template <class H>
Errc begin_alloc(H* out, const char* what, const cudaChannelFormatDesc* desc, CUDA_ARRAY3D_DESCRIPTOR& d,
                 const char* api) {
  RT_TRY(rt::context(api));
  RT_TRY(rt::need(out, api, what));
  RT_TRY(rt::need(desc, api, "desc"));
  *out = nullptr;
  return channel_format(*desc, api, d.Format, d.NumChannels);
}
}  // namespace

Errc cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height,
                     unsigned int flags) noexcept {
  const char* api = "cudaMallocArray";
  CUDA_ARRAY3D_DESCRIPTOR d{width, height, 0, CU_AD_FORMAT_MAX, 0, flags};
  RT_TRY(begin_alloc(array, "array", desc, d, api));
  // Measured: layered and cubemap arrays need cudaMalloc3DArray.
  if (flags & (cudaArrayLayered | cudaArrayCubemap))
    return fail(Errc::invalid_value, "{}: flags {:#x}: layered and cubemap arrays are made by cudaMalloc3DArray", api,
                flags);
  return api::cuArray3DCreate_v2(reinterpret_cast<CUarray*>(array), &d);
}

Errc cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                       unsigned int flags) noexcept {
  CUDA_ARRAY3D_DESCRIPTOR d{extent.width, extent.height, extent.depth, CU_AD_FORMAT_MAX, 0, flags};
  RT_TRY(begin_alloc(array, "array", desc, d, "cudaMalloc3DArray"));
  return api::cuArray3DCreate_v2(reinterpret_cast<CUarray*>(array), &d);
}

Errc cudaMallocMipmappedArray(cudaMipmappedArray_t* mipmap, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned int numLevels, unsigned int flags) noexcept {
  CUDA_ARRAY3D_DESCRIPTOR d{extent.width, extent.height, extent.depth, CU_AD_FORMAT_MAX, 0, flags};
  RT_TRY(begin_alloc(mipmap, "mipmappedArray", desc, d, "cudaMallocMipmappedArray"));
  return api::cuMipmappedArrayCreate(reinterpret_cast<CUmipmappedArray*>(mipmap), &d, numLevels);
}

Errc cudaFreeArray(cudaArray_t array) noexcept {
  RT_TRY(rt::context("cudaFreeArray"));
  if (!array) return Errc::success;  // measured
  return api::cuArrayDestroy(cu(array));
}

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
Errc cudaArrayGetMemoryRequirements(cudaArrayMemoryRequirements* req, cudaArray_t array, int device) noexcept {
  RT_TRY(rt::context("cudaArrayGetMemoryRequirements"));
  static_assert(sizeof(cudaArrayMemoryRequirements) == sizeof(CUDA_ARRAY_MEMORY_REQUIREMENTS));
  return api::cuArrayGetMemoryRequirements(reinterpret_cast<CUDA_ARRAY_MEMORY_REQUIREMENTS*>(req), cu(array), device);
}

// ---- copies ---------------------------------------------------------------------------------
// Each form once on the legacy default stream and once on the per-thread one (_ptds / _ptsz).
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
  }                                                                                                                   \
  Errc cudaMemcpyToArray##SYNC(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,       \
                               cudaMemcpyKind kind) noexcept {                                                       \
    return copy_linear_array(dst, wOffset, hOffset, true, src, count, kind, false, nullptr, PT, "cudaMemcpyToArray"); \
  }                                                                                                                   \
  Errc cudaMemcpyFromArray##SYNC(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,     \
                                 cudaMemcpyKind kind) noexcept {                                                     \
    return copy_linear_array(const_cast<cudaArray_t>(src), wOffset, hOffset, false, dst, count, kind, false,          \
                             nullptr, PT, "cudaMemcpyFromArray");                                                    \
  }                                                                                                                   \
  Errc cudaMemcpyToArrayAsync##ASYNC(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count, \
                                     cudaMemcpyKind kind, cudaStream_t stream) noexcept {                            \
    return copy_linear_array(dst, wOffset, hOffset, true, src, count, kind, true, stream, PT,                         \
                             "cudaMemcpyToArrayAsync");                                                              \
  }                                                                                                                   \
  Errc cudaMemcpyFromArrayAsync##ASYNC(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,             \
                                       size_t count, cudaMemcpyKind kind, cudaStream_t stream) noexcept {            \
    return copy_linear_array(const_cast<cudaArray_t>(src), wOffset, hOffset, false, dst, count, kind, true, stream,   \
                             PT, "cudaMemcpyFromArrayAsync");                                                        \
  }                                                                                                                   \
  Errc cudaMemcpyArrayToArray##SYNC(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,    \
                                    size_t wOffsetSrc, size_t hOffsetSrc, size_t count, cudaMemcpyKind kind)          \
      noexcept {                                                                                                     \
    return copy_array_to_array(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count, kind, PT,             \
                               "cudaMemcpyArrayToArray");                                                            \
  }                                                                                                                   \
  Errc cudaMemcpy2DArrayToArray##SYNC(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,  \
                                      size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,              \
                                      cudaMemcpyKind kind) noexcept {                                                \
    RT_TRY(rt::context("cudaMemcpy2DArrayToArray"));                                                                 \
    RT_TRY(check_kind(kind, "cudaMemcpy2DArrayToArray"));                                                           \
    RT_TRY(check_array(dst, "cudaMemcpy2DArrayToArray", "dst"));                                                    \
    RT_TRY(check_array(src, "cudaMemcpy2DArrayToArray", "src"));                                                    \
    CUDA_MEMCPY2D m{};                                                                                              \
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY, m.srcArray = cu(src), m.srcXInBytes = wOffsetSrc, m.srcY = hOffsetSrc;    \
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY, m.dstArray = cu(dst), m.dstXInBytes = wOffsetDst, m.dstY = hOffsetDst;    \
    m.WidthInBytes = width, m.Height = height;                                                                      \
    return issue_2d(m, false, nullptr, PT);                                                                         \
  }
CUDA_SHIM_ARRAY_COPIES(, , false)
CUDA_SHIM_ARRAY_COPIES(_ptds, _ptsz, true)
#undef CUDA_SHIM_ARRAY_COPIES

}  // namespace cuda_shim::rtapi
