// difftest: executes one op line of a sequence on whichever libcuda.so.1 was loaded and records
// what the driver answered, normalized (pointers and handles as slot names) so that the runs of
// two drivers compare line by line. Only <cuda.h> types: builds against NVIDIA's or our header.
#pragma once
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace difftest {

#define DT_STR2(x) #x
#define DT_STR(x) DT_STR2(x)
// A driver entry by its cuda.h name (versioned like the table below), looked up when used:
// DT_CALL(e, r, cuFoo, args...) records rc, or "missing" where the library lacks it.
#define DT_FN(e, n) reinterpret_cast<decltype(&::n)>((e).api.sym(DT_STR(n)))
#define DT_CALL(e, r, n, ...) \
  do { auto dt_f_ = DT_FN(e, n); if (!dt_f_) (r).ks("missing", DT_STR(n)); else (e).RC(r, dt_f_(__VA_ARGS__)); } while (0)
// cuda.h maps names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2): the member and the
// looked-up string both go through that mapping, so each entry binds the symbol binaries use.
#define DT_DRIVER(X) X(cuInit) X(cuDeviceGet) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) \
  X(cuCtxSetCurrent) X(cuCtxCreate) X(cuCtxDestroy) X(cuCtxSynchronize) X(cuDriverGetVersion) \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) X(cuStreamWaitEvent) \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) X(cuEventDestroy) \
  X(cuMemAlloc) X(cuMemFree) X(cuMemAllocHost) X(cuMemHostAlloc) X(cuMemFreeHost) \
  X(cuMemHostRegister) X(cuMemHostUnregister) X(cuMemGetInfo) X(cuMemGetAddressRange) \
  X(cuPointerGetAttribute) X(cuPointerGetAttributes) X(cuMemcpyHtoD) X(cuMemcpyDtoH) \
  X(cuMemcpyDtoD) X(cuMemcpy) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyAsync) \
  X(cuMemsetD8) X(cuMemsetD32) X(cuMemsetD8Async) X(cuMemPoolCreate) X(cuMemPoolDestroy) \
  X(cuMemPoolSetAttribute) X(cuMemPoolGetAttribute) X(cuMemPoolTrimTo) X(cuMemPoolSetAccess) \
  X(cuMemPoolGetAccess) X(cuDeviceGetDefaultMemPool) X(cuDeviceGetMemPool) X(cuDeviceSetMemPool) \
  X(cuMemGetDefaultMemPool) X(cuMemGetMemPool) X(cuMemSetMemPool) X(cuMemAllocAsync) \
  X(cuMemAllocFromPoolAsync) X(cuMemFreeAsync) X(cuMemGetAllocationGranularity) X(cuMemCreate) \
  X(cuMemRelease) X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemMap) X(cuMemUnmap) \
  X(cuMemSetAccess) X(cuMemGetAccess) X(cuMemRetainAllocationHandle) \
  X(cuMemGetAllocationPropertiesFromHandle) X(cuMemExportToShareableHandle) \
  X(cuMemImportFromShareableHandle) X(cuMemAllocManaged) X(cuStreamAttachMemAsync) X(cuMemAdvise) \
  X(cuMemPrefetchAsync) X(cuMemRangeGetAttribute) X(cuImportExternalMemory) \
  X(cuExternalMemoryGetMappedBuffer) X(cuDestroyExternalMemory) X(cuIpcGetMemHandle) \
  X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle) X(cuIpcGetEventHandle) X(cuIpcOpenEventHandle) \
  X(cuMemPoolExportToShareableHandle) X(cuMemPoolImportFromShareableHandle) \
  X(cuMemPoolExportPointer) X(cuMemPoolImportPointer)

struct Api {
#define DT_DECL(n) decltype(&::n) n = nullptr;
  DT_DRIVER(DT_DECL)
#undef DT_DECL
  // The runtime, declared here so that no cuda_runtime_api.h is needed (cudaError_t is an int).
  int (*cudaMalloc)(void**, size_t) = nullptr;
  int (*cudaFree)(void*) = nullptr;
  int (*cudaMallocHost)(void**, size_t) = nullptr;
  int (*cudaFreeHost)(void*) = nullptr;
  int (*cudaMallocManaged)(void**, size_t, unsigned) = nullptr;
  std::string lib, missing;
  void* rt = nullptr;
  void* drv = nullptr;
  // Entries the family op files (ops_*.hpp) call: looked up when used, nullptr if absent.
  void* sym(const char* n) { return drv ? dlsym(drv, n) : nullptr; }
  void* rtsym(const char* n) { return load_runtime() ? dlsym(rt, n) : nullptr; }

  // lib: "system" (the dynamic linker's libcuda.so.1: NVIDIA's driver) or a folder holding ours.
  bool load(const std::string& dir) {
    lib = dir;
    std::string p = dir == "system" ? "libcuda.so.1" : dir + "/libcuda.so.1";
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) { missing = dlerror(); return false; }
    drv = h;
#define DT_LOAD(n) n = reinterpret_cast<decltype(n)>(dlsym(h, DT_STR(n))); if (!n) missing += DT_STR(n) " ";
    DT_DRIVER(DT_LOAD)
#undef DT_LOAD
    return true;
  }
  bool load_runtime() {
    if (rt) return true;
    const char* names[] = {"libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13",
                           "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13"};
    if (lib != "system") rt = dlopen((lib + "/libcudart.so.13").c_str(), RTLD_NOW);
    for (const char* n : names) if (!rt && lib == "system") rt = dlopen(n, RTLD_NOW);
    if (!rt) return false;
    auto sym = [&](auto& f, const char* n) { f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(rt, n)); };
    sym(cudaMalloc, "cudaMalloc"); sym(cudaFree, "cudaFree"); sym(cudaMallocHost, "cudaMallocHost");
    sym(cudaFreeHost, "cudaFreeHost"); sym(cudaMallocManaged, "cudaMallocManaged");
    return cudaMalloc && cudaFree && cudaMallocHost && cudaFreeHost && cudaMallocManaged;
  }
};

