// Driver entries: every cuMemcpy* and cuMemset* form. Synchronous forms run in order on
// the default stream (legacy, or per-thread for _ptds) and return when done; Async forms
// queue on their stream (_ptsz: a null stream means the per-thread default stream).
#include "abi/driver_api.hpp"
#include "core/capture.hpp"
#include "core/context.hpp"
#include "memory/array.hpp"
#include "memory/copy.hpp"

namespace cuda_shim::api {
namespace {

using mem::CopyOp;
using mem::Extent;
using mem::FillOp;
using mem::Space;
using mem::Submit;

constexpr Submit kSync{false, nullptr, false};
constexpr Submit kSyncPt{false, nullptr, true};
Submit async_on(CUstream s, bool pt) { return Submit{true, s, pt}; }
constexpr const char* kLaunch = "cuGraphLaunch";

// The capture sequence an async call's stream takes part in (null: none, the call queues), and
// the stream. Checked after the arguments, as the driver reports a bad argument first.
Errc sequence_of(const Submit& how, const char* api, std::shared_ptr<Stream>& st, std::shared_ptr<cap::Sequence>& seq) {
  if (!how.async || how.dry || cap::g_open.load(std::memory_order_acquire) == 0) [[likely]]
    return Errc::success;
  TRY(resolve_stream(how.stream, how.per_thread, api, st));
  return cap::intercept(*st, api, seq);
}

CUmemorytype memtype(Space s) {
  return s == Space::device ? CU_MEMORYTYPE_DEVICE : s == Space::host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
}

// One end of a 1D copy: a byte offset into an array (array set), or a pointer read as `space`.
struct End {
  bool array = false;
  CUarray arr = nullptr;
  uintptr_t p = 0;  // the pointer, or the array's byte offset
  Space space = Space::device;
  const char* what = "";
};
End arr_end(CUarray a, size_t off, const char* what) { return End{true, a, off, Space::device, what}; }
End ptr_end(uintptr_t p, Space s, const char* what) { return End{false, nullptr, p, s, what}; }

Errc resolve_end(const End& e, size_t n, const char* api, mem::Side& out) {
  if (!e.array) return mem::resolve(e.p, e.space, Extent{n, 1, 1, n, n}, api, e.what, out);
  // Measured: a NULL array is INVALID_VALUE here, not INVALID_HANDLE.
  if (!e.arr) return fail(Errc::invalid_value, "{}: {} is NULL", api, e.what);
  mem::ArrayPtr a;
  TRY(mem::array_arg(e.arr, api, e.what, a));
  char* p = nullptr;
  TRY(mem::linear_range(a, e.p, n, api, e.what, p));
  out = mem::Side{};
  out.p = p;
  out.r = a->memory;
  out.pitch = out.slice = n;
  return Errc::success;
}

void describe_end(const End& e, CUmemorytype& type, const void*& host, CUdeviceptr& dev, CUarray& arr, size_t& x) {
  if (e.array) {
    type = CU_MEMORYTYPE_ARRAY, arr = e.arr, x = e.p;
  } else {
    type = memtype(e.space);
    if (e.space == Space::host) host = reinterpret_cast<const void*>(e.p); else dev = e.p;
  }
}

// A 1D copy between two ends: pointers (cuMemcpy, HtoD and the rest) or arrays (cuMemcpyHtoA, AtoH,
// DtoA, AtoD, AtoA and the async forms: byte offsets, any alignment, measured).
Errc copy_ends(const End& dst, const End& src, size_t n, const Submit& how, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  if (n == 0) return Errc::success;  // measured: even at an offset past the array's end
  CopyOp op;
  op.width = n;
  TRY(resolve_end(src, n, api, op.src));
  TRY(resolve_end(dst, n, api, op.dst));
  if (!dst.array) TRY(mem::check_writable(op.dst, api, dst.what));
  std::shared_ptr<Stream> st;
  std::shared_ptr<cap::Sequence> seq;
  TRY(sequence_of(how, api, st, seq));
  if (seq) [[unlikely]] {
    cap::Spec sp;
    sp.kind = cap::Kind::memcpy;
    CUDA_MEMCPY3D& c = sp.copy;
    c = CUDA_MEMCPY3D{};
    const void* dhost = nullptr;
    describe_end(src, c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcXInBytes);
    describe_end(dst, c.dstMemoryType, dhost, c.dstDevice, c.dstArray, c.dstXInBytes);
    c.dstHost = const_cast<void*>(dhost);
    c.WidthInBytes = n, c.Height = 1, c.Depth = 1;
    sp.issue = [=](CUstream s) { return copy_ends(dst, src, n, async_on(s, false), kLaunch); };
    return seq->add(*st, std::move(sp), api);
  }
  return mem::submit_copy(std::move(op), how, api);
}

// 1D copy between two pointers, each read as `ds` / `ss`.
Errc copy_1d(uintptr_t dst, Space ds, const char* dwhat, uintptr_t src, Space ss, const char* swhat, size_t n,
             const Submit& how, const char* api) {
  return copy_ends(ptr_end(dst, ds, dwhat), ptr_end(src, ss, swhat), n, how, api);
}

uintptr_t u(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Measured: NULL contexts are accepted (the pointers say where the memory is); a garbage
// context crashes the real driver, so refusing it is the kinder answer.
Errc check_ctx(CUcontext c, const char* api, const char* what) {
  if (!c) return Errc::success;
  if (!contexts().find(c))
    return fail(Errc::invalid_context, "{}: {} = {} is not a live context", api, what, static_cast<void*>(c));
  return Errc::success;
}

Errc peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, const Submit& how,
          const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  TRY(check_ctx(dctx, api, "dstContext"));
  TRY(check_ctx(sctx, api, "srcContext"));
  return copy_1d(dst, Space::device, "dstDevice", src, Space::device, "srcDevice", n, how, api);
}

Errc copy3d(const CUDA_MEMCPY3D* c, const Submit& how, const char* api);

// A 2D/3D copy on a capturing stream: checked, then a memcpy node that repeats it.
Errc capture_3d(const mem::Copy3DArgs& a, const CUDA_MEMCPY3D& desc, const Submit& how, const char* api, bool& done) {
  std::shared_ptr<Stream> st;
  std::shared_ptr<cap::Sequence> seq;
  Submit dry = how;
  dry.dry = true;
  done = false;
  if (!how.async || cap::g_open.load(std::memory_order_acquire) == 0) [[likely]]
    return Errc::success;
  TRY(mem::copy_3d(a, dry, api));
  TRY(sequence_of(how, api, st, seq));
  if (!seq) return Errc::success;
  done = true;
  cap::Spec sp;
  sp.kind = cap::Kind::memcpy;
  sp.copy = desc;
  sp.issue = [desc](CUstream s) { return copy3d(&desc, async_on(s, false), kLaunch); };
  return seq->add(*st, std::move(sp), api);
}

CUDA_MEMCPY3D desc_of(const CUDA_MEMCPY2D& c) {
  CUDA_MEMCPY3D d{};
  d.srcXInBytes = c.srcXInBytes, d.srcY = c.srcY, d.srcMemoryType = c.srcMemoryType, d.srcHost = c.srcHost;
  d.srcDevice = c.srcDevice, d.srcArray = c.srcArray, d.srcPitch = c.srcPitch, d.srcHeight = c.Height;
  d.dstXInBytes = c.dstXInBytes, d.dstY = c.dstY, d.dstMemoryType = c.dstMemoryType, d.dstHost = c.dstHost;
  d.dstDevice = c.dstDevice, d.dstArray = c.dstArray, d.dstPitch = c.dstPitch, d.dstHeight = c.Height;
  d.WidthInBytes = c.WidthInBytes, d.Height = c.Height, d.Depth = 1;
  return d;
}

Errc copy2d(const CUDA_MEMCPY2D* c, const Submit& how, const char* api) {
  if (!c) {
    std::shared_ptr<Context> ctx;
    TRY(require_context(api, ctx));
    return fail(Errc::invalid_value, "{}: pCopy is NULL", api);
  }
  mem::Copy3DArgs a{c->srcXInBytes, c->srcY, 0, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray,
                    c->srcPitch, c->Height, c->dstXInBytes, c->dstY, 0, c->dstMemoryType, c->dstHost,
                    c->dstDevice, c->dstArray, c->dstPitch, c->Height, c->WidthInBytes, c->Height, 1};
  bool done = false;
  TRY(capture_3d(a, desc_of(*c), how, api, done));
  if (done) return Errc::success;
  return mem::copy_3d(a, how, api);
}

Errc copy3d(const CUDA_MEMCPY3D* c, const Submit& how, const char* api) {
  if (!c) {
    std::shared_ptr<Context> ctx;
    TRY(require_context(api, ctx));
    return fail(Errc::invalid_value, "{}: pCopy is NULL", api);
  }
  mem::Copy3DArgs a{c->srcXInBytes, c->srcY, c->srcZ, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray,
                    c->srcPitch, c->srcHeight, c->dstXInBytes, c->dstY, c->dstZ, c->dstMemoryType, c->dstHost,
                    c->dstDevice, c->dstArray, c->dstPitch, c->dstHeight, c->WidthInBytes, c->Height, c->Depth};
  bool done = false;
  TRY(capture_3d(a, *c, how, api, done));
  if (done) return Errc::success;
  return mem::copy_3d(a, how, api);
}

Errc copy3d_peer(const CUDA_MEMCPY3D_PEER* c, const Submit& how, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  if (!c) return fail(Errc::invalid_value, "{}: pCopy is NULL", api);
  // Contexts matter only for device-side operands.
  if (c->srcMemoryType == CU_MEMORYTYPE_DEVICE) TRY(check_ctx(c->srcContext, api, "srcContext"));
  if (c->dstMemoryType == CU_MEMORYTYPE_DEVICE) TRY(check_ctx(c->dstContext, api, "dstContext"));
  mem::Copy3DArgs a{c->srcXInBytes, c->srcY, c->srcZ, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray,
                    c->srcPitch, c->srcHeight, c->dstXInBytes, c->dstY, c->dstZ, c->dstMemoryType, c->dstHost,
                    c->dstDevice, c->dstArray, c->dstPitch, c->dstHeight, c->WidthInBytes, c->Height, c->Depth};
  return mem::copy_3d(a, how, api);
}

// cuMemsetD{8,16,32} and the 2D forms: `width` elements of `elem` bytes per row.
Errc fill(CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height,
          const Submit& how, const char* api) {
  std::shared_ptr<Context> ctx;
  TRY(require_context(api, ctx));
  if (dst % elem != 0)
    return fail(Errc::invalid_value, "{}: dstDevice = {:#x} is not {}-byte aligned, as {}-bit elements require",
                api, dst, elem, elem * 8);
  if (height > 1 && pitch % elem != 0)
    return fail(Errc::invalid_value, "{}: dstPitch {} is not a multiple of the element size {}", api, pitch, elem);
  if (width > SIZE_MAX / elem) return fail(Errc::invalid_value, "{}: Width {} overflows", api, width);
  if (height > 1 && pitch < width * elem)
    return fail(Errc::invalid_value, "{}: dstPitch {} is smaller than a row ({} elements of {} bytes)", api, pitch,
                width, elem);
  if (width == 0 || height == 0) return Errc::success;
  FillOp op;
  op.value = value;
  op.elem = elem;
  op.width = width;
  op.height = height;
  Extent e{width * elem, height, 1, pitch, pitch * height};
  TRY(mem::resolve(dst, Space::device, e, api, "dstDevice", op.dst));
  TRY(mem::check_writable(op.dst, api, "dstDevice"));
  std::shared_ptr<Stream> st;
  std::shared_ptr<cap::Sequence> seq;
  TRY(sequence_of(how, api, st, seq));
  if (seq) [[unlikely]] {
    Submit dry = how;
    dry.dry = true;
    TRY(mem::submit_fill(std::move(op), dry, api));
    cap::Spec sp;
    sp.kind = cap::Kind::memset;
    sp.fill = CUDA_MEMSET_NODE_PARAMS{dst, height > 1 ? pitch : 0, value, elem, width, height};
    sp.issue = [=](CUstream s) { return fill(dst, pitch, value, elem, width, height, async_on(s, false), kLaunch); };
    return seq->add(*st, std::move(sp), api);
  }
  return mem::submit_fill(std::move(op), how, api);
}


}  // namespace

// ---- 1D copies ---------------------------------------------------------------------------
Errc cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) noexcept {
  return copy_1d(dst, Space::unified, "dst", src, Space::unified, "src", n, kSync, "cuMemcpy");
}
Errc cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) noexcept {
  return copy_1d(dst, Space::unified, "dst", src, Space::unified, "src", n, kSyncPt, "cuMemcpy");
}
Errc cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) noexcept {
  return copy_1d(dst, Space::unified, "dst", src, Space::unified, "src", n, async_on(s, false), "cuMemcpyAsync");
}
Errc cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) noexcept {
  return copy_1d(dst, Space::unified, "dst", src, Space::unified, "src", n, async_on(s, true), "cuMemcpyAsync");
}

