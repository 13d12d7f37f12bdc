// difftest ops of the ipc family, for the probe cases in tests/probe/cases/ipc*.cases
// (docs/probe.md). Each op: its tokens in e.t (t[0] the name), the call through DT_CALL or the
// Api table, what it records in r. Returns false for an op it does not know.
// Most take a 64-byte buffer where the driver may write a fabric handle, "null" for a NULL
// argument, and record relations (slot names, same/different), never addresses or fd numbers.
#pragma once
#include <setjmp.h>

#include <atomic>

namespace difftest {

namespace ipcops {
inline std::atomic<int> gate_open{0};
inline void CUDA_CB gate_fn(void*) {  // a stream blocked until ipc_gate_open (20 s at most)
  for (int i = 0; i < 20000 && !gate_open.load(); ++i) usleep(1000);
}
inline sigjmp_buf jb;
inline void on_fault(int) { siglongjmp(jb, 1); }
// The runtime's entries, declared here (cudaError_t is an int, handles are the driver's types).
using RtPoolExport = int (*)(void*, CUmemoryPool, int, unsigned long long);
using RtPoolImport = int (*)(CUmemoryPool*, void*, int, unsigned long long);
using RtExportPtr = int (*)(CUmemPoolPtrExportData*, void*);
using RtImportPtr = int (*)(void**, CUmemoryPool, CUmemPoolPtrExportData*);
using RtIpcGet = int (*)(CUipcMemHandle*, void*);
using RtIpcOpen = int (*)(void**, CUipcMemHandle, unsigned);
using RtIpcClose = int (*)(void*);
using RtEvGet = int (*)(CUipcEventHandle*, CUevent);
using RtEvOpen = int (*)(CUevent*, CUipcEventHandle);
using RtEvCreate = int (*)(CUevent*, unsigned);
}  // namespace ipcops

inline bool ops_ipc(Exec& e, Rec& r) {
  const std::string& op = e.t[0];
  auto U = [](auto v) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v)); };
  auto isnull = [&](size_t k) { return e.a(k) == "null"; };
  auto pool = [&](size_t k) { return e.h<CUmemoryPool>(k); };
  auto ht = [&](size_t k) { return static_cast<CUmemAllocationHandleType>(e.num(k)); };
  auto setblob = [&](size_t k, const void* b) {
    e.def(e.a(k), 0, 0, false);
    auto* c = static_cast<const unsigned char*>(b);
    e.slots[e.a(k)].blob.assign(c, c + 64);
  };
  auto getblob = [&](size_t k, void* dst) {
    Slot* s = e.slot(k);
    if (s && s->blob.size() == 64) memcpy(dst, s->blob.data(), 64);
  };
  // An exported handle in a 64-byte buffer filled with 0x5a: an fd slot for POSIX, a blob else.
  auto exported = [&](const unsigned char* b, CUmemAllocationHandleType t) {
    if (e.rc != 0) {
      bool touched = false;
      for (int i = 0; i < 64; ++i) touched |= b[i] != 0x5a;
      r.ks("out", touched ? "set" : "S");
      return;
    }
    if (t == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
      int fd; memcpy(&fd, b, sizeof fd);
      e.def(e.a(1), 0, 0, false); e.slots[e.a(1)].fd = fd;
    } else {
      setblob(1, b);
    }
  };
  // The handle argument of an import: a blob slot's bytes for fabric, else an fd slot or number.
  auto handle_arg = [&](size_t k, CUmemAllocationHandleType t, unsigned char* buf, int& fd) -> void* {
    fd = e.fdof(k);
    if (isnull(k)) return nullptr;
    if (t == CU_MEM_HANDLE_TYPE_FABRIC) { memset(buf, 0, 64); getblob(k, buf); return buf; }
    return reinterpret_cast<void*>(static_cast<intptr_t>(fd));
  };
  auto fdlive = [&](int fd, const struct stat& st) { r.kv("fdlive", same_file(fd, st)); };

  // ---- relations and buffers -------------------------------------------------------------
  if (op == "ipc_same") {  // ipc_same A B: whether two slots hold the same handle or address
    e.RC(r, 0);
    r.ks("same", e.val(1) == e.val(2) ? "yes" : "no");
  } else if (op == "ipc_blob") {  // ipc_blob K zero|garbage|copy SRC|flip SRC IDX
    unsigned char b[64] = {};
    const std::string& m = e.a(2);
    if (m == "garbage") for (int i = 0; i < 64; ++i) b[i] = static_cast<unsigned char>(i * 37 + 11);
    if (m == "copy" || m == "flip") getblob(3, b);
    if (m == "flip") b[e.num(4) & 63] ^= 0xff;
    e.RC(r, 0);
    setblob(1, b);
  } else if (op == "ipc_blob_cmp") {  // ipc_blob_cmp K1 K2...: identical, or the bytes K1 differs in
    Slot* a = e.slot(1);
    std::string d(64, '0');
    for (size_t k = 2; k < e.t.size(); ++k) {
      Slot* b = e.slot(k);
      if (!a || !b || a->blob.size() != 64 || b->blob.size() != 64) { e.RC(r, 0); r.ks("cmp", "noblob"); return true; }
      for (int i = 0; i < 64; ++i) if (a->blob[i] != b->blob[i]) d[i] = '1';
    }
    e.RC(r, 0);
    r.ks("cmp", d == std::string(64, '0') ? "identical" : d);
  } else if (op == "ipc_blob_mask") {  // ipc_blob_mask K...: the bytes nonzero in any of them
    std::string m(64, '0');
    for (size_t k = 1; k < e.t.size(); ++k)
      if (Slot* s = e.slot(k); s && s->blob.size() == 64)
        for (int i = 0; i < 64; ++i) if (s->blob[i]) m[i] = '1';
    e.RC(r, 0);
    r.ks("nonzero", m);
  } else if (op == "ipc_delta_put") {  // ipc_delta_put K A B: B-A into blob K (for the peer)
    unsigned char b[64] = {};
    long long d = static_cast<long long>(e.val(3) - e.val(2));
    memcpy(b, &d, sizeof d);
    e.RC(r, 0);
    setblob(1, b);
  } else if (op == "ipc_delta_cmp") {  // ipc_delta_cmp K A B: is B-A here the delta K carries
    unsigned char b[64] = {};
    getblob(1, b);
    long long d; memcpy(&d, b, sizeof d);
    e.RC(r, 0);
    r.ks("delta", static_cast<long long>(e.val(3) - e.val(2)) == d ? "same" : "different");
  // ---- descriptors -------------------------------------------------------------------------
  } else if (op == "ipc_fd_info") {  // ipc_fd_info F: close-on-exec, file type, access mode, target
    int fd = e.fdof(1);
    struct stat st{};
    if (fd < 0 || fstat(fd, &st) != 0) { e.RC(r, 0); r.ks("fd", "closed"); return true; }
    e.RC(r, 0);
    int fl = fcntl(fd, F_GETFL), fdf = fcntl(fd, F_GETFD);
    r.ks("cloexec", fdf & FD_CLOEXEC ? "set" : "clear");
    r.ks("type", S_ISCHR(st.st_mode) ? "chr" : S_ISREG(st.st_mode) ? "reg" : S_ISSOCK(st.st_mode) ? "sock"
                 : S_ISFIFO(st.st_mode) ? "fifo" : S_ISDIR(st.st_mode) ? "dir" : "other");
    r.ks("mode", (fl & O_ACCMODE) == O_RDWR ? "rdwr" : (fl & O_ACCMODE) == O_WRONLY ? "wronly" : "rdonly");
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    std::string tgt = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    size_t cut = tgt.find_first_of("0123456789");  // pids, inode numbers, ids: cut back to a separator
    if (cut != std::string::npos) {
      tgt = tgt.substr(0, cut);
      size_t sep = tgt.find_last_of(":.-_["), sl = tgt.find_last_of('/');
      if (sep != std::string::npos && (sl == std::string::npos || sep > sl)) tgt = tgt.substr(0, sep + 1);
      tgt += "*";
    }
    for (char& c : tgt) if (c == '"' || c == ',') c = '_';
    r.ks("target", tgt);
  } else if (op == "ipc_fd_cmp") {  // ipc_fd_cmp F1 F2: same descriptor number? same file?
    int a = e.fdof(1), b = e.fdof(2);
    struct stat x{}, y{};
    e.RC(r, 0);
    r.ks("fd", a == b ? "same" : "different");
    r.ks("file", fstat(a, &x) || fstat(b, &y) ? "unknown" : x.st_dev == y.st_dev && x.st_ino == y.st_ino ? "same" : "different");
  } else if (op == "ipc_fd_close") {  // ipc_fd_close F: the process closes its descriptor
    int fd = e.fdof(1);
    e.RC(r, fd >= 0 && close(fd) == 0 ? 0 : -1);
  } else if (op == "ipc_peer_exit") {  // the peer process exits, with whatever it holds
    e.stop_peer();
    e.RC(r, 0);
  // ---- pools -------------------------------------------------------------------------------
  } else if (op == "ipc_pool_export") {  // ipc_pool_export F|null P HT FLAGS
    alignas(8) unsigned char b[64]; memset(b, 0x5a, 64);
    DT_CALL(e, r, cuMemPoolExportToShareableHandle, isnull(1) ? nullptr : b, pool(2), ht(3), e.num(4));
    if (!isnull(1)) exported(b, ht(3));
  } else if (op == "ipc_pool_import") {  // ipc_pool_import P|null F|K|NUM|null HT FLAGS
    unsigned char buf[64]; int fd; void* hnd = handle_arg(2, ht(3), buf, fd);
    struct stat st{}; fstat(fd, &st);
    CUmemoryPool p = Exec::sent<CUmemoryPool>();
    DT_CALL(e, r, cuMemPoolImportFromShareableHandle, isnull(1) ? nullptr : &p, hnd, ht(3), e.num(4));
    if (ht(3) != CU_MEM_HANDLE_TYPE_FABRIC) fdlive(fd, st);
    if (!isnull(1)) e.out(r, e.rc, "out", U(p), 0, false, 1);
  } else if (op == "ipc_export_ptr") {  // ipc_export_ptr K|null P OFF
    alignas(8) unsigned char b[64]; memset(b, 0x5a, 64);
    DT_CALL(e, r, cuMemPoolExportPointer, isnull(1) ? nullptr : reinterpret_cast<CUmemPoolPtrExportData*>(b), e.ptr(2));
    if (!isnull(1) && e.rc == 0) setblob(1, b);
  } else if (op == "ipc_import_ptr") {  // ipc_import_ptr Q|null POOL K|null SIZE
    CUmemPoolPtrExportData d{}; getblob(3, &d);
    CUdeviceptr p = kSentinel;
    DT_CALL(e, r, cuMemPoolImportPointer, isnull(1) ? nullptr : &p, pool(2), isnull(3) ? nullptr : &d);
    if (!isnull(1)) e.out(r, e.rc, "out", p, e.num(4), true, 1);
  } else if (op == "ipc_rt_pool_export") {  // ipc_rt_pool_export F P HT FLAGS (the runtime)
    auto f = reinterpret_cast<ipcops::RtPoolExport>(e.api.rtsym("cudaMemPoolExportToShareableHandle"));
    if (!f) { r.ks("rt", "missing"); return true; }
    alignas(8) unsigned char b[64]; memset(b, 0x5a, 64);
    e.RC(r, f(b, pool(2), static_cast<int>(e.num(3)), e.num(4)));
    exported(b, ht(3));
  } else if (op == "ipc_rt_pool_import") {  // ipc_rt_pool_import P F HT
    auto f = reinterpret_cast<ipcops::RtPoolImport>(e.api.rtsym("cudaMemPoolImportFromShareableHandle"));
    if (!f) { r.ks("rt", "missing"); return true; }
    unsigned char buf[64]; int fd; void* hnd = handle_arg(2, ht(3), buf, fd);
    CUmemoryPool p = Exec::sent<CUmemoryPool>();
    e.RC(r, f(&p, hnd, static_cast<int>(e.num(3)), 0));
    e.out(r, e.rc, "out", U(p), 0, false, 1);
  } else if (op == "ipc_rt_export_ptr") {  // ipc_rt_export_ptr K P OFF
    auto f = reinterpret_cast<ipcops::RtExportPtr>(e.api.rtsym("cudaMemPoolExportPointer"));
    if (!f) { r.ks("rt", "missing"); return true; }
    alignas(8) unsigned char b[64]; memset(b, 0x5a, 64);
    e.RC(r, f(reinterpret_cast<CUmemPoolPtrExportData*>(b), reinterpret_cast<void*>(e.ptr(2))));
    if (e.rc == 0) setblob(1, b);
  } else if (op == "ipc_rt_import_ptr") {  // ipc_rt_import_ptr Q POOL K SIZE
    auto f = reinterpret_cast<ipcops::RtImportPtr>(e.api.rtsym("cudaMemPoolImportPointer"));
    if (!f) { r.ks("rt", "missing"); return true; }
    CUmemPoolPtrExportData d{}; getblob(3, &d);
    void* p = Exec::sent<void*>();
    e.RC(r, f(&p, pool(2), &d));
    e.out(r, e.rc, "out", U(p), e.num(4), true, 1);
  // ---- memory: copies through UVA, a guarded host read, attributes -------------------------
  } else if (op == "ipc_write_any") {  // ipc_write_any P OFF N PAT: cuMemcpy from a host buffer
    size_t n = e.num(3);
    std::vector<unsigned char> b(n); fill(b.data(), n, e.num(4));
    DT_CALL(e, r, cuMemcpy, e.ptr(1), static_cast<CUdeviceptr>(U(b.data())), n);
    if (e.rc == 0) r.kv("sync", e.api.cuCtxSynchronize());
  } else if (op == "ipc_read_any") {  // ipc_read_any P OFF N: cuMemcpy into a host buffer
    size_t n = e.num(3);
    std::vector<unsigned char> b(n, 0xcd);
    DT_CALL(e, r, cuMemcpy, static_cast<CUdeviceptr>(U(b.data())), e.ptr(1), n);
    if (e.rc == 0) e.checksum(r, b.data(), n);
  } else if (op == "ipc_host_read") {  // ipc_host_read P OFF N: the CPU reads it (a fault is recorded)
    size_t n = e.num(3);
    std::vector<unsigned char> b(n);
    struct sigaction sa{}, o1{}, o2{};
    sa.sa_handler = ipcops::on_fault;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &o1); sigaction(SIGBUS, &sa, &o2);
    volatile bool faulted = false;
    if (sigsetjmp(ipcops::jb, 1) == 0) {
      const volatile unsigned char* q = reinterpret_cast<const volatile unsigned char*>(e.ptr(1));
      for (size_t i = 0; i < n; ++i) b[i] = q[i];
    } else {
      faulted = true;
    }
    sigaction(SIGSEGV, &o1, nullptr); sigaction(SIGBUS, &o2, nullptr);
    e.RC(r, 0);
    if (faulted) r.ks("host", "segv"); else e.checksum(r, b.data(), n);
  } else if (op == "ipc_attrs") {  // ipc_attrs P OFF: the attributes the probe read, one call each
    static const int at[] = {2, 9, 8, 10, 14, 13, 18, 19, 11, 12, 17};
    e.RC(r, 0);
    for (int a : at) {
      unsigned long long v = 0;
      auto f = DT_FN(e, cuPointerGetAttribute);
      int rc = f ? f(&v, static_cast<CUpointer_attribute>(a), e.ptr(1)) : -1;
      std::string key = "a" + std::to_string(a);
      r.ks(key.c_str(), rc ? "e" + std::to_string(rc) : e.attrval(a, v));
    }
  } else if (op == "ipc_get_null") {  // ipc_get_null P OFF: cuIpcGetMemHandle(NULL, p)
    DT_CALL(e, r, cuIpcGetMemHandle, nullptr, e.ptr(1));
  } else if (op == "ipc_rt_ipc_get") {  // ipc_rt_ipc_get K P OFF
    auto f = reinterpret_cast<ipcops::RtIpcGet>(e.api.rtsym("cudaIpcGetMemHandle"));
    if (!f) { r.ks("rt", "missing"); return true; }
    CUipcMemHandle hd; memset(&hd, 0x5a, sizeof hd);
    e.RC(r, f(&hd, reinterpret_cast<void*>(e.ptr(2))));
    if (e.rc == 0) setblob(1, &hd);
  } else if (op == "ipc_rt_ipc_open") {  // ipc_rt_ipc_open Q K FLAGS SIZE
    auto f = reinterpret_cast<ipcops::RtIpcOpen>(e.api.rtsym("cudaIpcOpenMemHandle"));
    if (!f) { r.ks("rt", "missing"); return true; }
    CUipcMemHandle hd{}; getblob(2, &hd);
    void* p = Exec::sent<void*>();
    e.RC(r, f(&p, hd, static_cast<unsigned>(e.num(3))));
    e.out(r, e.rc, "out", U(p), e.num(4), true, 1);
  } else if (op == "ipc_rt_ipc_close") {  // ipc_rt_ipc_close Q
    auto f = reinterpret_cast<ipcops::RtIpcClose>(e.api.rtsym("cudaIpcCloseMemHandle"));
    if (!f) { r.ks("rt", "missing"); return true; }
    e.RC(r, f(reinterpret_cast<void*>(e.ptr(1))));
  // ---- events ------------------------------------------------------------------------------
  } else if (op == "ipc_gate_close") {  // ipc_gate_close S: S waits on the CPU until ipc_gate_open
    ipcops::gate_open = 0;
    DT_CALL(e, r, cuLaunchHostFunc, e.h<CUstream>(1), ipcops::gate_fn, nullptr);
  } else if (op == "ipc_gate_open") {
    ipcops::gate_open = 1;
    e.RC(r, 0);
  } else if (op == "ipc_event_elapsed") {  // ipc_event_elapsed E1 E2: the code only, never the time
    float ms = 0;
    DT_CALL(e, r, cuEventElapsedTime, &ms, e.h<CUevent>(1), e.h<CUevent>(2));
  } else if (op == "ipc_rt_event_create") {  // ipc_rt_event_create E FLAGS (cudaEventCreateWithFlags)
    auto f = reinterpret_cast<ipcops::RtEvCreate>(e.api.rtsym("cudaEventCreateWithFlags"));
    if (!f) { r.ks("rt", "missing"); return true; }
    CUevent ev = Exec::sent<CUevent>();
    e.RC(r, f(&ev, static_cast<unsigned>(e.num(2))));
    e.out(r, e.rc, "out", U(ev), 0, false, 1);
  } else if (op == "ipc_rt_ievent_get") {  // ipc_rt_ievent_get K E
    auto f = reinterpret_cast<ipcops::RtEvGet>(e.api.rtsym("cudaIpcGetEventHandle"));
    if (!f) { r.ks("rt", "missing"); return true; }
    CUipcEventHandle hd; memset(&hd, 0x5a, sizeof hd);
    e.RC(r, f(&hd, e.h<CUevent>(2)));
    if (e.rc == 0) setblob(1, &hd);
  } else if (op == "ipc_rt_ievent_open") {  // ipc_rt_ievent_open E K
    auto f = reinterpret_cast<ipcops::RtEvOpen>(e.api.rtsym("cudaIpcOpenEventHandle"));
    if (!f) { r.ks("rt", "missing"); return true; }
    CUipcEventHandle hd{}; getblob(2, &hd);
    CUevent ev = Exec::sent<CUevent>();
    e.RC(r, f(&ev, hd));
    e.out(r, e.rc, "out", U(ev), 0, false, 1);
  // ---- VMM with every argument ---------------------------------------------------------------
  } else if (op == "ipc_gran") {  // ipc_gran LOCTYPE LOCID HT OPTION (numbers; "null" for no prop)
    CUmemAllocationProp pr{}; pr.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    pr.location.type = static_cast<CUmemLocationType>(e.num(1)); pr.location.id = static_cast<int>(e.num(2));
    pr.requestedHandleTypes = ht(3);
    size_t g = kSentinel;
    DT_CALL(e, r, cuMemGetAllocationGranularity, &g, isnull(1) ? nullptr : &pr, static_cast<CUmemAllocationGranularity_flags>(e.num(4)));
    r.ks("g", g == kSentinel ? "S" : std::to_string(g));
  } else if (op == "ipc_vmm_create") {  // ipc_vmm_create H SIZE LOC HT FLAGS RDMA COMP
    CUmemAllocationProp pr{}; pr.type = CU_MEM_ALLOCATION_TYPE_PINNED; pr.location = e.loc(3);
    pr.requestedHandleTypes = ht(4);
    pr.allocFlags.gpuDirectRDMACapable = static_cast<unsigned char>(e.num(6));
    pr.allocFlags.compressionType = static_cast<unsigned char>(e.num(7));
    CUmemGenericAllocationHandle hh = kSentinel;
    DT_CALL(e, r, cuMemCreate, &hh, e.num(2), &pr, e.num(5));
    e.out(r, e.rc, "out", hh, 0, false, 1);
  } else if (op == "ipc_vmm_props") {  // ipc_vmm_props H: every field the probe printed
    CUmemAllocationProp pr; memset(&pr, 0, sizeof pr);
    DT_CALL(e, r, cuMemGetAllocationPropertiesFromHandle, &pr, e.val(1));
    if (e.rc == 0) {
      r.kv("type", pr.type); r.kv("ht", pr.requestedHandleTypes); r.kv("lt", pr.location.type);
      r.kv("lid", pr.location.id); r.kv("rdma", pr.allocFlags.gpuDirectRDMACapable);
      r.kv("comp", pr.allocFlags.compressionType); r.kv("usage", pr.allocFlags.usage);
    }
  } else if (op == "ipc_va_reserve") {  // ipc_va_reserve V SIZE ALIGN HINT FLAGS
    CUdeviceptr p = kSentinel, hint = e.val(4);
    size_t align = e.num(3);
    DT_CALL(e, r, cuMemAddressReserve, &p, e.num(2), align, hint, e.num(5));
    if (e.rc == 0 && hint) r.ks("hint", p == hint ? "honored" : "ignored");
    if (e.rc == 0 && align) r.ks("aligned", p % align == 0 ? "yes" : "no");
    e.out(r, e.rc, "out", p, e.num(2), true, 1);
  } else if (op == "ipc_vmm_map") {  // ipc_vmm_map V OFF SIZE H HOFF FLAGS
    DT_CALL(e, r, cuMemMap, e.ptr(1), e.num(3), e.num(5), e.val(4), e.num(6));
  } else if (op == "ipc_vmm_set_access") {  // ipc_vmm_set_access V OFF SIZE LOC FLAGS COUNT|null
    CUmemAccessDesc d{}; d.location = e.loc(4); d.flags = static_cast<CUmemAccess_flags>(e.num(5));
    DT_CALL(e, r, cuMemSetAccess, e.ptr(1), e.num(3), isnull(6) ? nullptr : &d, isnull(6) ? 1 : e.num(6));
  } else if (op == "ipc_vmm_export") {  // ipc_vmm_export F H HT FLAGS
    alignas(8) unsigned char b[64]; memset(b, 0x5a, 64);
    DT_CALL(e, r, cuMemExportToShareableHandle, b, e.val(2), ht(3), e.num(4));
    exported(b, ht(3));
  } else if (op == "ipc_vmm_import") {  // ipc_vmm_import H F|K|NUM HT
    unsigned char buf[64]; int fd; void* hnd = handle_arg(2, ht(3), buf, fd);
    CUmemGenericAllocationHandle hh = kSentinel;
    DT_CALL(e, r, cuMemImportFromShareableHandle, &hh, hnd, ht(3));
    e.out(r, e.rc, "out", hh, 0, false, 1);
  // ---- devices -------------------------------------------------------------------------------
  } else if (op == "ipc_dev_ctx") {  // ipc_dev_ctx C DEV: device DEV's primary context, made current
    CUcontext c = nullptr;
    int rc = e.api.cuDevicePrimaryCtxRetain(&c, static_cast<CUdevice>(e.num(2)));
    if (rc == 0) { e.def(e.a(1), U(c), 0, false); rc = e.api.cuCtxSetCurrent(c); }
    e.RC(r, rc);
  } else if (op == "ipc_ctx_device") {  // the current context's device
    CUdevice d = -1;
    DT_CALL(e, r, cuCtxGetDevice, &d);
    if (e.rc == 0) r.kv("dev", d);
  } else {
    return false;
  }
  return true;
}

}  // namespace difftest