inline uint64_t fnv(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}
inline void fill(unsigned char* p, size_t n, uint64_t pat) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(pat * 31 + i * 7 + (i >> 8));
}
inline std::string hex(uint64_t v) { char b[24]; snprintf(b, sizeof b, "0x%llx", (unsigned long long)v); return b; }

// One record: "k":v pairs. Values never hold quotes or commas, so a record splits on ','.
struct Rec {
  std::string s;
  void kv(const char* k, long long v) { s += (s.empty() ? "" : ",") + std::string("\"") + k + "\":" + std::to_string(v); }
  void ks(const char* k, const std::string& v) { s += (s.empty() ? "" : ",") + std::string("\"") + k + "\":\"" + v + "\""; }
};

constexpr uint64_t kSentinel = 0x5a5a5a5a5a5a5a5aull;
constexpr int kFdSentinel = 0x5a5a5a5a;

struct Slot {
  uint64_t v = 0, size = 0;
  bool ptr = false, pooled = false;
  int fd = -1;
  std::vector<unsigned char> blob;  // 64-byte IPC handles and pointer export data
};

class Exec {
 public:
  Api api;
  CUdevice dev = 0;
  std::string fault;  // test hook: an op name whose successful rc is reported as 999
  int peer_sock = -1;
  pid_t peer_pid = -1;

  // Loads the driver, initializes it and makes device 0's primary context current.
  std::string init(const std::string& lib) {
    Rec r;
    if (!api.load(lib)) { r.ks("load", "failed"); return r.s; }
    if (!api.missing.empty()) r.ks("missing", api.missing);
    int rc = api.cuInit(0);
    CUcontext c = nullptr;
    if (!rc) rc = api.cuDeviceGet(&dev, 0);
    if (!rc) rc = api.cuDevicePrimaryCtxRetain(&c, dev);
    if (!rc) rc = api.cuCtxSetCurrent(c);
    if (!rc) def("ctx0", reinterpret_cast<uint64_t>(c), 0, false);
    if (!rc) api.cuDeviceTotalMem(&total, dev);
    r.kv("rc", rc);
    return r.s;
  }

  std::string run(const std::string& line) {
    std::istringstream in(line);
    t.clear();
    for (std::string w; in >> w;) t.push_back(w);
    Rec r;
    if (t.empty()) return r.s;
    if (t[0] == "peer") return to_peer(line);
    exec(r);
    if (!fault.empty() && t[0] == fault && r.s.rfind("\"rc\":0", 0) == 0) r.s.replace(0, 6, "\"rc\":999");
    return r.s;
  }

  // The peer process: the same executor, driven over a SOCK_SEQPACKET socket. Each request
  // carries a line and optionally one fd and one 64-byte blob, stored under the names given.
  struct Msg { char line[400]; char fdname[32]; char blobname[32]; unsigned char blob[64]; int hasblob; };
  static int peer_main(int sock, const std::string& lib) {
    Exec ex;
    std::string hello = ex.init(lib);
    send(sock, hello.data(), hello.size(), MSG_NOSIGNAL);
    for (;;) {
      Msg m{};
      int fd = -1;
      ssize_t n = recv_msg(sock, m, fd);
      if (n <= 0 || !strcmp(m.line, "exit")) return 0;
      if (fd >= 0) { ex.slots[m.fdname].fd = fd; }
      if (m.hasblob) ex.slots[m.blobname].blob.assign(m.blob, m.blob + 64);
      std::string res = ex.run(m.line);
      send(sock, res.data(), res.size(), MSG_NOSIGNAL);
    }
  }
  void stop_peer() {
    if (peer_pid <= 0) return;
    Msg m{};
    strcpy(m.line, "exit");
    send(peer_sock, &m, sizeof m, MSG_NOSIGNAL);
    for (int i = 0; i < 500 && waitpid(peer_pid, nullptr, WNOHANG) == 0; ++i) usleep(10000);
    kill(peer_pid, SIGKILL);
    waitpid(peer_pid, nullptr, 0);
    peer_pid = -1;
  }

 // The family op files (ops_*.hpp) read the tokens and slots through these.
  std::vector<std::string> t;
  std::map<std::string, Slot> slots;
  std::vector<std::string> order;  // definition order, newest last: names resolve newest first
  std::map<uint64_t, std::string> unknown, ids;
  std::set<std::string> freed;  // slots freed with success: the runner no longer touches them
  std::vector<std::vector<unsigned char>> keep;  // buffers of asynchronous copies
  size_t total = 0;
  bool peer_dead = false;
  int rc = -1;  // the current op's result, once RC() recorded it
  bool stop = false;  // set by an op (need_devices) that ends the sequence here, on purpose
  void RC(Rec& r, int v) { rc = v; r.kv("rc", v); }