Errc cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", u(src), Space::host, "srcHost", n, kSync, "cuMemcpyHtoD");
}
Errc cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void* src, size_t n) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", u(src), Space::host, "srcHost", n, kSyncPt, "cuMemcpyHtoD");
}
Errc cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) noexcept {
  return copy_1d(u(dst), Space::host, "dstHost", src, Space::device, "srcDevice", n, kSync, "cuMemcpyDtoH");
}
Errc cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t n) noexcept {
  return copy_1d(u(dst), Space::host, "dstHost", src, Space::device, "srcDevice", n, kSyncPt, "cuMemcpyDtoH");
}
Errc cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", src, Space::device, "srcDevice", n, kSync, "cuMemcpyDtoD");
}
Errc cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", src, Space::device, "srcDevice", n, kSyncPt, "cuMemcpyDtoD");
}

Errc cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream s) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", u(src), Space::host, "srcHost", n, async_on(s, false),
                 "cuMemcpyHtoDAsync");
}
Errc cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void* src, size_t n, CUstream s) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", u(src), Space::host, "srcHost", n, async_on(s, true),
                 "cuMemcpyHtoDAsync");
}
Errc cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s) noexcept {
  return copy_1d(u(dst), Space::host, "dstHost", src, Space::device, "srcDevice", n, async_on(s, false),
                 "cuMemcpyDtoHAsync");
}
Errc cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t n, CUstream s) noexcept {
  return copy_1d(u(dst), Space::host, "dstHost", src, Space::device, "srcDevice", n, async_on(s, true),
                 "cuMemcpyDtoHAsync");
}
Errc cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", src, Space::device, "srcDevice", n, async_on(s, false),
                 "cuMemcpyDtoDAsync");
}
Errc cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) noexcept {
  return copy_1d(dst, Space::device, "dstDevice", src, Space::device, "srcDevice", n, async_on(s, true),
                 "cuMemcpyDtoDAsync");
}

