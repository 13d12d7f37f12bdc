// difftest ops of the batch memory calls (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync,
// cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync and the
// runtime's forms), for tests/probe/cases/batch.cases (docs/probe.md). Every op is named b_*.
// A batch is written in one token, its entries separated by commas:
//   copies    D/OFF=S/OFF/SIZE,...          (a slot name, 0, bad, or stk: the op's own buffer)
//   attrs     ORDER[/FLAGS[/SLOC[/DLOC]]]@IDX,...   (locations as Exec::loc tokens: d0, h, x, rN ...)
//   3D ops    SRC>DST>W.H.D[>ORDER[>FLAGS]], an operand p.NAME.OFF.ROWLEN.LAYERH (pointer),
//             a.NAME.X.Y.Z (array), or tN.NAME... (a pointer operand with raw type N)
//   ranges    NAME/OFF/SIZE,...   locs   LOC@IDX,...
// "-" is an empty list. Options after the lists: null<what> passes NULL for that array,
// count=N / nattrs=N / nlocs=N / flags=N override a length or the flags, snap fills the stk
// buffer with seed 7 before the call and seed 9 after it (a source read during the call keeps
// seed 7's bytes). The v1 forms (CUDA 12.8's, with failIdx) record fi: the index written, max
// for SIZE_MAX, S when left alone.
#pragma once

#include <cstdint>
#include <vector>

namespace difftest {

namespace batch_ops {
inline std::vector<std::string> split(const std::string& s, char c) {
  std::vector<std::string> v;
  if (s == "-" || s.empty()) return v;
  size_t b = 0;
  for (;;) {
    size_t e = s.find(c, b);
    v.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return v;
    b = e + 1;
  }
}
using CopyV1 = CUresult (*)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t, CUmemcpyAttributes*, size_t*, size_t, size_t*,
                            CUstream);
using CopyV2 = CUresult (*)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t, CUmemcpyAttributes*, size_t*, size_t, CUstream);
using Copy3V1 = CUresult (*)(size_t, CUDA_MEMCPY3D_BATCH_OP*, size_t*, unsigned long long, CUstream);
using Copy3V2 = CUresult (*)(size_t, CUDA_MEMCPY3D_BATCH_OP*, unsigned long long, CUstream);
using Prefetch = CUresult (*)(CUdeviceptr*, size_t*, size_t, CUmemLocation*, size_t*, size_t, unsigned long long,
                              CUstream);
using Discard = CUresult (*)(CUdeviceptr*, size_t*, size_t, unsigned long long, CUstream);
}  // namespace batch_ops

