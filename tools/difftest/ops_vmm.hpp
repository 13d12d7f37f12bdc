// difftest ops of the vmm family, for the probe cases in tests/probe/cases/vmm*.cases
// (docs/probe.md). Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// Api table, what it records in r. Returns false for an op it does not know.
// They ask what the core vmm_* ops cannot: a NULL or managed-type property, allocation flags,
// cuMemCreate / cuMemMap / cuMemAddressReserve / export flags, access descriptor counts and NULL
// arrays, the free-memory cost of a cuMemCreate, and whether an import or a reservation gave back
// a handle or address already known.
#pragma once

namespace difftest {

// Allocation properties from tokens k..k+2: TYPE LOC HT (TYPE 1 pinned, 2 managed; "null": no
// properties), then optional k=v words from k+3 on: comp, rdma, usage, rsv (allocFlags.reserved[0]).
inline CUmemAllocationProp* vmm_prop(Exec& e, size_t k, CUmemAllocationProp& p) {
  if (e.a(k) == "null") return nullptr;
  memset(&p, 0, sizeof p);
  p.type = static_cast<CUmemAllocationType>(e.num(k));
  p.location = e.loc(k + 1);
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(e.num(k + 2));
  for (size_t i = k + 3; i < e.t.size(); ++i) {
    const std::string& w = e.t[i];
    size_t eq = w.find('=');
    if (eq == std::string::npos) continue;
    std::string key = w.substr(0, eq);
    auto v = strtoull(w.c_str() + eq + 1, nullptr, 0);
    if (key == "comp") p.allocFlags.compressionType = static_cast<unsigned char>(v);
    else if (key == "rdma") p.allocFlags.gpuDirectRDMACapable = static_cast<unsigned char>(v);
    else if (key == "usage") p.allocFlags.usage = static_cast<unsigned short>(v);
    else if (key == "rsv") p.allocFlags.reserved[0] = static_cast<unsigned char>(v);
  }
  return &p;
}

inline bool ops_vmm(Exec& e, Rec& r) {
  const std::string& op = e.t[0];
  CUmemAllocationProp pr;
  if (op == "v_gran") {  // v_gran OPTION TYPE LOC HT
    size_t g = kSentinel;
    DT_CALL(e, r, cuMemGetAllocationGranularity, &g, vmm_prop(e, 2, pr), static_cast<CUmemAllocationGranularity_flags>(e.num(1)));
    r.ks("g", g == kSentinel ? "S" : std::to_string(g));
  } else if (op == "v_create") {  // v_create H SIZE FLAGS TYPE LOC HT [comp= rdma= usage= rsv=]
    CUmemGenericAllocationHandle hh = kSentinel;
    DT_CALL(e, r, cuMemCreate, &hh, e.num(2), vmm_prop(e, 4, pr), e.num(3));
    e.out(r, e.rc, "out", hh, 0, false, 1);
  } else if (op == "v_create_info") {  // v_create_info H SIZE LOC HT: and how many MiB cuMemGetInfo's free fell by
    size_t f0 = 0, f1 = 0, tt = 0;
    e.api.cuMemGetInfo(&f0, &tt);
    memset(&pr, 0, sizeof pr);
    pr.type = CU_MEM_ALLOCATION_TYPE_PINNED; pr.location = e.loc(3);
    pr.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(e.num(4));
    CUmemGenericAllocationHandle hh = kSentinel;
    DT_CALL(e, r, cuMemCreate, &hh, e.num(2), &pr, 0);
    e.api.cuMemGetInfo(&f1, &tt);
    r.kv("mib", f0 >= f1 ? static_cast<long long>((f0 - f1) >> 20) : -static_cast<long long>((f1 - f0) >> 20));
    e.out(r, e.rc, "out", hh, 0, false, 1);
  } else if (op == "v_reserve") {  // v_reserve V SIZE ALIGN HINT HINTOFF FLAGS: "hint" 1 if placed at the hint
    CUdeviceptr p = kSentinel, hint = e.ptr(4);
    DT_CALL(e, r, cuMemAddressReserve, &p, e.num(2), e.num(3), hint, e.num(6));
    if (e.rc == 0) {
      if (hint) r.kv("hint", p == hint);
      // Only where 64 MiB alignment was asked for is it a rule; elsewhere it is placement.
      if (e.num(3) >= (64ull << 20)) r.kv("al64m", p % (64ull << 20) == 0);
    }
    e.out(r, e.rc, "out", p, e.num(2), true, 1);
  } else if (op == "v_map") {  // v_map V OFF SIZE H HOFF FLAGS
    DT_CALL(e, r, cuMemMap, e.ptr(1), e.num(3), e.num(5), e.val(4), e.num(6));
  } else if (op == "v_set_access") {  // v_set_access V OFF SIZE LOC FLAGS COUNT ["null": no descriptors]
    CUmemAccessDesc d{}; d.location = e.loc(4); d.flags = static_cast<CUmemAccess_flags>(e.num(5));
    DT_CALL(e, r, cuMemSetAccess, e.ptr(1), e.num(3), e.a(7) == "null" ? nullptr : &d, e.num(6));
  } else if (op == "v_get_access") {  // v_get_access V OFF LOC ["null": no flags output]
    unsigned long long f = kSentinel; CUmemLocation l = e.loc(3);
    DT_CALL(e, r, cuMemGetAccess, e.a(4) == "null" ? nullptr : &f, &l, e.ptr(1));
    if (e.a(4) != "null") r.ks("flags", f == kSentinel ? "S" : std::to_string(f));
  } else if (op == "v_export") {  // v_export F H HANDLETYPE FLAGS: into a 64-byte buffer (fabric handles are 64)
    unsigned char b[64]; memset(b, 0x5a, sizeof b);
    DT_CALL(e, r, cuMemExportToShareableHandle, b, e.val(2), static_cast<CUmemAllocationHandleType>(e.num(3)), e.num(4));
    int fd; memcpy(&fd, b, sizeof fd);
    int w = 0; for (int i = 0; i < 64; ++i) if (b[i] != 0x5a) w = i + 1;
    r.kv("w", w);
    if (e.rc == 0) { e.def(e.a(1), 0, 0, false); if (e.num(3) == 1) e.slots[e.a(1)].fd = fd; }
  } else if (op == "v_fdflags") {  // v_fdflags F: fcntl(F_GETFD) of an fd slot (1: close-on-exec)
    int fl = fcntl(e.fdof(1), F_GETFD);
    e.RC(r, fl < 0 ? -1 : 0);
    r.kv("v", fl);
  } else if (op == "v_import") {  // v_import H F HANDLETYPE: "is" names a handle already held
    int fd = e.fdof(2); struct stat st{}; fstat(fd, &st); CUmemGenericAllocationHandle hh = kSentinel;
    DT_CALL(e, r, cuMemImportFromShareableHandle, &hh, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
            static_cast<CUmemAllocationHandleType>(e.num(3)));
    r.kv("fdlive", same_file(fd, st));
    if (e.rc == 0) r.ks("is", e.nh(hh));
    e.out(r, e.rc, "out", hh, 0, false, 1);
  } else {
    return false;
  }
  return true;
}

}  // namespace difftest
