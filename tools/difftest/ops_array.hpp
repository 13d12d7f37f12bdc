// difftest ops of the array family (CUDA arrays made by cuArrayCreate, cuArray3DCreate,
// cuMipmappedArrayCreate and the runtime's cudaMalloc*Array), for the probe cases in
// tests/probe/cases/array.cases (docs/probe.md). Every op is named a_* (driver) or ra_*
// (runtime, through e.api.rtsym with prototypes of our own). Reads record a checksum of the
// bytes a copy brought back, so that where a copy puts bytes (offsets into 2D arrays, pitches)
// is compared, not only its code. Array handles live in slots like any other handle.
#pragma once

namespace difftest {

namespace arr_ops {
struct RtChannel { int x, y, z, w, f; };           // cudaChannelFormatDesc
struct RtExtent { size_t w, h, d; };                // cudaExtent
struct RtPos { size_t x, y, z; };                   // cudaPos
struct RtPitched { void* ptr; size_t pitch, xsize, ysize; };  // cudaPitchedPtr
struct RtCopy3D {                                   // cudaMemcpy3DParms
  void* srcArray; RtPos srcPos; RtPitched srcPtr;
  void* dstArray; RtPos dstPos; RtPitched dstPtr;
  RtExtent extent; int kind;
};
}  // namespace arr_ops

inline bool ops_array(Exec& e, Rec& r) {
  using namespace arr_ops;
  const std::string& op = e.t[0];
  if (op.rfind("a_", 0) != 0 && op.rfind("ra_", 0) != 0 && op.rfind("t_", 0) != 0 && op.rfind("s_", 0) != 0)
    return false;
  auto U = [](const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); };
  auto O = [&](auto* p) { return e.a(1) == "null" ? nullptr : p; };
  auto arr = [&](size_t k) { return e.h<CUarray>(k); };
  auto last_is = [&](const char* w) { return e.t.size() > 1 && e.t.back() == w; };
  auto rtf = [&](const char* n) -> void* {
    void* s = e.api.rtsym(n);
    if (!s) r.ks("rt", "missing");
    return s;
  };
  auto chan = [&](size_t k) {  // KIND X Y Z W
    return RtChannel{static_cast<int>(e.num(k + 1)), static_cast<int>(e.num(k + 2)), static_cast<int>(e.num(k + 3)),
                     static_cast<int>(e.num(k + 4)), static_cast<int>(e.num(k))};
  };