inline bool ops_batch(Exec& e, Rec& r) {
  namespace bo = batch_ops;
  const std::string& op = e.t[0];
  if (op.rfind("b_", 0) != 0 && op.rfind("sm_", 0) != 0) return false;
  static std::vector<unsigned char> stk(4096);
  std::map<std::string, std::string> opt;  // options after the lists
  auto read_opts = [&](size_t from) {
    for (size_t k = from; k < e.t.size(); ++k) {
      size_t q = e.t[k].find('=');
      opt[e.t[k].substr(0, q)] = q == std::string::npos ? "" : e.t[k].substr(q + 1);
    }
  };
  auto has = [&](const char* k) { return opt.count(k) != 0; };
  auto num_or = [&](const char* k, uint64_t d) { return has(k) ? strtoull(opt[k].c_str(), nullptr, 0) : d; };
  auto addr = [&](const std::string& name, uint64_t off) -> uint64_t {
    if (name == "stk") return reinterpret_cast<uintptr_t>(stk.data()) + off;
    auto it = e.slots.find(name);
    if (it != e.slots.end()) return it->second.v + off;
    if (name == "bad") return 0x7ead0000beefull + off;
    return strtoull(name.c_str(), nullptr, 0) + off;
  };
  auto sym = [&](const char* n) {
    void* f = e.api.sym(n);
    if (!f) f = e.api.rtsym(n);
    if (!f) r.ks("missing", n);
    return f;
  };
  auto record_fail = [&](size_t fi) {
    r.ks("fi", fi == SIZE_MAX ? "max" : fi == 0x5a5a5a5a ? "S" : std::to_string(fi));
  };

  if (op == "b_copy") {  // b_copy VER S COPIES ATTRS [opts]: VER v1, v2, v2pt, rt, rtpt
    read_opts(5);
    std::vector<CUdeviceptr> d, s;
    std::vector<size_t> n;
    for (auto& c : bo::split(e.a(3), ',')) {
      auto eq = bo::split(c, '=');
      auto dd = bo::split(eq.at(0), '/'), ss = bo::split(eq.at(1), '/');
      d.push_back(addr(dd.at(0), strtoull(dd.at(1).c_str(), nullptr, 0)));
      s.push_back(addr(ss.at(0), strtoull(ss.at(1).c_str(), nullptr, 0)));
      n.push_back(strtoull(ss.at(2).c_str(), nullptr, 0));
    }
    std::vector<CUmemcpyAttributes> at;
    std::vector<size_t> idx;
    for (auto& c : bo::split(e.a(4), ',')) {
      auto ai = bo::split(c, '@');
      auto f = bo::split(ai.at(0), '/');
      CUmemcpyAttributes x{};
      x.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(strtoul(f.at(0).c_str(), nullptr, 0));
      if (f.size() > 1) x.flags = static_cast<unsigned>(strtoul(f[1].c_str(), nullptr, 0));
      if (f.size() > 2) x.srcLocHint = Exec::loc_token(f[2]);
      if (f.size() > 3) x.dstLocHint = Exec::loc_token(f[3]);
      at.push_back(x);
      idx.push_back(strtoull(ai.at(1).c_str(), nullptr, 0));
    }
    if (has("snap")) fill(stk.data(), stk.size(), 7);
    size_t count = num_or("count", d.size()), na = num_or("nattrs", at.size());
    CUdeviceptr* pd = has("nulldsts") ? nullptr : d.data();
    CUdeviceptr* ps = has("nullsrcs") ? nullptr : s.data();
    size_t* pn = has("nullsizes") ? nullptr : n.data();
    CUmemcpyAttributes* pa = has("nullattrs") ? nullptr : at.data();
    size_t* pi = has("nullidxs") ? nullptr : idx.data();
    const std::string& v = e.a(1);
    if (v == "v1") {
      size_t fi = 0x5a5a5a5a;
      if (auto f = reinterpret_cast<bo::CopyV1>(sym("cuMemcpyBatchAsync")))
        e.RC(r, f(pd, ps, pn, count, pa, pi, na, has("nullfail") ? nullptr : &fi, e.h<CUstream>(2)));
      record_fail(fi);
    } else if (auto f = reinterpret_cast<bo::CopyV2>(
                   sym(v == "rt"     ? "cudaMemcpyBatchAsync"
                       : v == "rtpt" ? "cudaMemcpyBatchAsync_ptsz"
                       : v == "v2pt" ? "cuMemcpyBatchAsync_v2_ptsz"
                                     : "cuMemcpyBatchAsync_v2"))) {
      e.RC(r, f(pd, ps, pn, count, pa, pi, na, e.h<CUstream>(2)));
    }
    if (has("snap")) fill(stk.data(), stk.size(), 9);

  } else if (op == "b_copy3d") {  // b_copy3d VER S OPS [opts]: VER v1, v2, rt, rtpt
    read_opts(4);
    std::vector<CUDA_MEMCPY3D_BATCH_OP> ops;
    auto operand = [&](const std::string& s) {
      auto f = bo::split(s, '.');
      CUmemcpy3DOperand o{};
      auto u = [&](size_t k) { return k < f.size() ? strtoull(f[k].c_str(), nullptr, 0) : 0; };
      if (f.at(0) == "a") {
        o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
        o.op.array.array = reinterpret_cast<CUarray>(static_cast<uintptr_t>(addr(f.at(1), 0)));
        o.op.array.offset = CUoffset3D{u(2), u(3), u(4)};
      } else {
        o.type = f[0] == "p" ? CU_MEMCPY_OPERAND_TYPE_POINTER
                             : static_cast<CUmemcpy3DOperandType>(strtoul(f[0].c_str() + 1, nullptr, 0));
        o.op.ptr.ptr = addr(f.at(1), u(2));
        o.op.ptr.rowLength = u(3);
        o.op.ptr.layerHeight = u(4);
      }
      return o;
    };
    for (auto& c : bo::split(e.a(3), ',')) {
      auto p = bo::split(c, '>');
      CUDA_MEMCPY3D_BATCH_OP x{};
      x.src = operand(p.at(0));
      x.dst = operand(p.at(1));
      auto ext = bo::split(p.at(2), '.');
      x.extent = CUextent3D{strtoull(ext.at(0).c_str(), nullptr, 0), strtoull(ext.at(1).c_str(), nullptr, 0),
                            strtoull(ext.at(2).c_str(), nullptr, 0)};
      x.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(p.size() > 3 ? strtoul(p[3].c_str(), nullptr, 0) : 1);
      x.flags = p.size() > 4 ? static_cast<unsigned>(strtoul(p[4].c_str(), nullptr, 0)) : 0;
      ops.push_back(x);
    }
    if (has("snap")) fill(stk.data(), stk.size(), 7);
    size_t count = num_or("count", ops.size());
    unsigned long long flags = num_or("flags", 0);
    CUDA_MEMCPY3D_BATCH_OP* po = has("nullops") ? nullptr : ops.data();
    const std::string& v = e.a(1);
    if (v == "v1") {
      size_t fi = 0x5a5a5a5a;
      if (auto f = reinterpret_cast<bo::Copy3V1>(sym("cuMemcpy3DBatchAsync")))
        e.RC(r, f(count, po, has("nullfail") ? nullptr : &fi, flags, e.h<CUstream>(2)));
      record_fail(fi);
    } else if (auto f = reinterpret_cast<bo::Copy3V2>(sym(v == "rt"     ? "cudaMemcpy3DBatchAsync"
                       : v == "rtpt" ? "cudaMemcpy3DBatchAsync_ptsz"
                                     : "cuMemcpy3DBatchAsync_v2"))) {
      e.RC(r, f(count, po, flags, e.h<CUstream>(2)));
    }
    if (has("snap")) fill(stk.data(), stk.size(), 9);

  } else if (op == "b_prefetch" || op == "b_discard" || op == "b_dp") {
    // b_prefetch VER S RANGES LOCS [opts], b_dp likewise, b_discard VER S RANGES [opts]; VER cu or rt
    bool locs = op != "b_discard";
    read_opts(locs ? 5 : 4);
    std::vector<CUdeviceptr> p;
    std::vector<size_t> n;
    for (auto& c : bo::split(e.a(3), ',')) {
      auto f = bo::split(c, '/');
      p.push_back(addr(f.at(0), strtoull(f.at(1).c_str(), nullptr, 0)));
      n.push_back(strtoull(f.at(2).c_str(), nullptr, 0));
    }
    std::vector<CUmemLocation> l;
    std::vector<size_t> idx;
    if (locs)
      for (auto& c : bo::split(e.a(4), ',')) {
        auto f = bo::split(c, '@');
        l.push_back(Exec::loc_token(f.at(0)));
        idx.push_back(strtoull(f.at(1).c_str(), nullptr, 0));
      }
    size_t count = num_or("count", p.size()), nl = num_or("nlocs", l.size());
    unsigned long long flags = num_or("flags", 0);
    CUdeviceptr* pp = has("nullptrs") ? nullptr : p.data();
    size_t* pn = has("nullsizes") ? nullptr : n.data();
    CUmemLocation* pl = has("nulllocs") ? nullptr : l.data();
    size_t* pi = has("nullidxs") ? nullptr : idx.data();
    // VER: cu, rt, or pt0 / rtpt for the driver's / the runtime's _ptsz form
    bool rt = e.a(1).rfind("rt", 0) == 0, pt = e.a(1) == "rtpt" || e.a(1) == "pt0";
    std::string name = std::string(rt ? "cuda" : "cu") +
                       (op == "b_prefetch" ? "MemPrefetchBatchAsync" : op == "b_discard" ? "MemDiscardBatchAsync"
                                                                                          : "MemDiscardAndPrefetchBatchAsync") +
                       (pt ? "_ptsz" : "");
    if (!locs) {
      if (auto f = reinterpret_cast<bo::Discard>(sym(name.c_str()))) e.RC(r, f(pp, pn, count, flags, e.h<CUstream>(2)));
    } else if (auto f = reinterpret_cast<bo::Prefetch>(sym(name.c_str()))) {
      e.RC(r, f(pp, pn, count, pl, pi, nl, flags, e.h<CUstream>(2)));
    }
  // ---- stream memory operations (cuStreamWriteValue*, cuStreamWaitValue*, cuStreamBatchMemOp) --
  } else if (op == "sm_write" || op == "sm_wait") {
    // sm_write|sm_wait BITS S P OFF VALUE FLAGS [v1]: the _v2 symbols, or the CUDA 8 ones
    const bool w = op == "sm_write", b64 = e.num(1) == 64, v1 = e.a(7) == "v1";
    std::string name = std::string(w ? "cuStreamWriteValue" : "cuStreamWaitValue") + (b64 ? "64" : "32") + (v1 ? "" : "_v2");
    if (b64) {
      using F = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
      if (auto f = reinterpret_cast<F>(sym(name.c_str())))
        e.RC(r, f(e.h<CUstream>(2), e.ptr(3), e.num(5), static_cast<unsigned>(e.num(6))));
    } else {
      using F = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
      if (auto f = reinterpret_cast<F>(sym(name.c_str())))
        e.RC(r, f(e.h<CUstream>(2), e.ptr(3), static_cast<cuuint32_t>(e.num(5)), static_cast<unsigned>(e.num(6))));
    }
  } else if (op == "sm_batch") {
    // sm_batch S FLAGS OPS [opts]: OPS comma-separated, each KIND/P/OFF/VALUE/FLAGS with KIND w32
    // (write), W32 (wait), w64, W64, or bar/FLAGS, flush/FLAGS, tN/... (raw operation N);
    // opts: nullops, count=N, v1 (the CUDA 8 symbol)
    read_opts(4);
    std::vector<CUstreamBatchMemOpParams> ps;
    for (auto& c : bo::split(e.a(3), ',')) {
      auto f = bo::split(c, '/');
      CUstreamBatchMemOpParams x;
      memset(&x, 0, sizeof x);
      const std::string& k = f.at(0);
      auto u = [&](size_t i) { return i < f.size() ? strtoull(f[i].c_str(), nullptr, 0) : 0; };
      if (k == "bar" || k == "flush") {
        x.operation = k == "bar" ? CU_STREAM_MEM_OP_BARRIER : CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
        x.memoryBarrier.flags = static_cast<unsigned>(u(1));
      } else {
        const bool wr = k[0] == 'w' || k[0] == 't';
        x.operation = k[0] == 't' ? static_cast<CUstreamBatchMemOpType>(atoi(k.c_str() + 1))
                      : wr ? (k == "w64" ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32)
                           : (k == "W64" ? CU_STREAM_MEM_OP_WAIT_VALUE_64 : CU_STREAM_MEM_OP_WAIT_VALUE_32);
        x.writeValue.address = addr(f.at(1), u(2));
        x.writeValue.value64 = u(3);
        x.writeValue.flags = static_cast<unsigned>(u(4));
      }
      ps.push_back(x);
    }
    ps.resize(std::max<size_t>(ps.size(), 1));
    using F = CUresult (*)(CUstream, unsigned, CUstreamBatchMemOpParams*, unsigned);
    const unsigned count = static_cast<unsigned>(num_or("count", e.a(3) == "-" ? 0 : bo::split(e.a(3), ',').size()));
    if (auto f = reinterpret_cast<F>(sym(has("v1") ? "cuStreamBatchMemOp" : "cuStreamBatchMemOp_v2")))
      e.RC(r, f(e.h<CUstream>(1), count, has("nullops") ? nullptr : ps.data(), static_cast<unsigned>(e.num(2))));
  } else if (op == "sm_peek") {  // sm_peek P OFF: the 8 bytes there, as one hex number (little-endian)
    uint64_t v = 0;
    e.RC(r, e.api.cuMemcpyDtoH(&v, e.ptr(1), 8));
    char b[24];
    snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
    r.ks("v", b);
  } else if (op == "b_stk") {  // b_stk OFF N: a checksum of the op's own buffer
    e.RC(r, 0);
    e.checksum(r, stk.data() + e.num(1), e.num(2));
  } else {
    return false;
  }
  return true;
}

}  // namespace difftest