Errc cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n) noexcept {
  return peer(dst, dc, src, sc, n, kSync, "cuMemcpyPeer");
}
Errc cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n) noexcept {
  return peer(dst, dc, src, sc, n, kSyncPt, "cuMemcpyPeer");
}
Errc cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s) noexcept {
  return peer(dst, dc, src, sc, n, async_on(s, false), "cuMemcpyPeerAsync");
}
Errc cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                            CUstream s) noexcept {
  return peer(dst, dc, src, sc, n, async_on(s, true), "cuMemcpyPeerAsync");
}

// ---- 2D / 3D copies ----------------------------------------------------------------------
Errc cuMemcpy2D_v2(const CUDA_MEMCPY2D* c) noexcept { return copy2d(c, kSync, "cuMemcpy2D"); }
Errc cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D* c) noexcept { return copy2d(c, kSyncPt, "cuMemcpy2D"); }
Errc cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* c) noexcept { return copy2d(c, kSync, "cuMemcpy2DUnaligned"); }
Errc cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D* c) noexcept {
  return copy2d(c, kSyncPt, "cuMemcpy2DUnaligned");
}
Errc cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* c, CUstream s) noexcept {
  return copy2d(c, async_on(s, false), "cuMemcpy2DAsync");
}
Errc cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D* c, CUstream s) noexcept {
  return copy2d(c, async_on(s, true), "cuMemcpy2DAsync");
}
Errc cuMemcpy3D_v2(const CUDA_MEMCPY3D* c) noexcept { return copy3d(c, kSync, "cuMemcpy3D"); }
Errc cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D* c) noexcept { return copy3d(c, kSyncPt, "cuMemcpy3D"); }
Errc cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* c, CUstream s) noexcept {
  return copy3d(c, async_on(s, false), "cuMemcpy3DAsync");
}
Errc cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D* c, CUstream s) noexcept {
  return copy3d(c, async_on(s, true), "cuMemcpy3DAsync");
}
Errc cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER* c) noexcept { return copy3d_peer(c, kSync, "cuMemcpy3DPeer"); }
Errc cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER* c) noexcept { return copy3d_peer(c, kSyncPt, "cuMemcpy3DPeer"); }
Errc cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER* c, CUstream s) noexcept {
  return copy3d_peer(c, async_on(s, false), "cuMemcpy3DPeerAsync");
}
Errc cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER* c, CUstream s) noexcept {
  return copy3d_peer(c, async_on(s, true), "cuMemcpy3DPeerAsync");
}