  // ---- driver: creation ----------------------------------------------------------------------
  if (op == "a_create") {  // a_create A W H FMT CH [nulldesc]
    CUDA_ARRAY_DESCRIPTOR d{};
    d.Width = e.num(2); d.Height = e.num(3);
    d.Format = static_cast<CUarray_format>(e.num(4)); d.NumChannels = static_cast<unsigned>(e.num(5));
    CUarray a = Exec::sent<CUarray>();
    DT_CALL(e, r, cuArrayCreate, O(&a), last_is("nulldesc") ? nullptr : &d);
    e.out(r, e.rc, "out", U(a), 0, false, 1);
  } else if (op == "a_create3") {  // a_create3 A W H D FMT CH FLAGS [nulldesc]
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Width = e.num(2); d.Height = e.num(3); d.Depth = e.num(4);
    d.Format = static_cast<CUarray_format>(e.num(5)); d.NumChannels = static_cast<unsigned>(e.num(6));
    d.Flags = static_cast<unsigned>(e.num(7));
    CUarray a = Exec::sent<CUarray>();
    DT_CALL(e, r, cuArray3DCreate, O(&a), last_is("nulldesc") ? nullptr : &d);
    e.out(r, e.rc, "out", U(a), 0, false, 1);

  // ---- driver: 1D copies (byte offsets) ------------------------------------------------------
  } else if (op == "a_htoa") {  // a_htoa A OFF N SEED [STREAM]: async when a stream is named
    size_t n = e.num(3);
    e.keep.emplace_back(n);
    fill(e.keep.back().data(), n, e.num(4));
    if (e.t.size() > 5) DT_CALL(e, r, cuMemcpyHtoAAsync, arr(1), e.num(2), e.keep.back().data(), n, e.h<CUstream>(5));
    else DT_CALL(e, r, cuMemcpyHtoA, arr(1), e.num(2), e.keep.back().data(), n);
  } else if (op == "a_atoh") {  // a_atoh A OFF N [STREAM]
    size_t n = e.num(3);
    std::vector<unsigned char> b(n, 0xcd);
    if (e.t.size() > 4) {
      DT_CALL(e, r, cuMemcpyAtoHAsync, b.data(), arr(1), e.num(2), n, e.h<CUstream>(4));
      if (e.rc == 0) r.kv("sync", e.api.cuStreamSynchronize(e.h<CUstream>(4)));
    } else {
      DT_CALL(e, r, cuMemcpyAtoH, b.data(), arr(1), e.num(2), n);
    }
    if (e.rc == 0) e.checksum(r, b.data(), n);
  } else if (op == "a_dtoa") {  // a_dtoa A OFF P POFF N
    DT_CALL(e, r, cuMemcpyDtoA, arr(1), e.num(2), e.ptr(3), e.num(5));
  } else if (op == "a_atod") {  // a_atod P POFF A OFF N
    DT_CALL(e, r, cuMemcpyAtoD, e.ptr(1), arr(3), e.num(4), e.num(5));
  } else if (op == "a_atoa") {  // a_atoa D DOFF S SOFF N
    DT_CALL(e, r, cuMemcpyAtoA, arr(1), e.num(2), arr(3), e.num(4), e.num(5));

  // ---- driver: 2D/3D copies of a region ------------------------------------------------------
  } else if (op == "a_put" || op == "a_get") {  // a_put A X Y Z WB H D SEED | a_get A X Y Z WB H D
    size_t wb = e.num(5), h = e.num(6), d = e.num(7);
    std::vector<unsigned char> b(wb * std::max<size_t>(h, 1) * std::max<size_t>(d, 1), 0xcd);
    if (op == "a_put") fill(b.data(), b.size(), e.num(8));
    CUDA_MEMCPY3D c{};
    c.WidthInBytes = wb; c.Height = h; c.Depth = d;
    if (op == "a_put") {
      c.srcMemoryType = CU_MEMORYTYPE_HOST; c.srcHost = b.data(); c.srcPitch = wb; c.srcHeight = h;
      c.dstMemoryType = CU_MEMORYTYPE_ARRAY; c.dstArray = arr(1);
      c.dstXInBytes = e.num(2); c.dstY = e.num(3); c.dstZ = e.num(4);
    } else {
      c.srcMemoryType = CU_MEMORYTYPE_ARRAY; c.srcArray = arr(1);
      c.srcXInBytes = e.num(2); c.srcY = e.num(3); c.srcZ = e.num(4);
      c.dstMemoryType = CU_MEMORYTYPE_HOST; c.dstHost = b.data(); c.dstPitch = wb; c.dstHeight = h;
    }
    DT_CALL(e, r, cuMemcpy3D, &c);
    if (e.rc == 0 && op == "a_get") e.checksum(r, b.data(), b.size());
  } else if (op == "a_a2a") {  // a_a2a D DX DY S SX SY WB H: cuMemcpy2D between arrays
    CUDA_MEMCPY2D c{};
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY; c.dstArray = arr(1); c.dstXInBytes = e.num(2); c.dstY = e.num(3);
    c.srcMemoryType = CU_MEMORYTYPE_ARRAY; c.srcArray = arr(4); c.srcXInBytes = e.num(5); c.srcY = e.num(6);
    c.WidthInBytes = e.num(7); c.Height = e.num(8);
    DT_CALL(e, r, cuMemcpy2D, &c);
  } else if (op == "a_p2a" || op == "a_a2p") {  // a_p2a A X Y P POFF PITCH WB H: device memory to/from an array
    CUDA_MEMCPY2D c{};
    CUmemorytype* at = op == "a_p2a" ? &c.dstMemoryType : &c.srcMemoryType;
    CUmemorytype* dt = op == "a_p2a" ? &c.srcMemoryType : &c.dstMemoryType;
    *at = CU_MEMORYTYPE_ARRAY; *dt = CU_MEMORYTYPE_DEVICE;
    if (op == "a_p2a") {
      c.dstArray = arr(1); c.dstXInBytes = e.num(2); c.dstY = e.num(3);
      c.srcDevice = e.ptr(4); c.srcPitch = e.num(6);
    } else {
      c.srcArray = arr(1); c.srcXInBytes = e.num(2); c.srcY = e.num(3);
      c.dstDevice = e.ptr(4); c.dstPitch = e.num(6);
    }
    c.WidthInBytes = e.num(7); c.Height = e.num(8);
    DT_CALL(e, r, cuMemcpy2D, &c);

  // ---- runtime -------------------------------------------------------------------------------
  } else if (op == "ra_malloc") {  // ra_malloc A KIND X Y Z W WIDTH HEIGHT FLAGS [nulldesc]
    auto f = reinterpret_cast<int (*)(void**, const RtChannel*, size_t, size_t, unsigned)>(rtf("cudaMallocArray"));
    if (!f) return true;
    RtChannel c = chan(2);
    void* a = Exec::sent<void*>();
    e.RC(r, f(O(&a), last_is("nulldesc") ? nullptr : &c, e.num(7), e.num(8), static_cast<unsigned>(e.num(9))));
    e.out(r, e.rc, "out", U(a), 0, false, 1);
  } else if (op == "ra_malloc3d") {  // ra_malloc3d A KIND X Y Z W WIDTH HEIGHT DEPTH FLAGS [nulldesc]
    auto f = reinterpret_cast<int (*)(void**, const RtChannel*, RtExtent, unsigned)>(rtf("cudaMalloc3DArray"));
    if (!f) return true;
    RtChannel c = chan(2);
    void* a = Exec::sent<void*>();
    e.RC(r, f(O(&a), last_is("nulldesc") ? nullptr : &c, RtExtent{e.num(7), e.num(8), e.num(9)},
              static_cast<unsigned>(e.num(10))));
    e.out(r, e.rc, "out", U(a), 0, false, 1);
  } else if (op == "ra_mip") {  // ra_mip M KIND X Y Z W WIDTH HEIGHT DEPTH LEVELS FLAGS
    auto f = reinterpret_cast<int (*)(void**, const RtChannel*, RtExtent, unsigned, unsigned)>(
        rtf("cudaMallocMipmappedArray"));
    if (!f) return true;
    RtChannel c = chan(2);
    void* m = Exec::sent<void*>();
    e.RC(r, f(O(&m), &c, RtExtent{e.num(7), e.num(8), e.num(9)}, static_cast<unsigned>(e.num(10)),
              static_cast<unsigned>(e.num(11))));
    e.out(r, e.rc, "out", U(m), 0, false, 1);
  } else if (op == "ra_info") {  // ra_info A [nullall]: cudaArrayGetInfo
    auto f = reinterpret_cast<int (*)(RtChannel*, RtExtent*, unsigned*, void*)>(rtf("cudaArrayGetInfo"));
    if (!f) return true;
    RtChannel c; RtExtent x; unsigned fl;
    memset(&c, 0xab, sizeof c); memset(&x, 0xab, sizeof x); memset(&fl, 0xab, sizeof fl);
    const bool none = last_is("nullall");
    e.RC(r, f(none ? nullptr : &c, none ? nullptr : &x, none ? nullptr : &fl, e.h<void*>(1)));
    if (e.rc == 0 && !none) {
      r.kv("x", c.x); r.kv("y", c.y); r.kv("z", c.z); r.kv("w", c.w); r.kv("f", c.f);
      r.kv("W", static_cast<long long>(x.w)); r.kv("H", static_cast<long long>(x.h));
      r.kv("D", static_cast<long long>(x.d)); r.kv("flags", fl);
    }
  } else if (op == "ra_free") {  // ra_free A
    if (auto f = reinterpret_cast<int (*)(void*)>(rtf("cudaFreeArray"))) e.RC(r, f(e.h<void*>(1)));
  } else if (op == "ra_to2d") {  // ra_to2d A X Y SPITCH WB H SEED KIND
    auto f = reinterpret_cast<int (*)(void*, size_t, size_t, const void*, size_t, size_t, size_t, int)>(
        rtf("cudaMemcpy2DToArray"));
    if (!f) return true;
    size_t sp = e.num(4), h = e.num(6);
    std::vector<unsigned char> b(std::max<size_t>(sp, e.num(5)) * std::max<size_t>(h, 1));
    fill(b.data(), b.size(), e.num(7));
    e.RC(r, f(e.h<void*>(1), e.num(2), e.num(3), b.data(), sp, e.num(5), h, static_cast<int>(e.num(8))));
  } else if (op == "ra_from2d") {  // ra_from2d A X Y DPITCH WB H KIND
    auto f = reinterpret_cast<int (*)(void*, size_t, const void*, size_t, size_t, size_t, size_t, int)>(
        rtf("cudaMemcpy2DFromArray"));
    if (!f) return true;
    size_t dp = e.num(4), h = e.num(6);
    std::vector<unsigned char> b(std::max<size_t>(dp, e.num(5)) * std::max<size_t>(h, 1), 0xcd);
    e.RC(r, f(b.data(), dp, e.h<void*>(1), e.num(2), e.num(3), e.num(5), h, static_cast<int>(e.num(7))));
    if (e.rc == 0) e.checksum(r, b.data(), b.size());
  } else if (op == "ra_to" || op == "ra_from") {  // ra_to A X Y N SEED KIND | ra_from A X Y N KIND
    const bool to = op == "ra_to";
    size_t n = e.num(4);
    std::vector<unsigned char> b(n, 0xcd);
    if (to) fill(b.data(), n, e.num(5));
    const int kind = static_cast<int>(e.num(to ? 6 : 5));
    if (to) {
      auto f = reinterpret_cast<int (*)(void*, size_t, size_t, const void*, size_t, int)>(rtf("cudaMemcpyToArray"));
      if (f) e.RC(r, f(e.h<void*>(1), e.num(2), e.num(3), b.data(), n, kind));
    } else {
      auto f = reinterpret_cast<int (*)(void*, const void*, size_t, size_t, size_t, int)>(rtf("cudaMemcpyFromArray"));
      if (f) e.RC(r, f(b.data(), e.h<void*>(1), e.num(2), e.num(3), n, kind));
      if (f && e.rc == 0) e.checksum(r, b.data(), n);
    }
  } else if (op == "ra_a2a") {  // ra_a2a D DX DY S SX SY WB H: cudaMemcpy2DArrayToArray
    auto f = reinterpret_cast<int (*)(void*, size_t, size_t, const void*, size_t, size_t, size_t, size_t, int)>(
        rtf("cudaMemcpy2DArrayToArray"));
    if (f) e.RC(r, f(e.h<void*>(1), e.num(2), e.num(3), e.h<void*>(4), e.num(5), e.num(6), e.num(7), e.num(8), 3));
  } else if (op == "ra_3d") {  // ra_3d put|get A X Y Z W H D SEED: cudaMemcpy3D with host memory (W in elements of ELEM bytes)
    auto f = reinterpret_cast<int (*)(const RtCopy3D*)>(rtf("cudaMemcpy3D"));
    if (!f) return true;
    const bool put = e.a(1) == "put";
    const size_t elem = e.num(9), w = e.num(6), h = e.num(7), d = e.num(8);
    std::vector<unsigned char> b(w * elem * std::max<size_t>(h, 1) * std::max<size_t>(d, 1), 0xcd);
    if (put) fill(b.data(), b.size(), e.num(10));
    RtCopy3D c{};
    RtPitched hp{b.data(), w * elem, w * elem, std::max<size_t>(h, 1)};
    RtPos pos{e.num(3), e.num(4), e.num(5)};
    if (put) c.dstArray = e.h<void*>(2), c.dstPos = pos, c.srcPtr = hp;
    else c.srcArray = e.h<void*>(2), c.srcPos = pos, c.dstPtr = hp;
    c.extent = RtExtent{w, h, d};
    c.kind = 4;  // cudaMemcpyDefault
    e.RC(r, f(&c));
    if (e.rc == 0 && !put) e.checksum(r, b.data(), b.size());
  } else if (op == "ra_memreq") {  // ra_memreq A
    struct { size_t size, alignment; unsigned reserved[4]; } mr{};
    auto f = reinterpret_cast<int (*)(void*, void*, int)>(rtf("cudaArrayGetMemoryRequirements"));
    if (f) e.RC(r, f(&mr, e.h<void*>(1), 0));

  // ---- texture and surface objects (driver) -------------------------------------------------
  // t_create T RESTYPE R OFF FMT CH SIZE|W H PITCH ADDR FILTER FLAGS [nulltex|nullres|view]
  //   RESTYPE 0 array (R an array slot), 1 mipmap (R a mipmapped array), 2 linear (R+OFF, FMT, CH,
  //   SIZE bytes), 3 pitch2D (R+OFF, FMT, CH, W, H, PITCH).
  } else if (op == "t_create") {
    CUDA_RESOURCE_DESC rd{};
    rd.resType = static_cast<CUresourcetype>(e.num(2));
    switch (rd.resType) {
      case CU_RESOURCE_TYPE_ARRAY: rd.res.array.hArray = arr(3); break;
      case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: rd.res.mipmap.hMipmappedArray = e.h<CUmipmappedArray>(3); break;
      case CU_RESOURCE_TYPE_LINEAR:
        rd.res.linear.devPtr = e.ptr(3); rd.res.linear.format = static_cast<CUarray_format>(e.num(5));
        rd.res.linear.numChannels = static_cast<unsigned>(e.num(6)); rd.res.linear.sizeInBytes = e.num(7);
        break;
      default:
        rd.res.pitch2D.devPtr = e.ptr(3); rd.res.pitch2D.format = static_cast<CUarray_format>(e.num(5));
        rd.res.pitch2D.numChannels = static_cast<unsigned>(e.num(6)); rd.res.pitch2D.width = e.num(7);
        rd.res.pitch2D.height = e.num(8); rd.res.pitch2D.pitchInBytes = e.num(9);
        break;
    }
    CUDA_TEXTURE_DESC td{};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = static_cast<CUaddress_mode>(e.num(10));
    td.filterMode = static_cast<CUfilter_mode>(e.num(11));
    td.flags = static_cast<unsigned>(e.num(12));
    CUDA_RESOURCE_VIEW_DESC vd{};
    const std::string& mod = e.a(13);
    if (mod == "view") { vd.format = CU_RES_VIEW_FORMAT_FLOAT_1X32; vd.width = 8; }
    CUtexObject t = kSentinel;
    DT_CALL(e, r, cuTexObjectCreate, O(&t), mod == "nullres" ? nullptr : &rd, mod == "nulltex" ? nullptr : &td,
            mod == "view" ? &vd : nullptr);
    if (e.rc == 0) r.ks("zero", t == 0 ? "yes" : "no");
    e.out(r, e.rc, "out", t, 0, false, 1);
  } else if (op == "t_create_view") {  // t_create_view T A VIEWFORMAT W H D: an array texture with a view
    CUDA_RESOURCE_DESC rd{};
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = arr(2);
    CUDA_TEXTURE_DESC td{};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
    CUDA_RESOURCE_VIEW_DESC vd{};
    vd.format = static_cast<CUresourceViewFormat>(e.num(3));
    vd.width = e.num(4); vd.height = e.num(5); vd.depth = e.num(6);
    CUtexObject t = kSentinel;
    DT_CALL(e, r, cuTexObjectCreate, O(&t), &rd, &td, &vd);
    e.out(r, e.rc, "out", t, 0, false, 1);
  } else if (op == "t_destroy") {
    DT_CALL(e, r, cuTexObjectDestroy, static_cast<CUtexObject>(e.val(1)));
  } else if (op == "t_get") {  // t_get T: the resource and texture descriptors read back
    CUDA_RESOURCE_DESC rd; memset(&rd, 0xab, sizeof rd);
    DT_CALL(e, r, cuTexObjectGetResourceDesc, &rd, static_cast<CUtexObject>(e.val(1)));
    if (e.rc == 0) { r.kv("res", rd.resType); r.kv("rflags", rd.flags); }
    CUDA_TEXTURE_DESC td; memset(&td, 0xab, sizeof td);
    auto g = DT_FN(e, cuTexObjectGetTextureDesc);
    int rc2 = g ? g(&td, static_cast<CUtexObject>(e.val(1))) : -1;
    r.kv("rc_tex", rc2);
    if (rc2 == 0) { r.kv("addr", td.addressMode[0]); r.kv("filter", td.filterMode); r.kv("tflags", td.flags); }
    CUDA_RESOURCE_VIEW_DESC vd; memset(&vd, 0xab, sizeof vd);
    auto v = DT_FN(e, cuTexObjectGetResourceViewDesc);
    int rc3 = v ? v(&vd, static_cast<CUtexObject>(e.val(1))) : -1;
    r.kv("rc_view", rc3);
    if (rc3 == 0) { r.kv("vfmt", vd.format); r.kv("vw", static_cast<long long>(vd.width)); }
  } else if (op == "s_create") {  // s_create S RESTYPE R [nullres]
    CUDA_RESOURCE_DESC rd{};
    rd.resType = static_cast<CUresourcetype>(e.num(2));
    rd.res.array.hArray = arr(3);
    CUsurfObject s = kSentinel;
    DT_CALL(e, r, cuSurfObjectCreate, O(&s), last_is("nullres") ? nullptr : &rd);
    e.out(r, e.rc, "out", s, 0, false, 1);
  } else if (op == "s_destroy") {
    DT_CALL(e, r, cuSurfObjectDestroy, static_cast<CUsurfObject>(e.val(1)));
  } else if (op == "s_get") {
    CUDA_RESOURCE_DESC rd; memset(&rd, 0xab, sizeof rd);
    DT_CALL(e, r, cuSurfObjectGetResourceDesc, &rd, static_cast<CUsurfObject>(e.val(1)));
    if (e.rc == 0) { r.kv("res", rd.resType); r.ks("same", rd.res.array.hArray == arr(2) ? "yes" : "no"); }
  } else {
    return false;
  }
  return true;
}

}  // namespace difftest
