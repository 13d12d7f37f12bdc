// difftest ops of the managed family, for the probe cases in tests/probe/cases/managed*.cases
// (docs/probe.md). Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// Api table, what it records in r. Returns false for an op it does not know. Every op here is
// named m_* so that no other family's op of the same name shadows it. The runtime twins are
// declared here (cudaError_t is an int, cudaMemLocation is laid out as CUmemLocation,
// cudaStream_t is a CUstream): no runtime header is needed.
#pragma once

#include <atomic>

namespace difftest {

namespace managed_ops {
inline std::atomic<bool> g_gate{true};
// A host function that holds its stream until m_release (at most 10 s): a busy stream whose
// state does not depend on timing.
inline void CUDA_CB hold(void*) {
  for (int i = 0; i < 10000 && !g_gate.load(); ++i) usleep(1000);
}
inline std::string bytes(const unsigned char* b, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) { char x[3]; snprintf(x, 3, "%02x", b[i]); s += x; }
  return s;
}
// A relation of v to base: "+N" / "-N" (within 1 GiB), "0" for NULL, "far" beyond.
inline std::string rel(uint64_t v, uint64_t base) {
  if (!v) return "0";
  long long d = static_cast<long long>(v - base);
  if (d > (1LL << 30) || d < -(1LL << 30)) return "far";
  return (d >= 0 ? "+" : "") + std::to_string(d);
}
}  // namespace managed_ops