// ---- memset ------------------------------------------------------------------------------
#define MEMSET_1D(name, api, T, elem)                                                               \
  Errc name##_v2(CUdeviceptr d, T v, size_t n) noexcept { return fill(d, 0, v, elem, n, 1, kSync, api); }      \
  Errc name##_v2_ptds(CUdeviceptr d, T v, size_t n) noexcept { return fill(d, 0, v, elem, n, 1, kSyncPt, api); } \
  Errc name##Async(CUdeviceptr d, T v, size_t n, CUstream s) noexcept {                             \
    return fill(d, 0, v, elem, n, 1, async_on(s, false), api "Async");                              \
  }                                                                                                 \
  Errc name##Async_ptsz(CUdeviceptr d, T v, size_t n, CUstream s) noexcept {                        \
    return fill(d, 0, v, elem, n, 1, async_on(s, true), api "Async");                               \
  }
MEMSET_1D(cuMemsetD8, "cuMemsetD8", unsigned char, 1)
MEMSET_1D(cuMemsetD16, "cuMemsetD16", unsigned short, 2)
MEMSET_1D(cuMemsetD32, "cuMemsetD32", unsigned int, 4)
#undef MEMSET_1D

#define MEMSET_2D(name, api, T, elem)                                                               \
  Errc name##_v2(CUdeviceptr d, size_t p, T v, size_t w, size_t h) noexcept {                       \
    return fill(d, p, v, elem, w, h, kSync, api);                                                   \
  }                                                                                                 \
  Errc name##_v2_ptds(CUdeviceptr d, size_t p, T v, size_t w, size_t h) noexcept {                  \
    return fill(d, p, v, elem, w, h, kSyncPt, api);                                                 \
  }                                                                                                 \
  Errc name##Async(CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s) noexcept {         \
    return fill(d, p, v, elem, w, h, async_on(s, false), api "Async");                              \
  }                                                                                                 \
  Errc name##Async_ptsz(CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s) noexcept {    \
    return fill(d, p, v, elem, w, h, async_on(s, true), api "Async");                               \
  }
