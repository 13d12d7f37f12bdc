// difftest ops of the external family, for the probe cases in tests/probe/cases/external*.cases
// (docs/probe.md). Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// Api table, what it records in r. Returns false for an op it does not know.
//
// The core executor's ext_import / ext_buffer / ext_destroy / memfd / fd stay as they are; these
// are the richer forms the cases need: every field of the handle, buffer, mipmapped-array and
// semaphore descriptors (MOD words set a reserved word, the win32 name, an all-zero handle or a
// NULL descriptor), signal / wait with fence values, and the runtime's cuda* twins through
// e.api.rtsym with prototypes of our own (the runtime's descriptors for memory, buffers and
// semaphores have the driver's layout; its mipmapped-array descriptor and pointer attributes are
// spelled out below). Records hold codes, "open"/"closed" for a descriptor after a call (checked
// by identity, not number), relations to slots and sizes: never an address or an fd number.
#pragma once
#include <sys/eventfd.h>

namespace difftest {
namespace ext {

// The identity (device, inode) of each fd slot when first seen, so that "closed" is told apart
// from "the number now names something else".
inline std::map<std::string, std::pair<dev_t, ino_t>>& idents() { static std::map<std::string, std::pair<dev_t, ino_t>> m; return m; }
inline void remember(const std::string& name, int fd) {
  struct stat st;
  if (fd >= 0 && !idents().count(name) && fstat(fd, &st) == 0) idents()[name] = {st.st_dev, st.st_ino};
}
inline bool live(const std::string& name, int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return false;
  auto it = idents().find(name);
  return it == idents().end() || (it->second.first == st.st_dev && it->second.second == st.st_ino);
}
inline void newfd(Exec& e, const std::string& name, int fd) {
  e.def(name, 0, 0, false);
  e.slots[name].fd = fd;
  idents().erase(name);
  remember(name, fd);
}
// The probe's all-zero handle is fd 0; make fd 0 /dev/null (not the runner's stdin) first.
inline void zero_is_devnull() {
  int dn = open("/dev/null", O_RDWR);
  if (dn > 0) { dup2(dn, 0); close(dn); }
}
// An fd argument: a slot's fd, a number, or -1 for a slot nobody defined (a failed set-up must
// not hand the driver the runner's fd 0). Remembered before the call, reported after it as "fd".
// MOD "zero" (the all-zero handle) passes fd 0, made /dev/null first.
struct FdArg {
  std::string name;
  int fd = -1;
  bool was = false;
  FdArg(Exec& e, size_t k, const std::string& mod) : name(e.a(k)) {
    const std::string& s = e.a(k);
    if (mod == "zero") { zero_is_devnull(); name = "0"; fd = 0; }
    else if (e.slot(k)) fd = e.slot(k)->fd;
    else if (!s.empty() && (isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')) fd = static_cast<int>(e.num(k));
    remember(name, fd);
    was = live(name, fd);
  }
  void report(Rec& r) const { if (was) r.ks("fd", live(name, fd) ? "open" : "closed"); }
};
// On success: the slot whose base the new pointer equals ("new" for none) and its place in a
// 2 MiB page (a buffer's address keeps its offset's place there).
inline void place(Exec& e, Rec& r, uint64_t p) {
  std::string al = "new";
  for (auto it = e.order.rbegin(); it != e.order.rend(); ++it)
    if (e.slots[*it].ptr && e.slots[*it].v == p && !e.freed.count(*it)) { al = *it; break; }
  r.ks("alias", al);
  r.ks("pgoff", hex(p & ((2ull << 20) - 1)));
}
template <class T> inline void mod_resv(const std::string& m, T& d) {
  if (m == "resv0") d.reserved[0] = 1;
  if (m == "resv15") d.reserved[15] = 1;
}
inline bool matches(const unsigned char* b, size_t n, uint64_t seed, size_t skip) {
  std::vector<unsigned char> want(skip + n);
  fill(want.data(), want.size(), seed);
  return memcmp(b, want.data() + skip, n) == 0;
}
inline CUDA_ARRAY3D_DESCRIPTOR a3d(Exec& e, size_t k) {  // W H D FMT CH FLAGS from token k
  CUDA_ARRAY3D_DESCRIPTOR a{};
  a.Width = e.num(k); a.Height = e.num(k + 1); a.Depth = e.num(k + 2);
  a.Format = static_cast<CUarray_format>(e.num(k + 3)); a.NumChannels = static_cast<unsigned>(e.num(k + 4));
  a.Flags = static_cast<unsigned>(e.num(k + 5));
  return a;
}
inline void desc3(Rec& r, const CUDA_ARRAY3D_DESCRIPTOR& d) {
  r.kv("W", static_cast<long long>(d.Width)); r.kv("H", static_cast<long long>(d.Height)); r.kv("D", static_cast<long long>(d.Depth));
  r.kv("fmt", d.Format); r.kv("ch", d.NumChannels); r.kv("flags", d.Flags);
}
inline CUDA_MEMCPY2D copy2d(CUarray a, void* host, size_t wbytes, size_t h, bool to_array) {
  CUDA_MEMCPY2D c{};
  if (to_array) {
    c.srcMemoryType = CU_MEMORYTYPE_HOST; c.srcHost = host; c.srcPitch = wbytes;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY; c.dstArray = a;
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_ARRAY; c.srcArray = a;
    c.dstMemoryType = CU_MEMORYTYPE_HOST; c.dstHost = host; c.dstPitch = wbytes;
  }
  c.WidthInBytes = wbytes; c.Height = h;
  return c;
}

// The runtime's mipmapped-array descriptor (cudaExternalMemoryMipmappedArrayDesc).
struct RtMipDesc {
  unsigned long long offset;
  struct { int x, y, z, w, f; } fmt;  // cudaChannelFormatDesc
  struct { size_t w, h, d; } extent;  // cudaExtent
  unsigned flags, numLevels, reserved[16];
};
// A runtime entry by name, or nullptr with "rt":"missing" recorded.
template <class F> F rt(Exec& e, Rec& r, const char* n, const char* alt = nullptr) {
  void* s = e.api.rtsym(n);
  if (!s && alt) s = e.api.rtsym(alt);
  if (!s) { r.ks("rt", "missing"); return nullptr; }
  return reinterpret_cast<F>(s);
}
inline uint64_t U(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// One descriptor each for the import ops: TYPE SIZE FLAGS MOD from token k (memory).
inline CUDA_EXTERNAL_MEMORY_HANDLE_DESC memdesc(Exec& e, size_t k, int fd) {
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = static_cast<CUexternalMemoryHandleType>(static_cast<int>(e.num(k)));
  d.size = e.num(k + 1); d.flags = static_cast<unsigned>(e.num(k + 2));
  const std::string& m = e.a(k + 3);
  if (m == "name") d.handle.win32.name = "x";  // the union's upper half set, the fd below it
  if (m != "zero") d.handle.fd = fd; else memset(&d.handle, 0, sizeof d.handle);
  mod_resv(m, d);
  return d;
}
inline CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC semdesc(Exec& e, size_t k, int fd) {  // TYPE FLAGS MOD
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d{};
  d.type = static_cast<CUexternalSemaphoreHandleType>(static_cast<int>(e.num(k)));
  d.flags = static_cast<unsigned>(e.num(k + 1));
  const std::string& m = e.a(k + 2);
  if (m != "zero") d.handle.fd = fd; else memset(&d.handle, 0, sizeof d.handle);
  mod_resv(m, d);
  return d;
}
inline CUDA_EXTERNAL_MEMORY_BUFFER_DESC bufdesc(Exec& e, size_t k) {  // OFF SIZE FLAGS MOD
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
  b.offset = e.num(k); b.size = e.num(k + 1); b.flags = static_cast<unsigned>(e.num(k + 2));
  mod_resv(e.a(k + 3), b);
  return b;
}
// sem_signal / sem_wait N S VALUE FLAGS STREAM: N entries of semaphore S ("nullarr": NULL arrays).
struct SemArgs {
  unsigned n;
  std::vector<CUexternalSemaphore> s;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS> sp;
  std::vector<CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS> wp;
  bool null;
  SemArgs(Exec& e) : n(static_cast<unsigned>(e.num(1))), null(e.a(2) == "nullarr") {
    size_t k = n ? n : 1;
    s.assign(k, e.h<CUexternalSemaphore>(2)); sp.assign(k, {}); wp.assign(k, {});
    for (size_t i = 0; i < k; ++i) {
      sp[i].params.fence.value = wp[i].params.fence.value = e.num(3);
      sp[i].flags = wp[i].flags = static_cast<unsigned>(e.num(4));
    }
  }
  CUexternalSemaphore* sems() { return null ? nullptr : s.data(); }
  const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* sig() { return null ? nullptr : sp.data(); }
  const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* wait() { return null ? nullptr : wp.data(); }
};

}  // namespace ext

inline bool ops_external(Exec& e, Rec& r) {
  using namespace ext;
  const std::string& op = e.t[0];
  auto O = [&](auto* p) { return e.a(1) == "null" ? nullptr : p; };
  auto nulldesc = [&](size_t k) { return e.a(k) == "nulldesc"; };
  auto is = [&](uint64_t v) { if (e.rc == 0) r.ks("is", e.nh(v)); };  // a new handle, or the slot it equals

  // ---- descriptors of other kinds, and what became of one ----------------------------------
  if (op == "fd_eventfd") {  // fd_eventfd F
    int fd = eventfd(0, 0); e.RC(r, fd >= 0 ? 0 : -1); newfd(e, e.a(1), fd);
  } else if (op == "fd_dup") {  // fd_dup G F: a second descriptor of F's file
    int fd = dup(e.fdof(2)); e.RC(r, fd >= 0 ? 0 : -1); newfd(e, e.a(1), fd);
  } else if (op == "fd_open") {  // fd_open F PATH: skips the case where PATH does not open
    int fd = open(e.a(2).c_str(), O_RDWR);
    if (fd < 0) { r.ks("skip", "no " + e.a(2)); e.stop = true; return true; }
    e.RC(r, 0); newfd(e, e.a(1), fd);
  } else if (op == "fd_live") {  // fd_live F: is F's descriptor still the file it was?
    e.RC(r, 0); r.ks("fd", live(e.a(1), e.fdof(1)) ? "open" : "closed");
  } else if (op == "fd_cloexec") {
    int f = fcntl(e.fdof(1), F_GETFD); e.RC(r, f < 0 ? -1 : 0); if (f >= 0) r.kv("cloexec", (f & FD_CLOEXEC) ? 1 : 0);

  // ---- the exporter: ext_vmm H V F SIZE LOC ---------------------------------------------------
  // cuMemCreate (POSIX fd handles) at LOC, reserved, mapped and made read-write for device 0 at
  // V, exported to F ("-": not exported). rc is the first failing step's code, "step" names it.
  } else if (op == "ext_vmm") {
    size_t size = e.num(4);
    CUmemAllocationProp pr{}; pr.type = CU_MEM_ALLOCATION_TYPE_PINNED; pr.location = e.loc(5);
    pr.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle h = 0; CUdeviceptr v = 0; int fd = -1;
    const char* step = "create";
    CUresult c = e.api.cuMemCreate(&h, size, &pr, 0);
    if (!c) { step = "reserve"; c = e.api.cuMemAddressReserve(&v, size, 0, 0, 0); }
    if (!c) { step = "map"; c = e.api.cuMemMap(v, size, 0, h, 0); }
    CUmemAccessDesc ad{}; ad.location.type = CU_MEM_LOCATION_TYPE_DEVICE; ad.location.id = 0; ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (!c) { step = "access"; c = e.api.cuMemSetAccess(v, size, &ad, 1); }
    if (!c && e.a(3) != "-") { step = "export"; c = e.api.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0); }
    e.RC(r, c);
    if (c) { r.ks("step", step); return true; }
    e.def(e.a(1), h, 0, false); e.def(e.a(2), v, size, true);
    if (e.a(3) != "-") newfd(e, e.a(3), fd);

  // ---- memory: import, buffers -------------------------------------------------------------
  } else if (op == "ext_import_ex") {  // ext_import_ex X F TYPE SIZE FLAGS MOD (MOD: - resv0 resv15 name zero nulldesc)
    FdArg f(e, 2, e.a(6));
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = memdesc(e, 3, f.fd);
    CUexternalMemory x = Exec::sent<CUexternalMemory>();
    DT_CALL(e, r, cuImportExternalMemory, O(&x), nulldesc(6) ? nullptr : &d);
    f.report(r); is(U(x)); e.out(r, e.rc, "out", U(x), 0, false, 1);
  } else if (op == "ext_map") {  // ext_map P X OFF SIZE FLAGS MOD (MOD: - resv0 resv15 nulldesc)
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b = bufdesc(e, 3);
    CUdeviceptr p = kSentinel;
    DT_CALL(e, r, cuExternalMemoryGetMappedBuffer, O(&p), e.h<CUexternalMemory>(2), nulldesc(6) ? nullptr : &b);
    if (e.rc == 0 && p) place(e, r, p);
    e.out(r, e.rc, "out", p, b.size, true, 1);
  } else if (op == "ext_check") {  // ext_check P OFF N SEED SKIP: N bytes at P+OFF against `write`'s pattern SEED from byte SKIP
    size_t n = e.num(3); std::vector<unsigned char> b(n, 0xcd);
    DT_CALL(e, r, cuMemcpyDtoH, b.data(), e.ptr(1), n);
    if (e.rc == 0) r.ks("data", matches(b.data(), n, e.num(4), e.num(5)) ? "match" : "mismatch");
  } else if (op == "dmabuf_get") {  // dmabuf_get F P OFF SIZE: a dma-buf fd of a device range
    int fd = kFdSentinel;
    DT_CALL(e, r, cuMemGetHandleForAddressRange, &fd, e.ptr(2), e.num(4), CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0ull);
    if (e.rc == 0) newfd(e, e.a(1), fd); else r.ks("out", fd == kFdSentinel ? "S" : "set");

  // ---- mipmapped arrays ----------------------------------------------------------------------
  } else if (op == "ext_mip") {  // ext_mip M X OFF W H D FMT CH FLAGS LEVELS MOD (MOD: - resv0 nulldesc)
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md{};
    md.offset = e.num(3); md.arrayDesc = a3d(e, 4); md.numLevels = static_cast<unsigned>(e.num(10));
    mod_resv(e.a(11), md);
    CUmipmappedArray m = Exec::sent<CUmipmappedArray>();
    DT_CALL(e, r, cuExternalMemoryGetMappedMipmappedArray, O(&m), e.h<CUexternalMemory>(2), nulldesc(11) ? nullptr : &md);
    is(U(m)); e.out(r, e.rc, "out", U(m), 0, false, 1);
  } else if (op == "mip_create") {  // mip_create M W H D FMT CH FLAGS LEVELS
    CUDA_ARRAY3D_DESCRIPTOR a = a3d(e, 2); CUmipmappedArray m = Exec::sent<CUmipmappedArray>();
    DT_CALL(e, r, cuMipmappedArrayCreate, O(&m), &a, static_cast<unsigned>(e.num(8)));
    e.out(r, e.rc, "out", U(m), 0, false, 1);
  } else if (op == "mip_level") {  // mip_level A M LEVEL
    CUarray a = Exec::sent<CUarray>();
    DT_CALL(e, r, cuMipmappedArrayGetLevel, O(&a), e.h<CUmipmappedArray>(2), static_cast<unsigned>(e.num(3)));
    is(U(a)); e.out(r, e.rc, "out", U(a), 0, false, 1);
  } else if (op == "array_desc3d") {
    CUDA_ARRAY3D_DESCRIPTOR d; memset(&d, 0xab, sizeof d);
    DT_CALL(e, r, cuArray3DGetDescriptor, &d, e.h<CUarray>(1));
    if (e.rc == 0) desc3(r, d);
  } else if (op == "array_desc") {
    CUDA_ARRAY_DESCRIPTOR d; memset(&d, 0xab, sizeof d);
    DT_CALL(e, r, cuArrayGetDescriptor, &d, e.h<CUarray>(1));
    if (e.rc == 0) { r.kv("W", static_cast<long long>(d.Width)); r.kv("H", static_cast<long long>(d.Height)); r.kv("fmt", d.Format); r.kv("ch", d.NumChannels); }
  } else if (op == "array_memreq" || op == "mip_memreq") {  // A|M: size and alignment on device 0
    CUDA_ARRAY_MEMORY_REQUIREMENTS mr{};
    if (op == "array_memreq") DT_CALL(e, r, cuArrayGetMemoryRequirements, &mr, e.h<CUarray>(1), 0);
    else DT_CALL(e, r, cuMipmappedArrayGetMemoryRequirements, &mr, e.h<CUmipmappedArray>(1), 0);
    if (e.rc == 0) { r.kv("size", static_cast<long long>(mr.size)); r.kv("align", static_cast<long long>(mr.alignment)); }
  } else if (op == "mip_destroy") { DT_CALL(e, r, cuMipmappedArrayDestroy, e.h<CUmipmappedArray>(1));
  } else if (op == "array_destroy") { DT_CALL(e, r, cuArrayDestroy, e.h<CUarray>(1));
  } else if (op == "array_put" || op == "array_check") {  // A WBYTES H SEED: a 2D copy in or out of level A
    size_t w = e.num(2), h = e.num(3); std::vector<unsigned char> b(w * h, 0xcd);
    if (op == "array_put") fill(b.data(), b.size(), e.num(4));
    CUDA_MEMCPY2D c = copy2d(e.h<CUarray>(1), b.data(), w, h, op == "array_put");
    DT_CALL(e, r, cuMemcpy2D, &c);
    if (e.rc == 0 && op == "array_check") r.ks("data", matches(b.data(), b.size(), e.num(4), 0) ? "match" : "mismatch");

  // ---- semaphores ----------------------------------------------------------------------------
  } else if (op == "sem_import") {  // sem_import S F TYPE FLAGS MOD (MOD: - resv0 zero nulldesc)
    FdArg f(e, 2, e.a(5));
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d = semdesc(e, 3, f.fd);
    CUexternalSemaphore s = Exec::sent<CUexternalSemaphore>();
    DT_CALL(e, r, cuImportExternalSemaphore, O(&s), nulldesc(5) ? nullptr : &d);
    f.report(r); is(U(s)); e.out(r, e.rc, "out", U(s), 0, false, 1);
  } else if (op == "sem_destroy") { DT_CALL(e, r, cuDestroyExternalSemaphore, e.h<CUexternalSemaphore>(1));
  } else if (op == "sem_signal") {
    SemArgs s(e); DT_CALL(e, r, cuSignalExternalSemaphoresAsync, s.sems(), s.sig(), s.n, e.h<CUstream>(5));
  } else if (op == "sem_wait") {
    SemArgs s(e); DT_CALL(e, r, cuWaitExternalSemaphoresAsync, s.sems(), s.wait(), s.n, e.h<CUstream>(5));

  // ---- the runtime's twins (cudaError_t codes) -----------------------------------------------
  } else if (op == "rt_ext_import") {  // rt_ext_import X F TYPE SIZE FLAGS MOD
    auto f = rt<int (*)(void**, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC*)>(e, r, "cudaImportExternalMemory");
    if (!f) return true;
    FdArg fa(e, 2, e.a(6));
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = memdesc(e, 3, fa.fd);
    void* x = Exec::sent<void*>();
    e.RC(r, f(O(&x), nulldesc(6) ? nullptr : &d));
    fa.report(r); is(U(x)); e.out(r, e.rc, "out", U(x), 0, false, 1);
  } else if (op == "rt_ext_map") {  // rt_ext_map P X OFF SIZE FLAGS MOD
    auto f = rt<int (*)(void**, void*, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC*)>(e, r, "cudaExternalMemoryGetMappedBuffer");
    if (!f) return true;
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b = bufdesc(e, 3);
    void* p = Exec::sent<void*>();
    e.RC(r, f(O(&p), e.h<void*>(2), nulldesc(6) ? nullptr : &b));
    if (e.rc == 0 && p) place(e, r, U(p));
    e.out(r, e.rc, "out", U(p), b.size, true, 1);
  } else if (op == "rt_ext_destroy" || op == "rt_sem_destroy" || op == "rt_mip_free") {
    const char* n = op == "rt_ext_destroy" ? "cudaDestroyExternalMemory" : op == "rt_sem_destroy" ? "cudaDestroyExternalSemaphore" : "cudaFreeMipmappedArray";
    if (auto f = rt<int (*)(void*)>(e, r, n)) e.RC(r, f(e.h<void*>(1)));
  } else if (op == "rt_ext_mip") {  // rt_ext_mip M X OFF W H D LEVELS MOD: RGBA8 unsigned (MOD: - resv0 nulldesc)
    auto f = rt<int (*)(void**, void*, const RtMipDesc*)>(e, r, "cudaExternalMemoryGetMappedMipmappedArray");
    if (!f) return true;
    RtMipDesc md{};
    md.offset = e.num(3); md.fmt = {8, 8, 8, 8, 1 /* cudaChannelFormatKindUnsigned */};
    md.extent = {e.num(4), e.num(5), e.num(6)}; md.numLevels = static_cast<unsigned>(e.num(7));
    mod_resv(e.a(8), md);
    void* m = Exec::sent<void*>();
    e.RC(r, f(O(&m), e.h<void*>(2), nulldesc(8) ? nullptr : &md));
    e.out(r, e.rc, "out", U(m), 0, false, 1);
  } else if (op == "rt_mip_level") {  // rt_mip_level A M LEVEL
    auto f = rt<int (*)(void**, void*, unsigned)>(e, r, "cudaGetMipmappedArrayLevel");
    if (!f) return true;
    void* a = Exec::sent<void*>();
    e.RC(r, f(O(&a), e.h<void*>(2), static_cast<unsigned>(e.num(3))));
    e.out(r, e.rc, "out", U(a), 0, false, 1);
  } else if (op == "rt_sem_import") {  // rt_sem_import S F TYPE FLAGS MOD
    auto f = rt<int (*)(void**, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC*)>(e, r, "cudaImportExternalSemaphore");
    if (!f) return true;
    FdArg fa(e, 2, e.a(5));
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d = semdesc(e, 3, fa.fd);
    void* s = Exec::sent<void*>();
    e.RC(r, f(O(&s), nulldesc(5) ? nullptr : &d));
    fa.report(r); is(U(s)); e.out(r, e.rc, "out", U(s), 0, false, 1);
  } else if (op == "rt_sem_signal") {  // the same arguments as sem_signal
    auto f = rt<int (*)(void* const*, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS*, unsigned, void*)>(
        e, r, "cudaSignalExternalSemaphoresAsync_v2", "cudaSignalExternalSemaphoresAsync");
    if (!f) return true;
    SemArgs s(e); e.RC(r, f(reinterpret_cast<void* const*>(s.sems()), s.sig(), s.n, e.h<void*>(5)));
  } else if (op == "rt_sem_wait") {
    auto f = rt<int (*)(void* const*, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS*, unsigned, void*)>(
        e, r, "cudaWaitExternalSemaphoresAsync_v2", "cudaWaitExternalSemaphoresAsync");
    if (!f) return true;
    SemArgs s(e); e.RC(r, f(reinterpret_cast<void* const*>(s.sems()), s.wait(), s.n, e.h<void*>(5)));
  } else if (op == "rt_ext_ptr_attrs") {  // rt_ext_ptr_attrs P OFF: cudaPointerGetAttributes
    struct { int type, device; void* dp; void* hp; long reserved[8]; } a;
    memset(&a, 0xab, sizeof a);
    auto f = rt<int (*)(void*, const void*)>(e, r, "cudaPointerGetAttributes");
    if (!f) return true;
    e.RC(r, f(&a, reinterpret_cast<void*>(e.ptr(1))));
    if (e.rc == 0) { r.kv("type", a.type); r.kv("device", a.device); r.ks("dptr", e.nptr(U(a.dp))); r.ks("hptr", e.nptr(U(a.hp))); }
  } else if (op == "rt_ext_last_error") {
    if (auto f = rt<int (*)()>(e, r, "cudaGetLastError")) e.RC(r, f());
  } else {
    return false;
  }
  // Frees the core executor does not know of: the runner no longer touches those slots.
  if (op == "mip_destroy" || op == "rt_mip_free" || op == "array_destroy") e.frees(e.a(1));
  return true;
}

}  // namespace difftest