inline bool ops_managed(Exec& e, Rec& r) {
  namespace mo = managed_ops;
  const std::string& op = e.t[0];
  if (op.rfind("m_", 0) != 0) return false;
  auto cp = [&](size_t k) { return static_cast<CUdeviceptr>(e.ptr(k)); };
  auto vp = [&](size_t k) { return reinterpret_cast<void*>(static_cast<uintptr_t>(e.ptr(k))); };
  auto strm = [&](size_t k) { return e.h<CUstream>(k); };
  // A location token as e.loc(k) reads it, or t<N>: a raw location type N (id 0).
  auto mloc = [&](size_t k) {
    if (e.a(k)[0] != 't') return e.loc(k);
    CUmemLocation l{}; l.type = static_cast<CUmemLocationType>(atoi(e.a(k).c_str() + 1)); return l;
  };
  auto rt = [&](const char* n) {
    void* f = e.api.rtsym(n);
    if (!f) r.ks("missing", n);
    return f;
  };
  // The range state: every cuMemRangeGetAttribute attribute of [M+OFF, +N) as one record;
  // ACCESSED_BY with two slots. A failing attribute reads "eCODE". rc: READ_MOSTLY's.
  if (op == "m_state") {  // m_state M OFF N
    static const struct { const char* k; int at; } as[] = {{"rm", 1}, {"pl", 2}, {"ab", 3}, {"lp", 4},
                                                          {"plt", 5}, {"pli", 6}, {"lpt", 7}, {"lpi", 8}};
    auto f = DT_FN(e, cuMemRangeGetAttribute);
    if (!f) { r.ks("missing", "cuMemRangeGetAttribute"); return true; }
    bool first = true;
    for (auto& a : as) {
      int v[2] = {-77, -77};
      int rc = f(v, a.at == 3 ? 8 : 4, static_cast<CUmem_range_attribute>(a.at), cp(1), e.num(3));
      if (first) { e.RC(r, rc); first = false; }
      std::string s = rc ? "e" + std::to_string(rc) : std::to_string(v[0]);
      if (!rc && a.at == 3) s += "/" + std::to_string(v[1]);
      r.ks(a.k, s);
    }
  } else if (op == "m_advise") {  // m_advise M OFF N ADVICE LOC: as advise, LOC may be t<N>
    DT_CALL(e, r, cuMemAdvise, cp(1), e.num(3), static_cast<CUmem_advise>(e.num(4)), mloc(5));
  } else if (op == "m_prefetch") {  // m_prefetch M OFF N LOC FLAGS STREAM: as prefetch, with flags
    DT_CALL(e, r, cuMemPrefetchAsync, cp(1), e.num(3), mloc(4), static_cast<unsigned>(e.num(5)), strm(6));
  } else if (op == "m_range") {  // m_range M OFF N ATTR DATASIZE [null]: bytes of a 0xab buffer
    unsigned char b[32]; memset(b, 0xab, sizeof b);
    size_t ds = e.num(5);
    DT_CALL(e, r, cuMemRangeGetAttribute, e.a(6) == "null" ? nullptr : b, ds, static_cast<CUmem_range_attribute>(e.num(4)), cp(1), e.num(3));
    size_t show = std::max<size_t>(ds, 4) + 4;
    r.ks("b", mo::bytes(b, show > 24 ? 24 : show));
  } else if (op == "m_ranges") {
    // m_ranges M OFF N NUM ATTR:SIZE... [nulldata|nullsizes|nullattrs|allnull|nullelem]: the plural
    // form; each buffer is 0xab-filled and recorded with 4 bytes past its size.
    std::vector<CUmem_range_attribute> as; std::vector<size_t> ss; std::string mode;
    for (size_t k = 5; k < e.t.size(); ++k) {
      size_t c = e.t[k].find(':');
      if (c == std::string::npos) { mode = e.t[k]; continue; }
      as.push_back(static_cast<CUmem_range_attribute>(atoi(e.t[k].c_str())));
      ss.push_back(strtoull(e.t[k].c_str() + c + 1, nullptr, 0));
    }
    std::vector<std::vector<unsigned char>> bufs;
    std::vector<void*> data;
    for (size_t s : ss) { bufs.emplace_back(s + 4, 0xab); }
    for (auto& b : bufs) data.push_back(b.data());
    if (mode == "nullelem" && !data.empty()) data[0] = nullptr;
    bool all = mode == "allnull";
    DT_CALL(e, r, cuMemRangeGetAttributes, all || mode == "nulldata" ? nullptr : data.data(), all || mode == "nullsizes" ? nullptr : ss.data(),
            all || mode == "nullattrs" ? nullptr : as.data(), e.num(4), cp(1), e.num(3));
    for (size_t i = 0; i < bufs.size(); ++i) r.ks(("v" + std::to_string(i)).c_str(), mo::bytes(bufs[i].data(), bufs[i].size()));
  // The runtime's twins.
  } else if (op == "m_rt_advise") {  // m_rt_advise M OFF N ADVICE LOC
    using F = int (*)(const void*, size_t, int, CUmemLocation);
    if (auto f = reinterpret_cast<F>(rt("cudaMemAdvise"))) e.RC(r, f(vp(1), e.num(3), static_cast<int>(e.num(4)), mloc(5)));
  } else if (op == "m_rt_prefetch") {  // m_rt_prefetch M OFF N LOC FLAGS STREAM
    using F = int (*)(const void*, size_t, CUmemLocation, unsigned, CUstream);
    if (auto f = reinterpret_cast<F>(rt("cudaMemPrefetchAsync")))
      e.RC(r, f(vp(1), e.num(3), mloc(4), static_cast<unsigned>(e.num(5)), strm(6)));
  } else if (op == "m_rt_range") {  // m_rt_range M OFF N ATTR DATASIZE [null]
    using F = int (*)(void*, size_t, int, const void*, size_t);
    unsigned char b[32]; memset(b, 0xab, sizeof b);
    size_t ds = e.num(5);
    if (auto f = reinterpret_cast<F>(rt("cudaMemRangeGetAttribute"))) {
      e.RC(r, f(e.a(6) == "null" ? nullptr : b, ds, static_cast<int>(e.num(4)), vp(1), e.num(3)));
      size_t show = std::max<size_t>(ds, 4) + 4;
      r.ks("b", mo::bytes(b, show > 24 ? 24 : show));
    }
  } else if (op == "m_rt_attach") {  // m_rt_attach S M OFF LEN FLAGS
    using F = int (*)(CUstream, void*, size_t, unsigned);
    if (auto f = reinterpret_cast<F>(rt("cudaStreamAttachMemAsync"))) e.RC(r, f(strm(1), vp(2), e.num(4), static_cast<unsigned>(e.num(5))));
  } else if (op == "m_rt_last_error") {  // cudaGetLastError: the sticky code, then reset
    using F = int (*)();
    if (auto f = reinterpret_cast<F>(rt("cudaGetLastError"))) e.RC(r, f());
  } else if (op == "m_rt_dev_attr") {  // m_rt_dev_attr ATTR DEV
    using F = int (*)(int*, int, int);
    int v = -77;
    if (auto f = reinterpret_cast<F>(rt("cudaDeviceGetAttribute"))) { e.RC(r, f(&v, static_cast<int>(e.num(1)), static_cast<int>(e.num(2)))); if (!e.rc) r.kv("v", v); }
  } else if (op == "m_rt_ptr_attrs") {  // m_rt_ptr_attrs M OFF: cudaPointerGetAttributes' type, device, pointers
    using F = int (*)(void*, const void*);
    struct { int type, device; void* dp; void* hp; unsigned char rest[256]; } a;
    memset(&a, 0x7f, sizeof a);
    if (auto f = reinterpret_cast<F>(rt("cudaPointerGetAttributes"))) {
      e.RC(r, f(&a, vp(1)));
      if (!e.rc) {
        r.kv("type", a.type); r.kv("device", a.device);
        r.ks("dp", e.nptr(reinterpret_cast<uintptr_t>(a.dp))); r.ks("hp", e.nptr(reinterpret_cast<uintptr_t>(a.hp)));
      }
    }
  } else if (op == "m_rt_ipc_get") {  // m_rt_ipc_get M OFF: cudaIpcGetMemHandle
    using F = int (*)(void*, void*);
    unsigned char h[64];
    if (auto f = reinterpret_cast<F>(rt("cudaIpcGetMemHandle"))) e.RC(r, f(h, vp(1)));
  // Other entries fed a managed pointer.
  } else if (op == "m_host_devptr") {  // m_host_devptr M OFF: cuMemHostGetDevicePointer
    CUdeviceptr d = kSentinel;
    DT_CALL(e, r, cuMemHostGetDevicePointer, &d, vp(1), 0);
    r.ks("out", d == kSentinel ? "S" : e.nptr(d));
  } else if (op == "m_host_flags") {  // m_host_flags M OFF: cuMemHostGetFlags
    unsigned f = 0x5a5a5a5a;
    DT_CALL(e, r, cuMemHostGetFlags, &f, vp(1));
    r.ks("flags", f == 0x5a5a5a5a ? "S" : std::to_string(f));
  } else if (op == "m_memset32_async") {  // m_memset32_async M OFF VALUE N STREAM
    DT_CALL(e, r, cuMemsetD32Async, cp(1), static_cast<unsigned>(e.num(3)), e.num(4), strm(5));
  } else if (op == "m_busy") {  // m_busy S: a host function holds S until m_release
    mo::g_gate = false;
    DT_CALL(e, r, cuLaunchHostFunc, strm(1), mo::hold, nullptr);
  } else if (op == "m_release") {
    mo::g_gate = true;
    e.RC(r, 0);
  // cuMemGetInfo as a direction: m_info_mark remembers free memory, m_info_cmp says whether it
  // went down or up by 48 MiB or more since, else "same" (raw numbers differ between runs and
  // machines; the cases that ask move 64 MiB).
  } else if (op == "m_info_mark" || op == "m_info_cmp") {
    static size_t mark = 0;
    size_t f = 0, t = 0;
    DT_CALL(e, r, cuMemGetInfo, &f, &t);
    if (op == "m_info_mark") mark = f;
    else if (!e.rc) r.ks("free", f + (48u << 20) <= mark ? "down" : f >= mark + (48u << 20) ? "up" : "same");
  // The runner's own host access, unchecked: a fault ends the case ("crash SIG11" is the answer).
  } else if (op == "m_poke") {  // m_poke M OFF: writes one byte
    *reinterpret_cast<volatile unsigned char*>(vp(1)) = 1;
    e.RC(r, 0);
  } else if (op == "m_peek") {  // m_peek M OFF: reads one byte
    r.kv("v", *reinterpret_cast<volatile unsigned char*>(vp(1)));
    e.RC(r, 0);
  } else if (op == "m_stack_attach") {  // m_stack_attach S LEN FLAGS: a buffer on the runner's stack
    alignas(4096) unsigned char st[8192];
    memset(st, 0, sizeof st);
    DT_CALL(e, r, cuStreamAttachMemAsync, strm(1), static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(st)), e.num(2), static_cast<unsigned>(e.num(3)));
  // Layout, as relations: where B lies from A, the alignment of a pointer, a pointer attribute
  // relative to a slot.
  } else if (op == "m_delta") {  // m_delta B A
    e.RC(r, 0);
    r.ks("d", mo::rel(e.val(1), e.val(2)));
  } else if (op == "m_align") {  // m_align M OFF: largest power of two dividing it, up to 2 MiB
    uint64_t p = e.ptr(1), a = 1;
    while (p && a < (2u << 20) && p % (a * 2) == 0) a *= 2;
    e.RC(r, 0);
    r.ks("align", !p ? "0" : a >= (2u << 20) ? "2MiB+" : std::to_string(a));
  } else if (op == "m_attr_rel") {  // m_attr_rel M OFF ATTR BASE: a pointer-valued attribute from BASE
    unsigned long long v = 0;
    DT_CALL(e, r, cuPointerGetAttribute, &v, static_cast<CUpointer_attribute>(e.num(3)), cp(1));
    if (!e.rc) r.ks("v", mo::rel(v, e.val(4)));
  } else if (op == "m_procaddr") {  // m_procaddr NAME VERSION: cuGetProcAddress, whether it found one
    void* f = reinterpret_cast<void*>(1);
    CUdriverProcAddressQueryResult q = static_cast<CUdriverProcAddressQueryResult>(0x5a);
    DT_CALL(e, r, cuGetProcAddress, e.a(1).c_str(), &f, static_cast<int>(e.num(2)), 0, &q);
    r.ks("fn", f == reinterpret_cast<void*>(1) ? "S" : f ? "set" : "0");
    r.kv("status", q);
  } else {
    return false;
  }
  return true;
}

}  // namespace difftest