MEMSET_2D(cuMemsetD2D8, "cuMemsetD2D8", unsigned char, 1)
MEMSET_2D(cuMemsetD2D16, "cuMemsetD2D16", unsigned short, 2)
MEMSET_2D(cuMemsetD2D32, "cuMemsetD2D32", unsigned int, 4)
#undef MEMSET_2D

// ---- 1D copies to and from arrays --------------------------------------------------------------
#define CUDA_SHIM_ARRAY_1D(SUF, HOW)                                                                          \
  Errc cuMemcpyHtoA_v2##SUF(CUarray dst, size_t off, const void* src, size_t n) noexcept {                    \
    return copy_ends(arr_end(dst, off, "dstArray"), ptr_end(u(src), Space::host, "srcHost"), n, HOW,     \
                         "cuMemcpyHtoA");                                                                     \
  }                                                                                                           \
  Errc cuMemcpyAtoH_v2##SUF(void* dst, CUarray src, size_t off, size_t n) noexcept {                          \
    return copy_ends(ptr_end(u(dst), Space::host, "dstHost"), arr_end(src, off, "srcArray"), n, HOW,     \
                         "cuMemcpyAtoH");                                                                     \
  }                                                                                                           \
  Errc cuMemcpyDtoA_v2##SUF(CUarray dst, size_t off, CUdeviceptr src, size_t n) noexcept {                    \
    return copy_ends(arr_end(dst, off, "dstArray"), ptr_end(src, Space::device, "srcDevice"), n, HOW,    \
                         "cuMemcpyDtoA");                                                                     \
  }                                                                                                           \
  Errc cuMemcpyAtoD_v2##SUF(CUdeviceptr dst, CUarray src, size_t off, size_t n) noexcept {                    \
    return copy_ends(ptr_end(dst, Space::device, "dstDevice"), arr_end(src, off, "srcArray"), n, HOW,    \
                         "cuMemcpyAtoD");                                                                     \
  }                                                                                                           \
  Errc cuMemcpyAtoA_v2##SUF(CUarray dst, size_t doff, CUarray src, size_t soff, size_t n) noexcept {          \
    return copy_ends(arr_end(dst, doff, "dstArray"), arr_end(src, soff, "srcArray"), n, HOW,             \
                         "cuMemcpyAtoA");                                                                     \
  }