  void def(const std::string& n, uint64_t v, uint64_t size, bool ptr) {
    Slot& s = slots[n];
    s.v = v; s.size = size; s.ptr = ptr;
    order.push_back(n);
  }
  const std::string& a(size_t k) { static const std::string none = "0"; return k < t.size() ? t[k] : none; }
  uint64_t num(size_t k) {
    const std::string& s = a(k);
    if (s == "max") return UINT64_MAX;
    return strtoull(s.c_str(), nullptr, 0);
  }
  // A token that names a slot gives its value (also after the object died: stale handles);
  // "leg"/"pt" are the special streams, "bad" a wild pointer, a number itself, anything else 0.
  uint64_t val(size_t k) {
    const std::string& s = a(k);
    auto it = slots.find(s);
    if (it != slots.end()) return it->second.v;
    if (s == "leg") return 1;
    if (s == "pt") return 2;
    if (s == "bad") return 0x7ead0000beefull;
    if (!s.empty() && (isdigit(static_cast<unsigned char>(s[0])))) return strtoull(s.c_str(), nullptr, 0);
    return 0;
  }
  uint64_t ptr(size_t k) { return val(k) + num(k + 1); }  // slot, offset
  template <class T> static T sent() { return reinterpret_cast<T>(static_cast<uintptr_t>(kSentinel)); }
  template <class T> T h(size_t k) { return reinterpret_cast<T>(static_cast<uintptr_t>(val(k))); }
  Slot* slot(size_t k) { auto it = slots.find(a(k)); return it == slots.end() ? nullptr : &it->second; }
  int fdof(size_t k) { Slot* s = slot(k); return s ? s->fd : static_cast<int>(num(k)); }

  // loc tokens: d<N> device N, h host, n<N> host NUMA N, c host NUMA current, r<N> raw type N
  // (id 0), anything else (x) the invalid type.
  CUmemLocation loc(size_t k) { return loc_token(a(k)); }
  static CUmemLocation loc_token(const std::string& s) {
    CUmemLocation l{};
    int id = s.size() > 1 ? atoi(s.c_str() + 1) : 0;
    switch (s.empty() ? 'x' : s[0]) {
      case 'd': l.type = CU_MEM_LOCATION_TYPE_DEVICE; l.id = id; break;
      case 'h': l.type = CU_MEM_LOCATION_TYPE_HOST; l.id = id; break;
      case 'n': l.type = CU_MEM_LOCATION_TYPE_HOST_NUMA; l.id = id; break;
      case 'c': l.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT; l.id = id; break;
      case 'r': l.type = static_cast<CUmemLocationType>(id); l.id = 0; break;
      default: l.type = CU_MEM_LOCATION_TYPE_INVALID; l.id = id;
    }
    return l;
  }

  std::string nptr(uint64_t p) {
    if (!p) return "0";
    if (p == kSentinel) return "S";
    // A base first, then inside, then one past the end: adjacent mappings stay unambiguous.
    for (int pass = 0; pass < 3; ++pass)
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Slot& s = slots[*it];
        if (s.ptr && s.v && (pass == 0 ? p == s.v : pass == 1 ? p > s.v && p < s.v + s.size : p == s.v + s.size))
          return p == s.v ? *it : *it + "+" + hex(p - s.v);
      }
    return "ext";
  }
  // A new pool allocation relative to the earlier ones (placement within a pool is measured).
  std::string npool(uint64_t p) {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Slot& s = slots[*it];
      if (!s.pooled || p < s.v || p - s.v >= (1ull << 30)) continue;
      return p == s.v ? *it : *it + "+" + hex(p - s.v);
    }
    return "new";
  }
  std::string nh(uint64_t v) {
    if (!v) return "0";
    if (v == kSentinel) return "S";
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (!slots[*it].ptr && slots[*it].v == v) return *it;
    auto [it, fresh] = unknown.emplace(v, "u" + std::to_string(unknown.size() + 1));
    return it->second;
  }
  std::string nid(uint64_t v) {  // buffer / block ids: only their identity matters
    if (!v) return "0";
    auto [it, fresh] = ids.emplace(v, "id" + std::to_string(ids.size() + 1));
    return it->second;
  }
  // An output slot: on success the new slot, on failure whether the driver touched the output.
  void out(Rec& r, int rc, const char* key, uint64_t v, uint64_t size, bool p, size_t name) {
    if (rc == 0) { def(a(name), v, size, p); if (!v) r.ks(key, "0"); }  // success with a NULL result
    else r.ks(key, v == kSentinel ? "S" : v == 0 ? "0" : "set");
  }
  // Written width and value of a 16-byte output filled with 0xab before the call.
  static void widthval(const unsigned char* b, int& w, uint64_t& v) {
    w = 0;
    for (int i = 0; i < 16; ++i) if (b[i] != 0xab) w = i + 1;
    v = 0;
    memcpy(&v, b, w < 8 ? w : 8);
  }
  std::string attrval(int attr, uint64_t v) {
    switch (attr) {
      case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return nh(v);
      case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: return nptr(v);
      case CU_POINTER_ATTRIBUTE_BUFFER_ID: case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return nid(v);
      default: return std::to_string(v);
    }
  }
  void checksum(Rec& r, const void* p, size_t n) { r.ks("sum", hex(fnv(p, n))); }

  std::string to_peer(const std::string& line);
  static ssize_t recv_msg(int sock, Msg& m, int& fd);
  void exec(Rec& r);
  void frees(const std::string& name) { if (rc == 0) freed.insert(name); }
};

// The op families added with the probe cases (tests/probe/cases): each returns whether it knew
// the op. Defined in ops_*.hpp, included at the end of this file.
bool family_ops(Exec& e, Rec& r);