CUDA_SHIM_ARRAY_1D(, kSync)
CUDA_SHIM_ARRAY_1D(_ptds, kSyncPt)
#undef CUDA_SHIM_ARRAY_1D
Errc cuMemcpyHtoAAsync_v2(CUarray dst, size_t off, const void* src, size_t n, CUstream s) noexcept {
  return copy_ends(arr_end(dst, off, "dstArray"), ptr_end(u(src), Space::host, "srcHost"), n, async_on(s, false),
                       "cuMemcpyHtoAAsync");
}
Errc cuMemcpyHtoAAsync_v2_ptsz(CUarray dst, size_t off, const void* src, size_t n, CUstream s) noexcept {
  return copy_ends(arr_end(dst, off, "dstArray"), ptr_end(u(src), Space::host, "srcHost"), n, async_on(s, true),
                       "cuMemcpyHtoAAsync");
}
Errc cuMemcpyAtoHAsync_v2(void* dst, CUarray src, size_t off, size_t n, CUstream s) noexcept {
  return copy_ends(ptr_end(u(dst), Space::host, "dstHost"), arr_end(src, off, "srcArray"), n, async_on(s, false),
                       "cuMemcpyAtoHAsync");
}
Errc cuMemcpyAtoHAsync_v2_ptsz(void* dst, CUarray src, size_t off, size_t n, CUstream s) noexcept {
  return copy_ends(ptr_end(u(dst), Space::host, "dstHost"), arr_end(src, off, "srcArray"), n, async_on(s, true),
                       "cuMemcpyAtoHAsync");
}

}  // namespace cuda_shim::api

namespace cuda_shim::mem {

Errc copy_node(const CUDA_MEMCPY3D& c, cap::Spec& out, const char* api) {
  Submit dry{true, nullptr, false, true};
  TRY(api::copy3d(&c, dry, api));
  out.kind = cap::Kind::memcpy;
  out.copy = c;
  out.issue = [c](CUstream s) { return api::copy3d(&c, api::async_on(s, false), api::kLaunch); };
  return Errc::success;
}

Errc fill_node(const CUDA_MEMSET_NODE_PARAMS& p, cap::Spec& out, const char* api) {
  if (p.elementSize != 1 && p.elementSize != 2 && p.elementSize != 4)
    return fail(Errc::invalid_value, "{}: elementSize {} is not 1, 2 or 4", api, p.elementSize);
  if (p.height == 0 || p.width == 0)
    return fail(Errc::invalid_value, "{}: a memset node of {} x {} elements sets nothing", api, p.width, p.height);
  Submit dry{true, nullptr, false, true};
  TRY(api::fill(p.dst, p.pitch, p.value, p.elementSize, p.width, p.height, dry, api));
  out.kind = cap::Kind::memset;
  out.fill = p;
  out.issue = [p](CUstream s) {
    return api::fill(p.dst, p.pitch, p.value, p.elementSize, p.width, p.height, api::async_on(s, false), api::kLaunch);
  };
  return Errc::success;
}

}  // namespace cuda_shim::mem