inline ssize_t Exec::recv_msg(int sock, Msg& m, int& fd) {
  char cbuf[CMSG_SPACE(sizeof(int))];
  iovec io{&m, sizeof m};
  msghdr mh{};
  mh.msg_iov = &io; mh.msg_iovlen = 1; mh.msg_control = cbuf; mh.msg_controllen = sizeof cbuf;
  ssize_t n = recvmsg(sock, &mh, 0);
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  if (n > 0 && c && c->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return n;
}

// "peer OP ARGS": the second process (this binary re-executed) runs OP ARGS; the first fd slot
// and the first blob slot named in ARGS travel with it (SCM_RIGHTS and bytes).
inline std::string Exec::to_peer(const std::string& line) {
  Rec r;
  if (peer_dead) { r.ks("peer", "dead"); return r.s; }
  if (peer_pid < 0) {
    int sv[2];
    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
    peer_pid = fork();
    if (peer_pid == 0) {
      close(sv[0]);
      std::string fd = std::to_string(sv[1]);
      execl("/proc/self/exe", "difftest", "--peer", fd.c_str(), api.lib.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(sv[1]);
    peer_sock = sv[0];
    char hello[512];
    pollfd pf{peer_sock, POLLIN, 0};
    ssize_t n = poll(&pf, 1, 30000) > 0 ? recv(peer_sock, hello, sizeof hello - 1, 0) : -1;
    if (n <= 0) { peer_dead = true; r.ks("peer", "nostart"); return r.s; }
    hello[n] = 0;
    if (strcmp(hello, "\"rc\":0")) r.ks("peer_init", hello[0] == '"' ? "failed" : hello);
  }
  Msg m{};
  snprintf(m.line, sizeof m.line, "%s", line.c_str() + 5);
  int fd = -1;
  for (size_t k = 2; k < t.size(); ++k) {
    auto it = slots.find(t[k]);
    if (it == slots.end()) continue;
    if (fd < 0 && it->second.fd >= 0) { fd = it->second.fd; snprintf(m.fdname, sizeof m.fdname, "%s", t[k].c_str()); }
    if (!m.hasblob && it->second.blob.size() == 64) {
      memcpy(m.blob, it->second.blob.data(), 64); m.hasblob = 1;
      snprintf(m.blobname, sizeof m.blobname, "%s", t[k].c_str());
    }
  }
  char cbuf[CMSG_SPACE(sizeof(int))] = {};
  iovec io{&m, sizeof m};
  msghdr mh{};
  mh.msg_iov = &io; mh.msg_iovlen = 1;
  if (fd >= 0) {
    mh.msg_control = cbuf; mh.msg_controllen = sizeof cbuf;
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS; c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  char res[4096];
  pollfd pf{peer_sock, POLLIN, 0};
  ssize_t n = -1;
  if (sendmsg(peer_sock, &mh, MSG_NOSIGNAL) > 0 && poll(&pf, 1, 20000) > 0) n = recv(peer_sock, res, sizeof res - 1, 0);
  if (n < 0) { peer_dead = true; kill(peer_pid, SIGKILL); r.ks("peer", "timeout"); return r.s; }
  if (n == 0) {
    int st = 0;
    waitpid(peer_pid, &st, 0);
    peer_pid = -1; peer_dead = true;
    r.ks("peer", WIFSIGNALED(st) ? "crash SIG" + std::to_string(WTERMSIG(st)) : "exit " + std::to_string(WEXITSTATUS(st)));
    return r.s;
  }
  res[n] = 0;
  return res;
}

inline bool same_file(int fd, const struct stat& before) {
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_ino == before.st_ino && st.st_dev == before.st_dev;
}

// Every op: its tokens (t[0] the name), the driver call(s), and what is recorded. Arguments
// that name slots are resolved by val(); an output slot token "null" passes a NULL output.
inline void Exec::exec(Rec& r) {
  const std::string& op = t[0];
  rc = -1;
  auto RC = [&](int v) { this->RC(r, v); };
  auto O = [&](auto* p) { return a(1) == "null" ? nullptr : p; };
  auto U = [](auto v) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v)); };
  auto pool = [&](size_t k) { return h<CUmemoryPool>(k); };
  auto strm = [&](size_t k) { return h<CUstream>(k); };
  auto blob = [&](size_t k, void* dst) { Slot* s = slot(k); if (s && s->blob.size() == 64) memcpy(dst, s->blob.data(), 64); };
  auto setblob = [&](const void* b) { if (rc == 0) { def(a(1), 0, 0, false); auto* c = static_cast<const unsigned char*>(b); slots[a(1)].blob.assign(c, c + 64); } };
  auto setfd = [&](int fd) {
    if (rc == 0) { def(a(1), 0, 0, false); slots[a(1)].fd = fd; }
    else r.ks("out", fd == kFdSentinel ? "S" : "set");
  };
  auto is = [&](uint64_t v) { if (rc == 0) r.ks("is", nh(v)); };
  auto near = [&](uint64_t v) { if (rc == 0) r.ks("near", npool(v)); };
  auto pooled = [&]() { if (rc == 0) slots[a(1)].pooled = true; };
  auto attrbuf = [&](unsigned char* b, int attr) {
    int w; uint64_t v; widthval(b, w, v);
    r.kv("w", w);
    if (w) r.ks("v", attrval(attr, v));
  };
  auto rt = [&]() { if (api.load_runtime()) return true; r.ks("rt", "missing"); return false; };
  size_t n = 0;

  if (op == "ctx_create") {
    CUcontext c = sent<CUcontext>(); RC(api.cuCtxCreate(O(&c), nullptr, static_cast<unsigned>(num(2)), dev)); out(r, rc, "out", U(c), 0, false, 1);
  } else if (op == "ctx_set") { RC(api.cuCtxSetCurrent(h<CUcontext>(1)));
  } else if (op == "ctx_destroy") { RC(api.cuCtxDestroy(h<CUcontext>(1)));
  } else if (op == "ctx_sync") { RC(api.cuCtxSynchronize());
  } else if (op == "stream_create") {
    CUstream s = sent<CUstream>(); RC(api.cuStreamCreate(O(&s), static_cast<unsigned>(num(2)))); out(r, rc, "out", U(s), 0, false, 1);
  } else if (op == "stream_destroy") { RC(api.cuStreamDestroy(strm(1)));
  } else if (op == "stream_sync") { RC(api.cuStreamSynchronize(strm(1)));
  } else if (op == "stream_query") { RC(api.cuStreamQuery(strm(1)));
  } else if (op == "stream_wait") { RC(api.cuStreamWaitEvent(strm(1), h<CUevent>(2), 0));
  } else if (op == "event_create") {
    CUevent e = sent<CUevent>(); RC(api.cuEventCreate(O(&e), static_cast<unsigned>(num(2)))); out(r, rc, "out", U(e), 0, false, 1);
  } else if (op == "event_record") { RC(api.cuEventRecord(h<CUevent>(1), strm(2)));
  } else if (op == "event_sync") { RC(api.cuEventSynchronize(h<CUevent>(1)));
  } else if (op == "event_query") { RC(api.cuEventQuery(h<CUevent>(1)));
  } else if (op == "event_destroy") { RC(api.cuEventDestroy(h<CUevent>(1)));
  // Legacy memory.
  } else if (op == "mem_alloc") {
    CUdeviceptr p = kSentinel; RC(api.cuMemAlloc(O(&p), num(2))); out(r, rc, "out", p, num(2), true, 1);
  } else if (op == "mem_free") { RC(api.cuMemFree(ptr(1)));
  } else if (op == "mem_alloc_host") {
    void* p = sent<void*>(); RC(api.cuMemAllocHost(O(&p), num(2))); out(r, rc, "out", U(p), num(2), true, 1);
  } else if (op == "mem_host_alloc") {
    void* p = sent<void*>(); RC(api.cuMemHostAlloc(O(&p), num(2), static_cast<unsigned>(num(3)))); out(r, rc, "out", U(p), num(2), true, 1);
  } else if (op == "mem_free_host") { RC(api.cuMemFreeHost(reinterpret_cast<void*>(ptr(1))));
  } else if (op == "malloc") {  // pageable host memory the runner owns (page-aligned)
    void* p = mmap(nullptr, num(2) ? num(2) : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RC(p == MAP_FAILED ? -1 : 0); if (!rc) def(a(1), U(p), num(2), true);
  } else if (op == "host_register") { RC(api.cuMemHostRegister(reinterpret_cast<void*>(ptr(1)), num(3), static_cast<unsigned>(num(4))));
  } else if (op == "host_unregister") { RC(api.cuMemHostUnregister(reinterpret_cast<void*>(ptr(1))));
  } else if (op == "get_info") {
    size_t f = kSentinel, tt = kSentinel; int m = static_cast<int>(num(1));
    RC(api.cuMemGetInfo(m & 1 ? nullptr : &f, m & 2 ? nullptr : &tt));
    if (!(m & 2)) r.ks("total", tt == total ? "dev" : tt == kSentinel ? "S" : std::to_string(tt));
    if (!(m & 1)) r.ks("free", f == kSentinel ? "S" : f <= total ? "le" : "gt");
  } else if (op == "addr_range") {
    CUdeviceptr b = kSentinel; size_t s = kSentinel; int m = static_cast<int>(num(3));
    RC(api.cuMemGetAddressRange(m & 1 ? nullptr : &b, m & 2 ? nullptr : &s, ptr(1)));
    if (!(m & 1)) r.ks("base", nptr(b));
    if (!(m & 2)) r.ks("size", s == kSentinel ? "S" : std::to_string(s));
  } else if (op == "ptr_attr") {
    unsigned char b[16]; memset(b, 0xab, 16); int at = static_cast<int>(num(3));
    RC(api.cuPointerGetAttribute(a(4) == "null" ? nullptr : b, static_cast<CUpointer_attribute>(at), ptr(1)));
    attrbuf(b, at);
  } else if (op == "ptr_attrs") {
    static const int at[] = {1, 2, 3, 4, 6, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19};
    constexpr unsigned k = sizeof at / sizeof at[0];
    unsigned char b[k][16]; void* d[k]; CUpointer_attribute as[k];
    memset(b, 0xab, sizeof b);
    for (unsigned i = 0; i < k; ++i) { d[i] = b[i]; as[i] = static_cast<CUpointer_attribute>(at[i]); }
    RC(api.cuPointerGetAttributes(k, as, d, ptr(1)));
    for (unsigned i = 0; i < k; ++i) {
      int w; uint64_t v; widthval(b[i], w, v);
      std::string key = "a" + std::to_string(at[i]);
      r.ks(key.c_str(), std::to_string(w) + ":" + (w ? attrval(at[i], v) : ""));
    }
  // Copies and fills. read/hread record a checksum of the bytes.
  } else if (op == "write") {
    n = num(3); std::vector<unsigned char> b(n); fill(b.data(), n, num(4)); RC(api.cuMemcpyHtoD(ptr(1), b.data(), n));
  } else if (op == "write_async") {
    n = num(3); keep.emplace_back(n); fill(keep.back().data(), n, num(4));
    RC(api.cuMemcpyHtoDAsync(ptr(1), keep.back().data(), n, strm(5)));
  } else if (op == "read") {
    n = num(3); std::vector<unsigned char> b(n, 0xcd); RC(api.cuMemcpyDtoH(b.data(), ptr(1), n)); if (!rc) checksum(r, b.data(), n);
  } else if (op == "read_async") {
    n = num(3); std::vector<unsigned char> b(n, 0xcd); RC(api.cuMemcpyDtoHAsync(b.data(), ptr(1), n, strm(4)));
    int rc2 = api.cuStreamSynchronize(strm(4)); r.kv("sync", rc2);
    if (!rc && !rc2) checksum(r, b.data(), n);
  } else if (op == "hread" || op == "hwrite") {  // the runner's own access: only inside a live slot
    Slot* s = slot(1);
    if (!s || !s->v || freed.count(a(1)) || num(2) + num(3) > s->size) { r.ks("skip", "not live"); return; }
    RC(0);
    if (op == "hread") checksum(r, reinterpret_cast<void*>(ptr(1)), num(3));
    else fill(reinterpret_cast<unsigned char*>(ptr(1)), num(3), num(4));
  } else if (op == "copy") { RC(api.cuMemcpy(ptr(1), ptr(3), num(5)));
  } else if (op == "copy_dtod") { RC(api.cuMemcpyDtoD(ptr(1), ptr(3), num(5)));
  } else if (op == "copy_async") { RC(api.cuMemcpyAsync(ptr(1), ptr(3), num(5), strm(6)));
  } else if (op == "memset8") { RC(api.cuMemsetD8(ptr(1), static_cast<unsigned char>(num(3)), num(4)));
  } else if (op == "memset32") { RC(api.cuMemsetD32(ptr(1), static_cast<unsigned>(num(3)), num(4)));
  } else if (op == "memset8_async") { RC(api.cuMemsetD8Async(ptr(1), static_cast<unsigned char>(num(3)), num(4), strm(5)));
  // Pools: pool_create P LOC ALLOCTYPE HANDLETYPES MAXSIZE
  } else if (op == "pool_create") {
    CUmemPoolProps pp{}; pp.allocType = static_cast<CUmemAllocationType>(num(3));
    pp.handleTypes = static_cast<CUmemAllocationHandleType>(num(4)); pp.location = loc(2); pp.maxSize = num(5);
    CUmemoryPool p = sent<CUmemoryPool>(); RC(api.cuMemPoolCreate(O(&p), &pp)); out(r, rc, "out", U(p), 0, false, 1);
  } else if (op == "pool_destroy") { RC(api.cuMemPoolDestroy(pool(1)));
  } else if (op == "pool_set") {
    int at = static_cast<int>(num(2)); uint64_t v64 = num(3); int v32 = static_cast<int>(v64);
    void* pv = at >= 1 && at <= 3 ? static_cast<void*>(&v32) : static_cast<void*>(&v64);
    RC(api.cuMemPoolSetAttribute(pool(1), static_cast<CUmemPool_attribute>(at), a(3) == "null" ? nullptr : pv));
  } else if (op == "pool_get") {
    unsigned char b[16]; memset(b, 0xab, 16); int at = static_cast<int>(num(2));
    RC(api.cuMemPoolGetAttribute(pool(1), static_cast<CUmemPool_attribute>(at), a(3) == "null" ? nullptr : b));
    attrbuf(b, 0);
  } else if (op == "pool_trim") { RC(api.cuMemPoolTrimTo(pool(1), num(2)));
  } else if (op == "pool_set_access") {
    CUmemAccessDesc d{}; d.location = loc(2); d.flags = static_cast<CUmemAccess_flags>(num(3));
    RC(api.cuMemPoolSetAccess(pool(1), a(4) == "null" ? nullptr : &d, 1));
  } else if (op == "pool_get_access") {
    CUmemAccess_flags f = static_cast<CUmemAccess_flags>(0x5a); CUmemLocation l = loc(2);
    RC(api.cuMemPoolGetAccess(&f, pool(1), &l)); r.kv("flags", f);
  } else if (op == "dev_default_pool" || op == "dev_get_pool") {
    CUmemoryPool p = sent<CUmemoryPool>(); auto d = static_cast<CUdevice>(num(2));
    RC(op == "dev_get_pool" ? api.cuDeviceGetMemPool(O(&p), d) : api.cuDeviceGetDefaultMemPool(O(&p), d));
    is(U(p)); out(r, rc, "out", U(p), 0, false, 1);
  } else if (op == "dev_set_pool") { RC(api.cuDeviceSetMemPool(static_cast<CUdevice>(num(1)), pool(2)));
  } else if (op == "get_default_pool" || op == "get_pool") {  // get_pool P LOC ALLOCTYPE
    CUmemoryPool p = sent<CUmemoryPool>(); CUmemLocation l = loc(2); auto ty = static_cast<CUmemAllocationType>(num(3));
    RC(op == "get_pool" ? api.cuMemGetMemPool(O(&p), &l, ty) : api.cuMemGetDefaultMemPool(O(&p), &l, ty));
    is(U(p)); out(r, rc, "out", U(p), 0, false, 1);
  } else if (op == "set_pool") {  // set_pool LOC ALLOCTYPE P
    CUmemLocation l = loc(1); RC(api.cuMemSetMemPool(&l, static_cast<CUmemAllocationType>(num(2)), pool(3)));
  } else if (op == "alloc_async") {  // alloc_async P SIZE STREAM
    CUdeviceptr p = kSentinel; RC(api.cuMemAllocAsync(O(&p), num(2), strm(3))); near(p); out(r, rc, "out", p, num(2), true, 1); pooled();
  } else if (op == "alloc_pool_async") {  // alloc_pool_async P POOL SIZE STREAM
    CUdeviceptr p = kSentinel; RC(api.cuMemAllocFromPoolAsync(O(&p), num(3), pool(2), strm(4))); near(p);
    out(r, rc, "out", p, num(3), true, 1); pooled();
  } else if (op == "free_async") { RC(api.cuMemFreeAsync(ptr(1), strm(3)));
  // Virtual memory: allocation properties are LOC HANDLETYPES.
  } else if (op == "granularity") {
    CUmemAllocationProp pr{}; pr.type = CU_MEM_ALLOCATION_TYPE_PINNED; pr.location = loc(1);
    pr.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(num(2)); size_t g = kSentinel;
    RC(api.cuMemGetAllocationGranularity(&g, &pr, static_cast<CUmemAllocationGranularity_flags>(num(3))));
    r.ks("g", g == kSentinel ? "S" : std::to_string(g));
  } else if (op == "vmm_create") {  // vmm_create H SIZE LOC HANDLETYPES
    CUmemAllocationProp pr{}; pr.type = CU_MEM_ALLOCATION_TYPE_PINNED; pr.location = loc(3);
    pr.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(num(4));
    CUmemGenericAllocationHandle hh = kSentinel; RC(api.cuMemCreate(O(&hh), num(2), &pr, 0)); out(r, rc, "out", hh, 0, false, 1);
  } else if (op == "vmm_release") { RC(api.cuMemRelease(val(1)));
  } else if (op == "va_reserve") {  // va_reserve V SIZE ALIGN
    CUdeviceptr p = kSentinel; RC(api.cuMemAddressReserve(O(&p), num(2), num(3), 0, 0)); out(r, rc, "out", p, num(2), true, 1);
  } else if (op == "va_free") { RC(api.cuMemAddressFree(ptr(1), num(3)));
  } else if (op == "vmm_map") { RC(api.cuMemMap(ptr(1), num(3), num(5), val(4), 0));  // V OFF SIZE H HOFF
  } else if (op == "vmm_unmap") { RC(api.cuMemUnmap(ptr(1), num(3)));
  } else if (op == "vmm_set_access") {  // V OFF SIZE LOC FLAGS
    CUmemAccessDesc d{}; d.location = loc(4); d.flags = static_cast<CUmemAccess_flags>(num(5));
    RC(api.cuMemSetAccess(ptr(1), num(3), &d, 1));
  } else if (op == "vmm_get_access") {
    unsigned long long f = kSentinel; CUmemLocation l = loc(3); RC(api.cuMemGetAccess(&f, &l, ptr(1)));
    r.ks("flags", f == kSentinel ? "S" : std::to_string(f));
  } else if (op == "vmm_retain") {  // vmm_retain H V OFF
    CUmemGenericAllocationHandle hh = kSentinel;
    RC(api.cuMemRetainAllocationHandle(O(&hh), reinterpret_cast<void*>(ptr(2)))); is(hh); out(r, rc, "out", hh, 0, false, 1);
  } else if (op == "vmm_props") {
    CUmemAllocationProp pr; memset(&pr, 0xab, sizeof pr); RC(api.cuMemGetAllocationPropertiesFromHandle(&pr, val(1)));
    if (!rc) { r.kv("type", pr.type); r.kv("ht", pr.requestedHandleTypes); r.kv("lt", pr.location.type); r.kv("lid", pr.location.id); }
  } else if (op == "vmm_export") {  // vmm_export F H HANDLETYPE
    int fd = kFdSentinel; RC(api.cuMemExportToShareableHandle(&fd, val(2), static_cast<CUmemAllocationHandleType>(num(3)), 0)); setfd(fd);
  } else if (op == "vmm_import") {  // vmm_import H F HANDLETYPE
    int fd = fdof(2); struct stat st{}; fstat(fd, &st); CUmemGenericAllocationHandle hh = kSentinel;
    RC(api.cuMemImportFromShareableHandle(O(&hh), reinterpret_cast<void*>(static_cast<intptr_t>(fd)), static_cast<CUmemAllocationHandleType>(num(3))));
    r.kv("fdlive", same_file(fd, st)); out(r, rc, "out", hh, 0, false, 1);
  // Managed memory.
  } else if (op == "alloc_managed") {
    CUdeviceptr p = kSentinel; RC(api.cuMemAllocManaged(O(&p), num(2), static_cast<unsigned>(num(3)))); out(r, rc, "out", p, num(2), true, 1);
  } else if (op == "attach") { RC(api.cuStreamAttachMemAsync(strm(1), ptr(2), num(4), static_cast<unsigned>(num(5))));  // S M OFF LEN FLAGS
  } else if (op == "advise") { RC(api.cuMemAdvise(ptr(1), num(3), static_cast<CUmem_advise>(num(4)), loc(5)));  // M OFF N ADVICE LOC
  } else if (op == "prefetch") { RC(api.cuMemPrefetchAsync(ptr(1), num(3), loc(4), 0, strm(5)));  // M OFF N LOC STREAM
  } else if (op == "range_attr") {  // M OFF N ATTR: a 16-byte buffer, 4 bytes asked (16 for ACCESSED_BY)
    unsigned char b[16]; memset(b, 0xab, 16); int at = static_cast<int>(num(4));
    RC(api.cuMemRangeGetAttribute(b, at == 3 ? 16 : 4, static_cast<CUmem_range_attribute>(at), ptr(1), num(3)));
    std::string hs; for (unsigned char c : b) { char x[3]; snprintf(x, 3, "%02x", c); hs += x; }
    r.ks("b", hs);
  // External memory: ext_import X F TYPE SIZE
  } else if (op == "memfd") {
    int fd = memfd_create("difftest", 0); RC(fd >= 0 && ftruncate(fd, static_cast<off_t>(num(2))) == 0 ? 0 : -1);
    if (!rc) { def(a(1), 0, 0, false); slots[a(1)].fd = fd; }
  } else if (op == "fd") {  // fd F KIND: a descriptor of one kind, for the imports
    const std::string& k = a(2);
    int fd = -1, sv[2];
    if (k == "null") fd = open("/dev/null", O_RDWR);
    else if (k == "pipe" && pipe(sv) == 0) fd = sv[0];
    else if (k == "sock" && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) fd = sv[0];
    else if (k == "file") { char n[] = "/tmp/difftest-fd.XXXXXX"; fd = mkstemp(n); if (fd >= 0) { unlink(n); (void)!ftruncate(fd, 4096); } }
    else if (k == "memfd") { fd = memfd_create("difftest", 0); (void)!ftruncate(fd, 2 << 20); }
    else if (k == "closed") { fd = open("/dev/null", O_RDONLY); close(fd); }
    else if (k == "neg") fd = -1;
    RC(0); def(a(1), 0, 0, false); slots[a(1)].fd = fd;
  } else if (op == "ext_import") {
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{}; d.type = static_cast<CUexternalMemoryHandleType>(num(3));
    int fd = fdof(2); d.handle.fd = fd; d.size = num(4); struct stat st{}; fstat(fd, &st);
    CUexternalMemory x = sent<CUexternalMemory>(); RC(api.cuImportExternalMemory(O(&x), &d));
    r.kv("fdlive", same_file(fd, st)); out(r, rc, "out", U(x), 0, false, 1);
  } else if (op == "ext_buffer") {  // ext_buffer P X OFF SIZE
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC d{}; d.offset = num(3); d.size = num(4); CUdeviceptr p = kSentinel;
    RC(api.cuExternalMemoryGetMappedBuffer(O(&p), h<CUexternalMemory>(2), &d)); out(r, rc, "out", p, num(4), true, 1);
  } else if (op == "ext_destroy") { RC(api.cuDestroyExternalMemory(h<CUexternalMemory>(1)));
  // IPC: handles and export data live in blob slots, fds in fd slots.
  } else if (op == "ipc_get") {  // ipc_get K P OFF
    CUipcMemHandle hd; memset(&hd, 0x5a, sizeof hd); RC(api.cuIpcGetMemHandle(&hd, ptr(2))); setblob(&hd);
  } else if (op == "ipc_open") {  // ipc_open Q K FLAGS SIZE
    CUipcMemHandle hd{}; blob(2, &hd); CUdeviceptr p = kSentinel;
    RC(api.cuIpcOpenMemHandle(O(&p), hd, static_cast<unsigned>(num(3)))); out(r, rc, "out", p, num(4), true, 1);
  } else if (op == "ipc_close") { RC(api.cuIpcCloseMemHandle(ptr(1)));
  } else if (op == "ievent_get") {  // ievent_get K E
    CUipcEventHandle hd; memset(&hd, 0x5a, sizeof hd); RC(api.cuIpcGetEventHandle(&hd, h<CUevent>(2))); setblob(&hd);
  } else if (op == "ievent_open") {  // ievent_open E K
    CUipcEventHandle hd{}; blob(2, &hd); CUevent e = sent<CUevent>(); RC(api.cuIpcOpenEventHandle(O(&e), hd)); out(r, rc, "out", U(e), 0, false, 1);
  } else if (op == "pool_export") {  // pool_export F P HANDLETYPE
    int fd = kFdSentinel; RC(api.cuMemPoolExportToShareableHandle(&fd, pool(2), static_cast<CUmemAllocationHandleType>(num(3)), 0)); setfd(fd);
  } else if (op == "pool_import") {  // pool_import P F HANDLETYPE
    int fd = fdof(2); struct stat st{}; fstat(fd, &st); CUmemoryPool p = sent<CUmemoryPool>();
    RC(api.cuMemPoolImportFromShareableHandle(O(&p), reinterpret_cast<void*>(static_cast<intptr_t>(fd)), static_cast<CUmemAllocationHandleType>(num(3)), 0));
    r.kv("fdlive", same_file(fd, st)); out(r, rc, "out", U(p), 0, false, 1);
  } else if (op == "export_ptr") {  // export_ptr K P OFF
    CUmemPoolPtrExportData d; memset(&d, 0x5a, sizeof d); RC(api.cuMemPoolExportPointer(&d, ptr(2))); setblob(&d);
  } else if (op == "import_ptr") {  // import_ptr Q POOL K SIZE
    CUmemPoolPtrExportData d{}; blob(3, &d); CUdeviceptr p = kSentinel;
    RC(api.cuMemPoolImportPointer(O(&p), pool(2), &d)); out(r, rc, "out", p, num(4), true, 1);
  // The runtime (NVIDIA's libcudart.so.13 on NVIDIA's driver, ours on ours).
  } else if (op == "rt_malloc" || op == "rt_malloc_host") {
    if (!rt()) return;
    void* p = sent<void*>(); RC(op == "rt_malloc" ? api.cudaMalloc(O(&p), num(2)) : api.cudaMallocHost(O(&p), num(2)));
    out(r, rc, "out", U(p), num(2), true, 1);
  } else if (op == "rt_malloc_managed") {
    if (!rt()) return;
    void* p = sent<void*>(); RC(api.cudaMallocManaged(O(&p), num(2), static_cast<unsigned>(num(3)))); out(r, rc, "out", U(p), num(2), true, 1);
  } else if (op == "rt_free") { if (rt()) RC(api.cudaFree(reinterpret_cast<void*>(ptr(1))));
  } else if (op == "rt_free_host") { if (rt()) RC(api.cudaFreeHost(reinterpret_cast<void*>(ptr(1))));
  } else if (!family_ops(*this, r)) {
    r.ks("error", "unknown op");
  }
  static const char* frees[] = {"mem_free", "mem_free_host", "rt_free", "rt_free_host", "free_async", "ipc_close", "vmm_unmap", "va_free"};
  for (const char* f : frees) if (rc == 0 && op == f) freed.insert(a(1));
}

}  // namespace difftest

#include "ops_core.hpp"
#include "ops_pool.hpp"
#include "ops_ipc.hpp"
#include "ops_external.hpp"
#include "ops_managed.hpp"
#include "ops_vmm.hpp"
#include "ops_pool_conformance.hpp"
#include "ops_ipc_conformance.hpp"
#include "ops_graph.hpp"
#include "ops_array.hpp"
#include "ops_batch.hpp"

namespace difftest {
inline bool family_ops(Exec& e, Rec& r) {
  return ops_core(e, r) || ops_pool(e, r) || ops_ipc(e, r) || ops_external(e, r) || ops_managed(e, r) || ops_vmm(e, r) ||
         ops_pool_conformance(e, r) || ops_ipc_conformance(e, r) || ops_graph(e, r) || ops_array(e, r) ||
         ops_batch(e, r);
}
}  // namespace difftest
