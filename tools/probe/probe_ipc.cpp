// Measures how NVIDIA's driver answers the cross-process sharing API: pool IPC (pools
// and pointers), VMM shareable handles, legacy cudaIpc* memory and event handles, fabric
// handles and a second device. Not part of the build: compile it on a GPU machine with
//   g++ -std=c++17 -O1 tools/probe/probe_ipc.cpp -I/usr/local/cuda/include
//       -L/usr/local/cuda/lib64 -lcudart -lcuda -lpthread -o probe_ipc
// (or against cuda-shim: -I include/cuda_shim -L build/lib) and diff the "key = value"
// lines of two runs. Values never hold addresses or fd numbers, only relations.
// Importers and crash-prone cases run in children: the binary re-executes itself as
// "/proc/self/exe --child NAME SOCKFD"; fds cross a SOCK_SEQPACKET socketpair with
// SCM_RIGHTS, handles and export data as plain bytes. Every child has an alarm() and is
// reported as child.NAME = exit(N) | CRASH(signal N) | TIMEOUT. The whole run is bounded
// by a ~105 s deadline. PROBE_ONLY=pool,vmm,ipc,event,fabric,twodev,risky picks sections.
// probe_ipc.h200x2.txt beside it is its output on two H200s (driver 580.159.04); the emulator
// differs in 13 of 518 keys, each explained in the README / the stop's closing note.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

// ---- output ---------------------------------------------------------------------------
static const char* nm(CUresult r) {
  const char* s = nullptr;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) {
    static char buf[64];
    snprintf(buf, sizeof buf, "CUresult(%d)", (int)r);
    return buf;
  }
  return s;
}
static const char* rn(cudaError_t e) {
  const char* s = cudaGetErrorName(e);
  return s ? s : "cudaError(?)";
}
static void out(const std::string& k, const std::string& v) {
  printf("%s = %s\n", k.c_str(), v.c_str());
  fflush(stdout);
}
static void outc(const std::string& k, CUresult r) { out(k, nm(r)); }
static void outr(const std::string& k, cudaError_t r) { out(k, rn(r)); }
static std::string u64(unsigned long long v) { return std::to_string(v); }
static std::string i64(long long v) { return std::to_string(v); }
static std::string sd(bool same) { return same ? "same" : "different"; }
// the code, plus extra text when the call succeeded
static std::string cx(CUresult r, const std::string& extra) {
  return r == CUDA_SUCCESS && !extra.empty() ? std::string(nm(r)) + " " + extra : std::string(nm(r));
}
static std::string rx(cudaError_t r, const std::string& extra) {
  return r == cudaSuccess && !extra.empty() ? std::string(rn(r)) + " " + extra : std::string(rn(r));
}

static int g_ndev = 0;
static const size_t KiB = 1024, MiB = 1 << 20;
static Clock::time_point g_deadline;
static const char* g_only = nullptr;
static bool want(const char* n) { return !g_only || strstr(g_only, n); }
static int ms_left(int cap) {
  long long left =
      std::chrono::duration_cast<std::chrono::milliseconds>(g_deadline - Clock::now()).count();
  return (int)std::max(1LL, std::min((long long)cap, left));
}

// ---- fds and bytes ---------------------------------------------------------------------
static void* fdh(int fd) { return (void*)(intptr_t)fd; }
static std::string fdstate(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) != -1 ? "open" : "closed"; }
static std::string cloexec(int fd) {
  int f = fd >= 0 ? fcntl(fd, F_GETFD) : -1;
  return f < 0 ? "closed" : (f & FD_CLOEXEC) ? "set" : "clear";
}
// file type, access mode and /proc/self/fd target with digits masked
static std::string fdkind(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return "closed";
  const char* t = S_ISCHR(st.st_mode) ? "chr" : S_ISREG(st.st_mode) ? "reg" : S_ISSOCK(st.st_mode) ? "sock"
                  : S_ISFIFO(st.st_mode) ? "fifo" : S_ISDIR(st.st_mode) ? "dir" : "other";
  int fl = fcntl(fd, F_GETFL);
  const char* am = (fl & O_ACCMODE) == O_RDWR ? "rdwr" : (fl & O_ACCMODE) == O_WRONLY ? "wronly" : "rdonly";
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, buf, sizeof buf - 1);
  std::string tgt = n > 0 ? std::string(buf, (size_t)n) : "?";
  size_t cut = tgt.find_first_of("0123456789");  // names may carry pids/uuids: keep the
  if (cut != std::string::npos) {                 // part before them, back to a separator
    tgt = tgt.substr(0, cut);
    size_t sep = tgt.find_last_of(":.-_"), sl = tgt.find_last_of('/');
    if (sep != std::string::npos && (sl == std::string::npos || sep > sl)) tgt = tgt.substr(0, sep + 1);
    tgt += "*";
  }
  return std::string(t) + " " + am + " " + tgt;
}
static std::string inode_rel(int a, int b) {
  struct stat x, y;
  if (fstat(a, &x) || fstat(b, &y)) return "unknown";
  return x.st_dev == y.st_dev && x.st_ino == y.st_ino ? "sameInode" : "differentInode";
}
static int closed_fd_number() {
  int t = open("/dev/null", O_RDONLY);
  close(t);
  return t;
}
static int make_memfd() {
  int f = memfd_create("probe_ipc", 0);
  if (f >= 0 && ftruncate(f, 2 * MiB) != 0) {}
  return f;
}
// byte masks over several 64-byte blobs (one blob alone is noisy: random bytes can be 0)
static std::string nonzero_any(std::initializer_list<const void*> ps) {
  std::string s(64, '0');
  for (const void* p : ps)
    for (int i = 0; i < 64; i++)
      if (((const unsigned char*)p)[i]) s[i] = '1';
  return s;
}
static std::string differ_any(const void* a, std::initializer_list<const void*> others) {
  std::string s(64, '0');
  for (const void* p : others)
    for (int i = 0; i < 64; i++)
      if (((const unsigned char*)a)[i] != ((const unsigned char*)p)[i]) s[i] = '1';
  return s;
}
static std::string ident(const void* a, const void* b, size_t n) { return memcmp(a, b, n) ? "differ" : "identical"; }
// v relative to base: "base+N", "null" for 0, "far" beyond 1 GiB (never a raw address)
static std::string rel(unsigned long long v, unsigned long long base) {
  if (v == 0) return "null";
  long long d = (long long)(v - base);
  if (d > (1LL << 30) || d < -(1LL << 30)) return "far";
  return std::string("base") + (d >= 0 ? "+" : "") + std::to_string(d);
}

// ---- data patterns (differ per 4 KiB page so offsets can be told apart) -----------------
static void pattern(unsigned char* b, size_t n, int seed, size_t off = 0) {
  for (size_t i = 0; i < n; i++) {
    size_t j = i + off;
    b[i] = (unsigned char)(j * 31 + (j >> 12) * 7 + seed * 17 + 1);
  }
}
// the generic cuMemcpy fallback below only for memory the driver calls host memory
// (an address it does not know would be treated as pageable host memory)
static bool known_host(CUdeviceptr d) {
  unsigned long long t = 0;
  return cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d) == CUDA_SUCCESS && t == CU_MEMORYTYPE_HOST;
}
// cuMemcpyHtoD; when it fails on host memory the data still goes in through cuMemcpy
// (UVA) and the HtoD code is returned
static CUresult put_dev(CUdeviceptr d, size_t n, int seed) {
  std::vector<unsigned char> b(n);
  pattern(b.data(), n, seed);
  CUresult r = cuMemcpyHtoD(d, b.data(), n);
  if (r != CUDA_SUCCESS && known_host(d)) cuMemcpy(d, (CUdeviceptr)(uintptr_t)b.data(), n);
  return r;
}
// "match" / "mismatch" via cuMemcpyDtoH; when that fails on host memory:
// "CODE generic=<cuMemcpy result>"
static std::string cmp_dev(CUdeviceptr d, size_t n, int seed, size_t off = 0) {
  std::vector<unsigned char> b(n), e(n);
  pattern(e.data(), n, seed, off);
  CUresult r = cuMemcpyDtoH(b.data(), d, n);
  if (r == CUDA_SUCCESS) return memcmp(b.data(), e.data(), n) ? "mismatch" : "match";
  if (!known_host(d)) return nm(r);
  CUresult g = cuMemcpy((CUdeviceptr)(uintptr_t)b.data(), d, n);
  return std::string(nm(r)) + " generic=" + (g ? nm(g) : memcmp(b.data(), e.data(), n) ? "mismatch" : "match");
}
static bool matched(const std::string& s) { return s == "match" || s.find("generic=match") != std::string::npos; }
// direct host read of p, guarded against SIGSEGV/SIGBUS
static sigjmp_buf g_jb;
static void on_fault(int) { siglongjmp(g_jb, 1); }
static std::string host_read(CUdeviceptr p, size_t n, int seed) {
  std::vector<unsigned char> e(n);
  pattern(e.data(), n, seed);
  struct sigaction sa, o1, o2;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fault;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &o1);
  sigaction(SIGBUS, &sa, &o2);
  volatile int res = 0;
  if (sigsetjmp(g_jb, 1) == 0) {
    const volatile unsigned char* q = (const volatile unsigned char*)(uintptr_t)p;
    int ok = 1;
    for (size_t i = 0; i < n; i++)
      if (q[i] != e[i]) { ok = 0; break; }
    res = ok ? 1 : 2;
  } else {
    res = 3;
  }
  sigaction(SIGSEGV, &o1, nullptr);
  sigaction(SIGBUS, &o2, nullptr);
  return res == 1 ? "match" : res == 2 ? "mismatch" : "segv";
}

// ---- channel to a child (SOCK_SEQPACKET: one send = one message) ----------------------
struct Chan {
  int fd = -1;
  bool dead = false;
};
static bool xsend(Chan& c, const void* p, size_t n, int pass_fd = -1) {
  if (c.dead || c.fd < 0) return false;
  char dummy = 0;
  struct iovec iov = {n ? const_cast<void*>(p) : &dummy, n ? n : 1};
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
  if (pass_fd >= 0) {
    memset(&u, 0, sizeof u);
    m.msg_control = u.buf;
    m.msg_controllen = sizeof u.buf;
    struct cmsghdr* cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
  }
  if (sendmsg(c.fd, &m, MSG_NOSIGNAL) < 0) { c.dead = true; return false; }
  return true;
}
static ssize_t xrecv(Chan& c, void* p, size_t n, int* got_fd = nullptr) {
  if (got_fd) *got_fd = -1;
  if (c.dead || c.fd < 0) return -1;
  struct pollfd pf = {c.fd, POLLIN, 0};
  if (poll(&pf, 1, ms_left(20000)) <= 0) { c.dead = true; return -1; }
  char dummy;
  struct iovec iov = {n ? p : &dummy, n ? n : 1};
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  union { char buf[CMSG_SPACE(sizeof(int) * 4)]; struct cmsghdr align; } u;
  m.msg_control = u.buf;
  m.msg_controllen = sizeof u.buf;
  ssize_t r = recvmsg(c.fd, &m, 0);
  if (r <= 0) { c.dead = true; return -1; }
  for (struct cmsghdr* cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      int fd;
      memcpy(&fd, CMSG_DATA(cm), sizeof fd);
      if (got_fd && *got_fd < 0) *got_fd = fd; else close(fd);
    }
  }
  return r;
}
static bool send_fd(Chan& c, int fd) { return xsend(c, fd >= 0 ? "F" : "N", 1, fd); }
static int recv_fd(Chan& c) {
  char t;
  int fd = -1;
  xrecv(c, &t, 1, &fd);
  return fd;
}
static bool send_bytes(Chan& c, const void* p, size_t n) { return xsend(c, p, n); }
static bool recv_bytes(Chan& c, void* p, size_t n) { return xrecv(c, p, n) == (ssize_t)n; }
static bool send_tag(Chan& c, const char* t) { return xsend(c, t, strlen(t)); }
static bool wait_tag(Chan& c, const char* t, const std::string& who) {
  char buf[64] = {0};
  ssize_t r = xrecv(c, buf, sizeof buf - 1);
  bool ok = r == (ssize_t)strlen(t) && memcmp(buf, t, r) == 0;
  if (!ok) out(who + ".proto", std::string("lost_at_") + t);
  return ok;
}

// the importer says "written" (it wrote its pattern) or "skipped"; 1 / 0 / -1 when lost
static int await_write(Chan& c, const std::string& who) {
  char buf[16] = {0};
  ssize_t r = xrecv(c, buf, sizeof buf - 1);
  if (r == 7 && !memcmp(buf, "written", 7)) return 1;
  if (r == 7 && !memcmp(buf, "skipped", 7)) return 0;
  out(who + ".proto", "lost_at_written");
  return -1;
}

struct Child {
  pid_t pid = -1;
  Chan ch;
  std::string name;
};
static const int kChildAlarm = 30;
static Child spawn_child(const std::string& name) {
  Child c;
  c.name = name;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    out("child." + name, "SOCKETPAIR_FAILED");
    return c;
  }
  std::string fdarg = std::to_string(sv[1]);
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    fcntl(sv[1], F_SETFD, 0);
    alarm(kChildAlarm);  // survives exec
    execl("/proc/self/exe", "probe_ipc", "--child", name.c_str(), fdarg.c_str(), (char*)nullptr);
    _exit(127);
  }
  close(sv[1]);
  c.pid = pid;
  c.ch.fd = sv[0];
  if (pid < 0) { close(sv[0]); c.ch.fd = -1; c.ch.dead = true; }
  return c;
}
// closes the channel (queued messages stay readable), waits with a timeout, reports
static void finish_child(Child& c) {
  if (c.ch.fd >= 0) close(c.ch.fd);
  c.ch.fd = -1;
  if (c.pid <= 0) return;
  int st = 0;
  auto end = Clock::now() + std::chrono::milliseconds(ms_left((kChildAlarm + 5) * 1000));
  for (;;) {
    pid_t r = waitpid(c.pid, &st, WNOHANG);
    if (r == c.pid) break;
    if (r < 0 || Clock::now() > end) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &st, 0);
      out("child." + c.name, "TIMEOUT");
      return;
    }
    usleep(2000);
  }
  if (WIFSIGNALED(st)) out("child." + c.name, "CRASH(signal " + i64(WTERMSIG(st)) + ")");
  else out("child." + c.name, "exit(" + i64(WEXITSTATUS(st)) + ")");
}
static void run_risky(const std::string& name) {
  Child c = spawn_child("risky." + name);
  finish_child(c);
}

// ---- CUDA helpers ----------------------------------------------------------------------
struct LocSpec {
  const char* name;
  CUmemLocationType type;
  int id;
};
static const LocSpec kLocs[3] = {{"dev", CU_MEM_LOCATION_TYPE_DEVICE, 0},
                                 {"host", CU_MEM_LOCATION_TYPE_HOST, 0},
                                 {"numa", CU_MEM_LOCATION_TYPE_HOST_NUMA, 0}};
static const LocSpec* find_loc(const std::string& n) {
  for (auto& l : kLocs)
    if (n == l.name) return &l;
  return &kLocs[0];
}
static CUmemLocation mkloc(CUmemLocationType t, int id) {
  CUmemLocation l;
  memset(&l, 0, sizeof l);
  l.type = t;
  l.id = id;
  return l;
}
static CUmemPoolProps pool_props(const LocSpec& l, unsigned ht) {
  CUmemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.handleTypes = (CUmemAllocationHandleType)ht;
  p.location = mkloc(l.type, l.id);
  return p;
}
static CUmemAllocationProp vm_props(CUmemLocationType t, int id, unsigned ht) {
  CUmemAllocationProp p;
  memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.requestedHandleTypes = (CUmemAllocationHandleType)ht;
  p.location = mkloc(t, id);
  return p;
}
static CUmemAccessDesc adesc(CUmemLocationType t, int id, unsigned flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
  CUmemAccessDesc d;
  memset(&d, 0, sizeof d);
  d.location = mkloc(t, id);
  d.flags = (CUmemAccess_flags)flags;
  return d;
}
static std::string props_str(const CUmemAllocationProp& p) {
  return "type=" + u64(p.type) + " ht=" + u64(p.requestedHandleTypes) + " loc=" + u64(p.location.type) + ":" +
         i64(p.location.id) + " rdma=" + u64(p.allocFlags.gpuDirectRDMACapable) +
         " comp=" + u64(p.allocFlags.compressionType) + " usage=" + u64(p.allocFlags.usage);
}
static std::string handle_props(CUmemGenericAllocationHandle h) {
  CUmemAllocationProp q;
  memset(&q, 0, sizeof q);
  CUresult r = cuMemGetAllocationPropertiesFromHandle(&q, h);
  return cx(r, props_str(q));
}
static const CUmemAllocationHandleType POSIX = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
static const CUmemAllocationHandleType FABRIC = CU_MEM_HANDLE_TYPE_FABRIC;

// pointer attributes and address range, addresses relative to base
static void ptr_attrs(const std::string& K, CUdeviceptr p, CUdeviceptr base, CUmemoryPool pool = nullptr) {
  auto a = [&](const char* n, CUpointer_attribute at) {
    unsigned long long v = 0;
    CUresult r = cuPointerGetAttribute(&v, at, p);
    out(K + n, r ? nm(r) : u64(v));
  };
  auto ra = [&](const char* n, CUpointer_attribute at) {
    unsigned long long v = 0;
    CUresult r = cuPointerGetAttribute(&v, at, p);
    out(K + n, r ? nm(r) : rel(v, base));
  };
  a("memoryType", CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
  a("deviceOrdinal", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
  a("isManaged", CU_POINTER_ATTRIBUTE_IS_MANAGED);
  a("legacyIpcCapable", CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE);
  a("allowedHandleTypes", CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES);
  a("mapped", CU_POINTER_ATTRIBUTE_MAPPED);
  a("mappingSize", CU_POINTER_ATTRIBUTE_MAPPING_SIZE);
  ra("mappingBase", CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR);
  ra("rangeStart", CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
  a("rangeSize", CU_POINTER_ATTRIBUTE_RANGE_SIZE);
  unsigned long long mp = 0;
  CUresult r = cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p);
  out(K + "mempool", r ? nm(r) : mp == 0 ? "null" : (pool && mp == (unsigned long long)(uintptr_t)pool) ? "thatPool" : "other");
  CUdeviceptr b = 0;
  size_t s = 0;
  r = cuMemGetAddressRange(&b, &s, p);
  out(K + "addressRange", cx(r, rel(b, base) + " size=" + u64(s)));
}

struct Vmm {
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr va = 0;
  size_t size = 0;
};
static CUresult vmm_make(Vmm& v, size_t size, unsigned ht, int dev = 0) {
  CUmemAllocationProp p = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, dev, ht);
  v.size = size;
  CUresult r = cuMemCreate(&v.h, size, &p, 0);
  if (r) return r;
  if ((r = cuMemAddressReserve(&v.va, size, 0, 0, 0))) return r;
  if ((r = cuMemMap(v.va, size, 0, v.h, 0))) return r;
  CUmemAccessDesc d = adesc(CU_MEM_LOCATION_TYPE_DEVICE, dev);
  return cuMemSetAccess(v.va, size, &d, 1);
}
static void vmm_drop(Vmm& v) {
  if (v.va) { cuMemUnmap(v.va, v.size); cuMemAddressFree(v.va, v.size); }
  if (v.h) cuMemRelease(v.h);
  v = Vmm();
}

static void CUDA_CB sleep300(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

static const struct {
  CUmemPool_attribute a;
  const char* n;
  unsigned long long setv;
  bool is32;
} kPoolAttrs[] = {
    {CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, "followEventDeps", 0, true},
    {CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, "allowOpportunistic", 0, true},
    {CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, "allowInternalDeps", 0, true},
    {CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "releaseThreshold", 1 << 20, false},
    {CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, "reservedCurrent", 0, false},
    {CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, "reservedHigh", 0, false},
    {CU_MEMPOOL_ATTR_USED_MEM_CURRENT, "usedCurrent", 0, false},
    {CU_MEMPOOL_ATTR_USED_MEM_HIGH, "usedHigh", 0, false},
};
static std::string pool_attr_get(CUmemoryPool p, int i) {
  unsigned long long v = 0;
  CUresult r = cuMemPoolGetAttribute(p, kPoolAttrs[i].a, &v);
  if (kPoolAttrs[i].is32) v &= 0xffffffffull;
  return cx(r, u64(v));
}

// =========================================================================================
// A. Pool IPC: export side in the parent
// =========================================================================================
static void probe_pool_export() {
  for (const LocSpec& L : kLocs) {
    const std::string K = std::string("poolipc.") + L.name + ".";
    CUmemoryPool pn = nullptr, pp = nullptr;
    CUmemPoolProps a = pool_props(L, CU_MEM_HANDLE_TYPE_NONE), b = pool_props(L, POSIX);
    outc(K + "create.none", cuMemPoolCreate(&pn, &a));
    outc(K + "create.posix", cuMemPoolCreate(&pp, &b));
    if (pn) {
      int fd = -1;
      CUresult r = cuMemPoolExportToShareableHandle(&fd, pn, POSIX, 0);
      outc(K + "export.noPosixPool", r);
      if (!r && fd >= 0) close(fd);
    }
    if (pp) {
      int fd = -1, fd2 = -1;
      CUresult r = cuMemPoolExportToShareableHandle(&fd, pp, POSIX, 0);
      outc(K + "export", r);
      if (!r) {
        out(K + "export.cloexec", cloexec(fd));
        out(K + "export.fdKind", fdkind(fd));
      }
      CUresult r2 = cuMemPoolExportToShareableHandle(&fd2, pp, POSIX, 0);
      if (!r && !r2) out(K + "export.twice", std::string(nm(r2)) + " fd=" + (fd != fd2 ? "different" : "same") + " " + inode_rel(fd, fd2));
      else outc(K + "export.twice", r2);
      if (fd >= 0) close(fd);
      if (fd2 >= 0) close(fd2);
      const struct { const char* n; unsigned t; } wrong[] = {
          {"typeNone", CU_MEM_HANDLE_TYPE_NONE}, {"typeFabric", CU_MEM_HANDLE_TYPE_FABRIC},
          {"typeWin32", CU_MEM_HANDLE_TYPE_WIN32}, {"type0x100", 0x100}};
      for (auto& w : wrong) {
        alignas(8) unsigned char buf[64] = {0};
        outc(K + "export." + w.n, cuMemPoolExportToShareableHandle(buf, pp, (CUmemAllocationHandleType)w.t, 0));
      }
      fd = -1;
      r = cuMemPoolExportToShareableHandle(&fd, pp, POSIX, 1);
      outc(K + "export.flags1", r);
      if (!r && fd >= 0) close(fd);
      fd = -1;
      cudaError_t e = cudaMemPoolExportToShareableHandle(&fd, (cudaMemPool_t)pp, cudaMemHandleTypePosixFileDescriptor, 0);
      outr(K + "rt.export", e);
      if (!e && fd >= 0) close(fd);
      alignas(8) unsigned char buf[64] = {0};
      outr(K + "rt.export.typeNone", cudaMemPoolExportToShareableHandle(buf, (cudaMemPool_t)pp, cudaMemHandleTypeNone, 0));
      fd = -1;
      e = cudaMemPoolExportToShareableHandle(&fd, (cudaMemPool_t)pp, cudaMemHandleTypePosixFileDescriptor, 1);
      outr(K + "rt.export.flags1", e);
      if (!e && fd >= 0) close(fd);
    }
    if (pn) cuMemPoolDestroy(pn);
    if (pp) cuMemPoolDestroy(pp);
  }
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, 0);
  int fd = -1;
  CUresult r = cuMemPoolExportToShareableHandle(&fd, def, POSIX, 0);
  outc("poolipc.defaultPool.export", r);
  if (!r && fd >= 0) close(fd);
}

// =========================================================================================
// A. Pool pointers: exporter in the parent, importers in children
// =========================================================================================
static void probe_pool_share(const LocSpec& L) {
  const std::string K = std::string("poolptr.") + L.name + ".";
  CUmemoryPool P = nullptr, Q = nullptr, N = nullptr;
  CUmemPoolProps pp = pool_props(L, POSIX), pn = pool_props(L, CU_MEM_HANDLE_TYPE_NONE);
  CUresult r = cuMemPoolCreate(&P, &pp);
  outc(K + "create", r);
  if (r) return;
  cuMemPoolCreate(&Q, &pp);
  cuMemPoolCreate(&N, &pn);
  int F1 = -1, F2 = -1, FQ = -1;
  cuMemPoolExportToShareableHandle(&F1, P, POSIX, 0);
  cuMemPoolExportToShareableHandle(&F2, P, POSIX, 0);
  if (Q) cuMemPoolExportToShareableHandle(&FQ, Q, POSIX, 0);
  CUdeviceptr a = 0, b = 0, c = 0, y = 0, n = 0, qa = 0;
  outc(K + "alloc", cuMemAllocFromPoolAsync(&a, 4 * KiB, P, nullptr));
  cuMemAllocFromPoolAsync(&b, 8 * KiB, P, nullptr);
  cuMemAllocFromPoolAsync(&c, 4 * KiB, P, nullptr);
  cuMemAllocFromPoolAsync(&y, 4 * KiB, P, nullptr);
  if (N) cuMemAllocFromPoolAsync(&n, 4 * KiB, N, nullptr);
  if (Q) cuMemAllocFromPoolAsync(&qa, 4 * KiB, Q, nullptr);
  cuStreamSynchronize(nullptr);
  outc(K + "fill", put_dev(a, 4 * KiB, 1));
  put_dev(b, 8 * KiB, 2);
  put_dev(c, 4 * KiB, 3);
  put_dev(y, 4 * KiB, 4);
  CUmemPoolPtrExportData Ea, Ea2, Eb, Ec, Ey, Eq, Ex;
  memset(&Ea, 0, 64); memset(&Ea2, 0, 64); memset(&Eb, 0, 64); memset(&Ec, 0, 64); memset(&Ey, 0, 64);
  memset(&Eq, 0, 64);
  r = cuMemPoolExportPointer(&Ea, a);
  outc(K + "exportPtr", r);
  cuMemPoolExportPointer(&Ea2, a);
  out(K + "exportPtr.twice", ident(&Ea, &Ea2, 64));
  cuMemPoolExportPointer(&Eb, b);
  cuMemPoolExportPointer(&Ec, c);
  cuMemPoolExportPointer(&Ey, y);
  if (qa) cuMemPoolExportPointer(&Eq, qa);  // a second pool: its own id bytes
  out(K + "exportPtr.nonzeroBytes", nonzero_any({&Ea, &Eb, &Ec, &Ey, &Eq}));
  out(K + "exportPtr.bytesDifferingAcrossPtrs", differ_any(&Ea, {&Eb, &Ec, &Ey}));
  memset(&Ex, 0, 64);
  cudaError_t e = cudaMemPoolExportPointer((cudaMemPoolPtrExportData*)&Ex, (void*)a);
  out(K + "rt.exportPtr", rx(e, ident(&Ea, &Ex, 64)));
  memset(&Ex, 0, 64);
  r = cuMemPoolExportPointer(&Ex, a + 256);
  out(K + "exportPtr.interior", cx(r, ident(&Ea, &Ex, 64)));
  if (n) outc(K + "exportPtr.nonPosixPool", cuMemPoolExportPointer(&Ex, n));
  outc(K + "exportPtr.null", cuMemPoolExportPointer(&Ex, 0));
  cuMemFreeAsync(y, nullptr);
  cuStreamSynchronize(nullptr);
  outc(K + "exportPtr.afterFree", cuMemPoolExportPointer(&Ex, y));
  if (L.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    CUdeviceptr m = 0;
    cuMemAlloc(&m, 4 * KiB);
    outc(K + "exportPtr.cuMemAlloc", cuMemPoolExportPointer(&Ex, m));
    cuMemFree(m);
    void* hp = nullptr;
    cuMemHostAlloc(&hp, 4 * KiB, 0);
    outc(K + "exportPtr.hostPinned", cuMemPoolExportPointer(&Ex, (CUdeviceptr)hp));
    cuMemFreeHost(hp);
    CUdeviceptr d = 0;
    cuMemAllocAsync(&d, 4 * KiB, nullptr);
    cuStreamSynchronize(nullptr);
    outc(K + "exportPtr.defaultPool", cuMemPoolExportPointer(&Ex, d));
    cuMemFreeAsync(d, nullptr);
    cuStreamSynchronize(nullptr);
  }
  long long delta = (long long)(b - a);
  {  // main importer
    Child ch = spawn_child(std::string("poolshare.") + L.name);
    send_fd(ch.ch, F1);
    send_fd(ch.ch, F2);
    send_fd(ch.ch, FQ);
    send_bytes(ch.ch, &Ea, 64);
    send_bytes(ch.ch, &Eb, 64);
    send_bytes(ch.ch, &delta, sizeof delta);
    int w = await_write(ch.ch, K + "parent");
    if (w >= 0) {
      cuCtxSynchronize();
      out(K + "exporterSeesImporterWrite", w ? cmp_dev(a, 4 * KiB, 11) : "importerDidNotWrite");
      send_tag(ch.ch, "ack");
    }
    finish_child(ch);
  }
  {  // free order: exporter frees while the importer still holds the pointer
    Child ch = spawn_child(std::string("poolfree.") + L.name);
    send_fd(ch.ch, F1);
    send_bytes(ch.ch, &Ec, 64);
    send_bytes(ch.ch, &Ey, 64);
    if (wait_tag(ch.ch, "imported", "poolfree")) {
      outc(K + "order.exporterFree", cuMemFreeAsync(c, nullptr));
      outc(K + "order.exporterSync", cuStreamSynchronize(nullptr));
      c = 0;
      send_tag(ch.ch, "freed");
      wait_tag(ch.ch, "done", "poolfree");
    }
    finish_child(ch);
  }
  if (L.type == CU_MEM_LOCATION_TYPE_DEVICE) {  // null arguments, one child each
    for (const char* cs : {"importPtrNullOut", "importPtrNullPool", "importPtrNullData", "importPoolNullOut"}) {
      Child ch = spawn_child(std::string("poolnull.") + cs);
      send_fd(ch.ch, F1);
      send_bytes(ch.ch, &Ea, 64);
      finish_child(ch);
    }
  }
  for (CUdeviceptr p : {a, b, c, n, qa})
    if (p) cuMemFreeAsync(p, nullptr);
  cuStreamSynchronize(nullptr);
  for (int f : {F1, F2, FQ})
    if (f >= 0) close(f);
  for (CUmemoryPool p : {P, Q, N})
    if (p) cuMemPoolDestroy(p);
}

static CUmemoryPool child_import_pool(int fd, const std::string& K) {
  CUmemoryPool p = nullptr;
  if (fd < 0) { out(K + "import", "nofd"); return nullptr; }
  CUresult r = cuMemPoolImportFromShareableHandle(&p, fdh(fd), POSIX, 0);
  outc(K + "import", r);
  if (r) return nullptr;
  CUmemAccessDesc d = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  cuMemPoolSetAccess(p, &d, 1);
  return p;
}

static void child_poolshare(Chan& ch, const LocSpec& L) {
  const std::string K = std::string("poolptr.") + L.name + ".";
  int F1 = recv_fd(ch), F2 = recv_fd(ch), FQ = recv_fd(ch);
  CUmemPoolPtrExportData Ea, Eb;
  long long delta = 0;
  if (!recv_bytes(ch, &Ea, 64) || !recv_bytes(ch, &Eb, 64) || !recv_bytes(ch, &delta, sizeof delta)) {
    out(K + "proto", "lost_at_start");
    return;
  }
  if (F1 < 0) { out(K + "import", "nofd"); return; }
  // --- pool import
  CUmemoryPool P1 = nullptr, P1b = nullptr, P1c = nullptr, Q1 = nullptr, X = nullptr;
  CUresult r = cuMemPoolImportFromShareableHandle(&P1, fdh(F1), POSIX, 0);
  outc(K + "import", r);
  out(K + "import.fdAfter", fdstate(F1));
  r = cuMemPoolImportFromShareableHandle(&P1b, fdh(F1), POSIX, 0);
  out(K + "import.sameFdAgain", cx(r, sd(P1b == P1)));
  if (F2 >= 0) {
    r = cuMemPoolImportFromShareableHandle(&P1c, fdh(F2), POSIX, 0);
    out(K + "import.secondExport", cx(r, sd(P1c == P1)));
  }
  cudaMemPool_t Pr = nullptr;
  cudaError_t e = cudaMemPoolImportFromShareableHandle(&Pr, fdh(F1), cudaMemHandleTypePosixFileDescriptor, 0);
  out(K + "rt.import", rx(e, sd((CUmemoryPool)Pr == P1)));
  if (FQ >= 0) cuMemPoolImportFromShareableHandle(&Q1, fdh(FQ), POSIX, 0);
  auto neg = [&](const std::string& n, int fd, unsigned t, unsigned long long fl) {
    X = nullptr;
    CUresult q = cuMemPoolImportFromShareableHandle(&X, fdh(fd), (CUmemAllocationHandleType)t, fl);
    out(K + "import." + n, cx(q, "samePool=" + sd(X == P1)));
  };
  neg("typeNone", F1, CU_MEM_HANDLE_TYPE_NONE, 0);
  neg("typeWin32", F1, CU_MEM_HANDLE_TYPE_WIN32, 0);
  neg("type0x100", F1, 0x100, 0);
  neg("flags1", F1, POSIX, 1);
  neg("fdMinus1", -1, POSIX, 0);
  int mf = make_memfd();
  neg("memfd", mf, POSIX, 0);
  out(K + "import.memfd.fdAfter", fdstate(mf));
  int dn = open("/dev/null", O_RDWR);
  neg("devNull", dn, POSIX, 0);
  neg("closedFd", closed_fd_number(), POSIX, 0);
  cudaMemPool_t Xr = nullptr;
  outr(K + "rt.import.fdMinus1", cudaMemPoolImportFromShareableHandle(&Xr, fdh(-1), cudaMemHandleTypePosixFileDescriptor, 0));
  if (!P1) return;
  // --- operations on the imported pool
  CUmemLocation l0 = mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 0), lh = mkloc(CU_MEM_LOCATION_TYPE_HOST, 0);
  CUmemAccess_flags f = (CUmemAccess_flags)0x77;
  r = cuMemPoolGetAccess(&f, P1, &l0);
  out(K + "access.dev0.before", cx(r, u64(f)));
  f = (CUmemAccess_flags)0x77;
  r = cuMemPoolGetAccess(&f, P1, &lh);
  out(K + "access.host", cx(r, u64(f)));
  CUmemAccessDesc d0 = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  outc(K + "setAccess.dev0", cuMemPoolSetAccess(P1, &d0, 1));
  f = (CUmemAccess_flags)0x77;
  r = cuMemPoolGetAccess(&f, P1, &l0);
  out(K + "access.dev0.after", cx(r, u64(f)));
  for (int i = 0; i < 8; i++) {
    std::string before = pool_attr_get(P1, i);
    unsigned long long v64 = kPoolAttrs[i].setv;
    int v32 = (int)kPoolAttrs[i].setv;
    CUresult s = cuMemPoolSetAttribute(P1, kPoolAttrs[i].a, kPoolAttrs[i].is32 ? (void*)&v32 : (void*)&v64);
    out(K + "attr." + kPoolAttrs[i].n, before + " set=" + nm(s) + " after=" + pool_attr_get(P1, i));
  }
  CUdeviceptr d = 0;
  r = cuMemAllocFromPoolAsync(&d, 4 * KiB, P1, nullptr);
  outc(K + "allocFromImported", r);
  if (!r) { cuMemFreeAsync(d, nullptr); cuStreamSynchronize(nullptr); }
  r = cuDeviceSetMemPool(0, P1);
  outc(K + "deviceSetMemPool", r);
  CUmemoryPool def = nullptr;
  cuDeviceGetDefaultMemPool(&def, 0);
  cuDeviceSetMemPool(0, def);
  outc(K + "trimTo0", cuMemPoolTrimTo(P1, 0));
  int efd = -1;
  r = cuMemPoolExportToShareableHandle(&efd, P1, POSIX, 0);
  outc(K + "exportImportedPool", r);
  if (!r && efd >= 0) close(efd);
  // --- pointer import
  CUdeviceptr pa = 0, pb = 0, pa2 = 0, x = 0;
  r = cuMemPoolImportPointer(&pa, P1, &Ea);
  outc(K + "importPtr", r);
  if (!r) {
    std::string rd = cmp_dev(pa, 4 * KiB, 1);
    out(K + "importPtr.read", rd);
    out(K + "importPtr.hostRead", matched(rd) ? host_read(pa, 4 * KiB, 1) : "skipped");
    outc(K + "importPtr.write", put_dev(pa, 4 * KiB, 11));
    cuCtxSynchronize();
  }
  send_tag(ch, pa ? "written" : "skipped");
  wait_tag(ch, "ack", K + "child");
  r = cuMemPoolImportPointer(&pb, P1, &Eb);
  out(K + "importPtr.second", cx(r, pa ? ((long long)(pb - pa) == delta ? "same_delta" : "different_delta") : "noFirst"));
  if (!r) out(K + "importPtr.second.read", cmp_dev(pb, 8 * KiB, 2));
  r = cuMemPoolImportPointer(&pa2, P1, &Ea);
  out(K + "importPtr.again", cx(r, sd(pa2 == pa)));
  void* pr = nullptr;
  e = cudaMemPoolImportPointer(&pr, (cudaMemPool_t)P1, (cudaMemPoolPtrExportData*)&Ea);
  out(K + "rt.importPtr", rx(e, sd((CUdeviceptr)pr == pa)));
  if (pa) {
    ptr_attrs(K + "attr.ptr.", pa, pa, P1);
    CUmemPoolPtrExportData Ee;
    outc(K + "exportImportedPtr", cuMemPoolExportPointer(&Ee, pa));
  }
  CUmemPoolPtrExportData G;
  for (int i = 0; i < 64; i++) ((unsigned char*)&G)[i] = (unsigned char)(i * 37 + 11);
  outc(K + "importPtr.garbage", cuMemPoolImportPointer(&x, P1, &G));
  memset(&G, 0, 64);
  x = 0;
  outc(K + "importPtr.zeroed", cuMemPoolImportPointer(&x, P1, &G));
  x = 0;
  if (Q1) outc(K + "importPtr.otherPool", cuMemPoolImportPointer(&x, Q1, &Ea));
  else out(K + "importPtr.otherPool", "noPool");
  // --- frees
  if (pa2) {
    outc(K + "free.dup", cuMemFree(pa2));
    out(K + "free.dup.readOrig", cmp_dev(pa, 4 * KiB, 11));
  }
  if (pr) outr(K + "rt.free", cudaFree(pr));
  if (pa) {
    outc(K + "free.cuMemFree", cuMemFree(pa));
    outc(K + "free.cuMemFreeAgain", cuMemFree(pa));
  }
  if (pb) {
    outc(K + "free.async", cuMemFreeAsync(pb, nullptr));
    outc(K + "free.async.sync", cuStreamSynchronize(nullptr));
    outc(K + "free.asyncAgain", cuMemFreeAsync(pb, nullptr));
    outc(K + "free.asyncAgain.sync", cuStreamSynchronize(nullptr));
  }
  // --- destroy imported pools
  CUdeviceptr live = 0;
  outc(K + "destroy.liveImport", cuMemPoolImportPointer(&live, P1, &Ea));
  outc(K + "destroy.withLive", cuMemPoolDestroy(P1));
  if (live) {
    out(K + "destroy.liveRead", cmp_dev(live, 4 * KiB, 11));
    outc(K + "destroy.liveFree", cuMemFree(live));
  }
  if (Q1) outc(K + "destroy.noLive", cuMemPoolDestroy(Q1));
  if (P1c && P1c != P1) outc(K + "destroy.secondImport", cuMemPoolDestroy(P1c));
  if (mf >= 0) close(mf);
  if (dn >= 0) close(dn);
}

static void child_poolfree(Chan& ch, const LocSpec& L) {
  const std::string K = std::string("poolptr.") + L.name + ".order.";
  int F1 = recv_fd(ch);
  CUmemPoolPtrExportData Ec, Ey;
  if (!recv_bytes(ch, &Ec, 64) || !recv_bytes(ch, &Ey, 64)) { out(K + "proto", "lost_at_start"); return; }
  CUmemoryPool P1 = child_import_pool(F1, K);
  if (!P1) return;
  CUdeviceptr pc = 0, py = 0;
  CUresult r = cuMemPoolImportPointer(&pc, P1, &Ec);
  outc(K + "importPtr", r);
  if (!r) out(K + "read", cmp_dev(pc, 4 * KiB, 3));
  send_tag(ch, "imported");
  if (!wait_tag(ch, "freed", K + "child")) return;
  if (pc) {
    out(K + "readAfterExporterFree", cmp_dev(pc, 4 * KiB, 3));
    outc(K + "importerFree", cuMemFree(pc));
  }
  r = cuMemPoolImportPointer(&py, P1, &Ey);
  outc(K + "importAllocFreedByExporter", r);
  if (!r) {
    out(K + "importAllocFreedByExporter.read", cmp_dev(py, 4 * KiB, 4));
    outc(K + "importAllocFreedByExporter.free", cuMemFree(py));
  }
  send_tag(ch, "done");
}

static void child_poolnull(Chan& ch, const std::string& cs) {
  const std::string K = "poolptr.dev.null." + cs;
  int F1 = recv_fd(ch);
  CUmemPoolPtrExportData Ea;
  if (!recv_bytes(ch, &Ea, 64) || F1 < 0) { out(K, "proto_lost"); return; }
  if (cs == "importPoolNullOut") {
    outc(K, cuMemPoolImportFromShareableHandle(nullptr, fdh(F1), POSIX, 0));
    return;
  }
  CUmemoryPool P1 = nullptr;
  cuMemPoolImportFromShareableHandle(&P1, fdh(F1), POSIX, 0);
  CUmemAccessDesc d = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  if (P1) cuMemPoolSetAccess(P1, &d, 1);
  CUdeviceptr x = 0;
  if (cs == "importPtrNullOut") outc(K, cuMemPoolImportPointer(nullptr, P1, &Ea));
  else if (cs == "importPtrNullPool") outc(K, cuMemPoolImportPointer(&x, nullptr, &Ea));
  else if (cs == "importPtrNullData") outc(K, cuMemPoolImportPointer(&x, P1, nullptr));
}

// =========================================================================================
// B. VMM
// =========================================================================================
static void vmm_create_case(const std::string& k, size_t size, CUmemAllocationProp p, unsigned long long flags = 0) {
  CUmemGenericAllocationHandle h = 0;
  CUresult r = cuMemCreate(&h, size, &p, flags);
  out(k, r ? std::string(nm(r)) : std::string(nm(r)) + " props=" + handle_props(h));
  if (!r) cuMemRelease(h);
}
static void vmm_reserve_case(const std::string& k, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags = 0) {
  CUdeviceptr p = 0;
  CUresult r = cuMemAddressReserve(&p, size, align, addr, flags);
  std::string extra;
  if (addr) extra += std::string("hint=") + (p == addr ? "honored" : "ignored");
  if (align) extra += std::string(extra.empty() ? "" : " ") + (p % align == 0 ? "aligned" : "unaligned");
  out(k, cx(r, extra));
  if (!r) cuMemAddressFree(p, size);
}
static void vmm_map_case(const std::string& k, CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h,
                         unsigned long long flags = 0) {
  CUresult r = cuMemMap(p, size, off, h, flags);
  outc(k, r);
  if (!r) cuMemUnmap(p, size);
}

static void probe_vmm() {
  const std::string K = "vmm.";
  const char* opts[2] = {"min", "rec"};
  for (const LocSpec& L : kLocs)
    for (int o = 0; o < 2; o++) {
      CUmemAllocationProp p = vm_props(L.type, L.id, CU_MEM_HANDLE_TYPE_NONE);
      size_t g = 0;
      CUresult r = cuMemGetAllocationGranularity(&g, &p, (CUmemAllocationGranularity_flags)o);
      out(K + "gran." + L.name + "." + opts[o], cx(r, u64(g)));
    }
  {
    size_t g = 0;
    CUmemAllocationProp p = vm_props((CUmemLocationType)0x77, 0, 0);
    CUresult r = cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    out(K + "gran.badLocType", cx(r, u64(g)));
    g = 0;
    p = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 99, 0);
    r = cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    out(K + "gran.badDevice", cx(r, u64(g)));
    g = 0;
    p = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    r = cuMemGetAllocationGranularity(&g, &p, (CUmemAllocationGranularity_flags)5);
    out(K + "gran.badOption", cx(r, u64(g)));
  }
  // cuMemCreate
  CUmemAllocationProp pd = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_NONE);
  vmm_create_case(K + "create.size0", 0, pd);
  vmm_create_case(K + "create.size1M", MiB, pd);
  vmm_create_case(K + "create.size2M", 2 * MiB, pd);
  vmm_create_case(K + "create.size3M", 3 * MiB, pd);
  vmm_create_case(K + "create.locInvalid", 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_INVALID, 0, 0));
  vmm_create_case(K + "create.badDevice", 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 99, 0));
  const struct { const char* n; unsigned t; } hts[] = {{"none", 0}, {"posix", 1}, {"fabric", 8}, {"win32", 2},
                                                        {"posixFabric", 9}, {"garbage0x40", 0x40}};
  for (auto& h : hts) vmm_create_case(K + "create.ht." + h.n, 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, h.t));
  vmm_create_case(K + "create.flags1", 2 * MiB, pd, 1);
  {
    CUmemAllocationProp p = pd;
    p.allocFlags.gpuDirectRDMACapable = 1;
    vmm_create_case(K + "create.rdma", 2 * MiB, p);
    p = pd;
    p.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
    vmm_create_case(K + "create.compGeneric", 2 * MiB, p);
  }
  vmm_create_case(K + "create.host", 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_HOST, 0, 0));
  vmm_create_case(K + "create.host.posix", 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_HOST, 0, POSIX));
  vmm_create_case(K + "create.numa", 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, 0));
  vmm_create_case(K + "create.numa.posix", 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, POSIX));
  vmm_create_case(K + "create.numa99", 2 * MiB, vm_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 99, 0));
  // cuMemAddressReserve
  vmm_reserve_case(K + "reserve.size0", 0, 0, 0);
  vmm_reserve_case(K + "reserve.size1M", MiB, 0, 0);
  vmm_reserve_case(K + "reserve.align0", 2 * MiB, 0, 0);
  vmm_reserve_case(K + "reserve.align4K", 2 * MiB, 4096, 0);
  vmm_reserve_case(K + "reserve.alignNotPow2", 6 * MiB, 3 * MiB, 0);
  vmm_reserve_case(K + "reserve.align64M", 2 * MiB, 64 * MiB, 0);
  vmm_reserve_case(K + "reserve.flags1", 2 * MiB, 0, 0, 1);
  CUdeviceptr X = 0;
  cuMemAddressReserve(&X, 2 * MiB, 0, 0, 0);
  cuMemAddressFree(X, 2 * MiB);
  vmm_reserve_case(K + "reserve.addrHint", 2 * MiB, 0, X);
  // mapping
  CUmemGenericAllocationHandle H = 0, Hn = 0;
  CUmemAllocationProp pp = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, POSIX);
  CUresult r = cuMemCreate(&H, 2 * MiB, &pp, 0);
  outc(K + "map.create", r);
  if (r) return;
  cuMemCreate(&Hn, 2 * MiB, &pd, 0);
  CUdeviceptr V = 0, m = 0;
  cuMemAlloc(&m, 2 * MiB);
  outc(K + "map.reserve", cuMemAddressReserve(&V, 4 * MiB, 0, 0, 0));
  // X: a freed range; nothing is reserved after it until its cases are done
  cuMemAddressReserve(&X, 2 * MiB, 0, 0, 0);
  cuMemAddressFree(X, 2 * MiB);
  vmm_map_case(K + "map.offset4K", V, 2 * MiB, 4096, H);
  vmm_map_case(K + "map.offset2M", V, 2 * MiB, 2 * MiB, H);
  vmm_map_case(K + "map.sizeSmall", V, MiB, 0, H);
  vmm_map_case(K + "map.sizeBig", V, 4 * MiB, 0, H);
  vmm_map_case(K + "map.flags1", V, 2 * MiB, 0, H, 1);
  vmm_map_case(K + "map.unaligned", V + 4096, 2 * MiB, 0, H);
  vmm_map_case(K + "map.outsideReservation", X, 2 * MiB, 0, H);
  vmm_map_case(K + "map.pastEnd", V + 4 * MiB, 2 * MiB, 0, H);
  CUresult mapped = cuMemMap(V, 2 * MiB, 0, H, 0);
  outc(K + "map.ok", mapped);
  outc(K + "map.twice", cuMemMap(V, 2 * MiB, 0, H, 0));
  // access
  CUmemLocation l0 = mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 0), lh = mkloc(CU_MEM_LOCATION_TYPE_HOST, 0);
  unsigned long long af = 0x77;
  r = cuMemGetAccess(&af, &l0, V);
  out(K + "access.before", cx(r, u64(af)));
  af = 0x77;
  r = cuMemGetAccess(&af, &lh, V);
  out(K + "access.host.before", cx(r, u64(af)));
  CUmemAccessDesc d = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  outc(K + "setAccess.count0", cuMemSetAccess(V, 2 * MiB, &d, 0));
  outc(K + "setAccess.partial", cuMemSetAccess(V, MiB, &d, 1));
  CUmemAccessDesc bad = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0, 7);
  outc(K + "setAccess.badFlags", cuMemSetAccess(V, 2 * MiB, &bad, 1));
  bad = adesc(CU_MEM_LOCATION_TYPE_HOST, 0);
  outc(K + "setAccess.hostLocation", cuMemSetAccess(V, 2 * MiB, &bad, 1));
  bad = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 1);
  outc(K + "setAccess.device1", cuMemSetAccess(V, 2 * MiB, &bad, 1));
  bad = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 99);
  outc(K + "setAccess.device99", cuMemSetAccess(V, 2 * MiB, &bad, 1));
  outc(K + "setAccess.unmappedRange", cuMemSetAccess(V + 2 * MiB, 2 * MiB, &d, 1));
  CUresult acc = cuMemSetAccess(V, 2 * MiB, &d, 1);
  outc(K + "setAccess.ok", acc);
  bool usable = !mapped && !acc;  // copies only into mapped, accessible memory
  af = 0x77;
  r = cuMemGetAccess(&af, &l0, V);
  out(K + "access.after", cx(r, u64(af)));
  af = 0x77;
  r = cuMemGetAccess(&af, &l0, V + 2 * MiB);
  out(K + "access.unmapped", cx(r, u64(af)));
  if (usable) {
    outc(K + "rw.write", put_dev(V, 64 * KiB, 21));
    out(K + "rw.read", cmp_dev(V, 64 * KiB, 21));
  }
  ptr_attrs(K + "attr.", V + 4096, V);
  // retain
  auto retain = [&](const std::string& k, CUdeviceptr p) {
    CUmemGenericAllocationHandle h = 0;
    CUresult q = cuMemRetainAllocationHandle(&h, (void*)p);
    out(K + "retain." + k, cx(q, sd(h == H)));
    if (!q) cuMemRelease(h);
  };
  retain("base", V);
  retain("interior", V + 4096);
  retain("unmappedInReservation", V + 2 * MiB);
  retain("unreserved", X);
  outc(K + "addressFree.notReserved", cuMemAddressFree(X, 2 * MiB));
  retain("cuMemAlloc", m);
  out(K + "props", handle_props(H));
  if (Hn) out(K + "props.noneHandle", handle_props(Hn));
  // export
  int fd1 = -1, fd2 = -1, tmp = -1;
  r = cuMemExportToShareableHandle(&fd1, H, POSIX, 0);
  outc(K + "export.posix", r);
  if (!r) {
    out(K + "export.posix.cloexec", cloexec(fd1));
    out(K + "export.posix.fdKind", fdkind(fd1));
  }
  r = cuMemExportToShareableHandle(&fd2, H, POSIX, 0);
  out(K + "export.posixTwice", cx(r, std::string("fd=") + (fd1 != fd2 ? "different " : "same ") + inode_rel(fd1, fd2)));
  r = cuMemExportToShareableHandle(&tmp, Hn, POSIX, 0);
  outc(K + "export.notRequested", r);
  if (!r && tmp >= 0) close(tmp);
  {
    CUmemFabricHandle fh;
    memset(&fh, 0, sizeof fh);
    outc(K + "export.fabricNotRequested", cuMemExportToShareableHandle(&fh, H, FABRIC, 0));
    memset(&fh, 0, sizeof fh);
    outc(K + "export.typeNone", cuMemExportToShareableHandle(&fh, H, CU_MEM_HANDLE_TYPE_NONE, 0));
  }
  tmp = -1;
  r = cuMemExportToShareableHandle(&tmp, H, POSIX, 1);
  outc(K + "export.flags1", r);
  if (!r && tmp >= 0) close(tmp);
  // a pool's fd for the importer's negative case
  CUmemoryPool PP = nullptr;
  CUmemPoolProps ppp = pool_props(kLocs[0], POSIX);
  int pfd = -1;
  if (cuMemPoolCreate(&PP, &ppp) == CUDA_SUCCESS) cuMemPoolExportToShareableHandle(&pfd, PP, POSIX, 0);
  {
    Child ch = spawn_child("vmmimp");
    send_fd(ch.ch, fd1);
    send_fd(ch.ch, fd2);
    send_fd(ch.ch, pfd);
    int w = await_write(ch.ch, K + "parent");
    if (w >= 0) {
      out(K + "child.exporterSeesImporterWrite", !usable ? "exporterNotMapped" : w ? cmp_dev(V, 64 * KiB, 22) : "importerDidNotWrite");
      send_tag(ch.ch, "ack");
    }
    finish_child(ch);
  }
  if (pfd >= 0) close(pfd);
  if (PP) cuMemPoolDestroy(PP);
  // release / unmap / free
  outc(K + "releaseWhileMapped", cuMemRelease(H));
  if (usable) out(K + "releaseWhileMapped.read", cmp_dev(V, 64 * KiB, 22));
  {
    CUmemGenericAllocationHandle h = 0;
    CUresult q = cuMemRetainAllocationHandle(&h, (void*)V);
    outc(K + "releaseWhileMapped.retain", q);
    if (!q) cuMemRelease(h);
  }
  outc(K + "unmap.partial", cuMemUnmap(V, MiB));
  outc(K + "unmap.full", cuMemUnmap(V, 2 * MiB));
  outc(K + "unmap.twice", cuMemUnmap(V, 2 * MiB));
  outc(K + "addressFree", cuMemAddressFree(V, 4 * MiB));
  outc(K + "addressFree.twice", cuMemAddressFree(V, 4 * MiB));
  {
    Vmm w;
    CUresult q = vmm_make(w, 2 * MiB, 0);
    if (!q) {
      outc(K + "addressFree.whileMapped", cuMemAddressFree(w.va, 2 * MiB));
      outc(K + "addressFree.whileMapped.unmapAfter", cuMemUnmap(w.va, 2 * MiB));
      cuMemAddressFree(w.va, 2 * MiB);
      cuMemRelease(w.h);
    } else {
      outc(K + "addressFree.whileMapped", q);
    }
  }
  outc(K + "addressFree.cuMemAlloc", cuMemAddressFree(m, 2 * MiB));
  cuMemFree(m);
  if (Hn) cuMemRelease(Hn);
  if (fd1 >= 0) close(fd1);
  if (fd2 >= 0) close(fd2);
}

static void child_vmmimp(Chan& ch) {
  const std::string K = "vmm.child.";
  int fd1 = recv_fd(ch), fd2 = recv_fd(ch), pfd = recv_fd(ch);
  if (fd1 < 0) { out(K + "import", "nofd"); return; }
  CUmemGenericAllocationHandle h1 = 0, h2 = 0, h3 = 0, x = 0;
  CUresult r = cuMemImportFromShareableHandle(&h1, fdh(fd1), POSIX);
  outc(K + "import", r);
  out(K + "import.fdAfter", fdstate(fd1));
  r = cuMemImportFromShareableHandle(&h2, fdh(fd1), POSIX);
  out(K + "import.sameFdAgain", cx(r, sd(h2 == h1)));
  if (fd2 >= 0) {
    r = cuMemImportFromShareableHandle(&h3, fdh(fd2), POSIX);
    out(K + "import.secondExport", cx(r, sd(h3 == h1)));
  }
  CUdeviceptr V = 0;
  bool wrote = false;
  if (h1) {
    out(K + "props", handle_props(h1));
    cuMemAddressReserve(&V, 4 * MiB, 0, 0, 0);
    CUresult mr = cuMemMap(V, 2 * MiB, 0, h1, 0);
    outc(K + "map", mr);
    CUmemLocation l0 = mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    unsigned long long af = 0x77;
    r = cuMemGetAccess(&af, &l0, V);
    out(K + "access.before", cx(r, u64(af)));
    CUmemAccessDesc d = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    CUresult ar = cuMemSetAccess(V, 2 * MiB, &d, 1);
    outc(K + "setAccess", ar);
    wrote = !mr && !ar;
    if (wrote) {
      out(K + "read", cmp_dev(V, 64 * KiB, 21));
      outc(K + "write", put_dev(V, 64 * KiB, 22));
      cuCtxSynchronize();
    }
  }
  send_tag(ch, wrote ? "written" : "skipped");
  wait_tag(ch, "ack", K + "child");
  if (V) {
    ptr_attrs(K + "attr.", V + 4096, V);
    CUmemGenericAllocationHandle rh = 0;
    r = cuMemRetainAllocationHandle(&rh, (void*)V);
    out(K + "retain", cx(r, sd(rh == h1)));
    if (!r) cuMemRelease(rh);
  }
  auto neg = [&](const std::string& n, int fd, unsigned t) {
    x = 0;
    CUresult q = cuMemImportFromShareableHandle(&x, fdh(fd), (CUmemAllocationHandleType)t);
    out(K + "import." + n, cx(q, "sameHandle=" + sd(x == h1)));
    if (!q && x != h1) cuMemRelease(x);
  };
  neg("typeNone", fd1, CU_MEM_HANDLE_TYPE_NONE);
  neg("fdMinus1", -1, POSIX);
  int mf = make_memfd();
  neg("memfd", mf, POSIX);
  int dn = open("/dev/null", O_RDWR);
  neg("devNull", dn, POSIX);
  if (pfd >= 0) neg("poolFd", pfd, POSIX);
  else out(K + "import.poolFd", "nofd");
  neg("closedFd", closed_fd_number(), POSIX);
  if (V) {
    outc(K + "unmap", cuMemUnmap(V, 2 * MiB));
    cuMemAddressFree(V, 4 * MiB);
  }
  if (h1) outc(K + "release", cuMemRelease(h1));
  if (h2) outc(K + "release.sameFdAgain", cuMemRelease(h2));
  if (h3) outc(K + "release.secondExport", cuMemRelease(h3));
  if (mf >= 0) close(mf);
  if (dn >= 0) close(dn);
}

// =========================================================================================
// C. Legacy IPC: memory
// =========================================================================================
static void probe_ipc_mem() {
  const std::string K = "ipc.";
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, MiB);
  outr(K + "malloc", e);
  if (e) return;
  put_dev((CUdeviceptr)p, MiB, 31);
  cudaIpcMemHandle_t h, h2, hi, x;
  memset(&h, 0, sizeof h); memset(&h2, 0, sizeof h2); memset(&hi, 0, sizeof hi);
  outr(K + "get.malloc", cudaIpcGetMemHandle(&h, p));
  e = cudaIpcGetMemHandle(&h2, p);
  out(K + "get.twice", rx(e, ident(&h, &h2, sizeof h)));
  e = cudaIpcGetMemHandle(&hi, (char*)p + 4096);
  out(K + "get.interior", rx(e, ident(&h, &hi, sizeof h)));
  CUipcMemHandle hd, hdi;
  memset(&hd, 0, sizeof hd);
  CUresult r = cuIpcGetMemHandle(&hd, (CUdeviceptr)p);
  out(K + "cuGet.malloc", cx(r, ident(&h, &hd, sizeof h)));
  r = cuIpcGetMemHandle(&hdi, (CUdeviceptr)p + 4096);
  out(K + "cuGet.interior", cx(r, ident(&hi, &hdi, sizeof h)));
  void* hp = nullptr;
  cudaMallocHost(&hp, 4 * KiB);
  outr(K + "get.hostPinned", cudaIpcGetMemHandle(&x, hp));
  void* ap = nullptr;
  cudaMallocAsync(&ap, 4 * KiB, nullptr);
  cudaStreamSynchronize(nullptr);
  outr(K + "get.poolAsync", cudaIpcGetMemHandle(&x, ap));
  Vmm v;
  if (vmm_make(v, 2 * MiB, 0) == CUDA_SUCCESS) outr(K + "get.vmm", cudaIpcGetMemHandle(&x, (void*)v.va));
  else out(K + "get.vmm", "vmm_setup_failed");
  void* mp = nullptr;
  cudaMallocManaged(&mp, 4 * KiB, cudaMemAttachGlobal);
  outr(K + "get.managed", cudaIpcGetMemHandle(&x, mp));
  outr(K + "get.garbage", cudaIpcGetMemHandle(&x, (void*)0x1234));
  outr(K + "get.null", cudaIpcGetMemHandle(&x, nullptr));
  for (auto pr : {std::make_pair("malloc", p), std::make_pair("poolAsync", ap), std::make_pair("vmm", (void*)v.va),
                  std::make_pair("hostPinned", hp), std::make_pair("managed", mp)}) {
    unsigned long long c = 0;
    CUresult q = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, (CUdeviceptr)pr.second);
    out(K + "legacyCapable." + pr.first, q ? nm(q) : u64(c));
  }
  void* q = nullptr;
  e = cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess);
  outr(K + "open.sameProcess", e);
  if (!e) cudaIpcCloseMemHandle(q);
  CUdeviceptr dq = 0;
  r = cuIpcOpenMemHandle(&dq, hd, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  outc(K + "cuOpen.sameProcess", r);
  if (!r) cuIpcCloseMemHandle(dq);
  void* f = nullptr;
  cudaIpcMemHandle_t hf;
  memset(&hf, 0, sizeof hf);
  cudaMalloc(&f, MiB);
  cudaIpcGetMemHandle(&hf, f);
  outr(K + "freeBeforeChildOpens", cudaFree(f));
  {
    Child ch = spawn_child("ipcmem");
    send_bytes(ch.ch, &h, sizeof h);
    send_bytes(ch.ch, &hi, sizeof hi);
    send_bytes(ch.ch, &hf, sizeof hf);
    send_bytes(ch.ch, &hd, sizeof hd);
    int w = await_write(ch.ch, K + "parent");
    if (w >= 0) {
      cudaDeviceSynchronize();
      out(K + "child.exporterSeesImporterWrite", w ? cmp_dev((CUdeviceptr)p, 64 * KiB, 32) : "importerDidNotWrite");
      send_tag(ch.ch, "ack");
    }
    finish_child(ch);
  }
  cudaFree(p);
  cudaFreeHost(hp);
  cudaFreeAsync(ap, nullptr);
  cudaFree(mp);
  vmm_drop(v);
  cudaDeviceSynchronize();
}

static void child_ipcmem(Chan& ch) {
  const std::string K = "ipc.child.";
  cudaIpcMemHandle_t h, hi, hf;
  CUipcMemHandle hd;
  if (!recv_bytes(ch, &h, sizeof h) || !recv_bytes(ch, &hi, sizeof hi) || !recv_bytes(ch, &hf, sizeof hf) ||
      !recv_bytes(ch, &hd, sizeof hd)) {
    out(K + "proto", "lost_at_start");
    return;
  }
  void *q1 = nullptr, *qi = nullptr, *q2 = nullptr, *q3 = nullptr, *q4 = nullptr;
  cudaError_t e = cudaIpcOpenMemHandle(&q1, h, cudaIpcMemLazyEnablePeerAccess);
  outr(K + "open.lazy", e);
  if (!e) {
    out(K + "read", cmp_dev((CUdeviceptr)q1, 64 * KiB, 31));
    outc(K + "write", put_dev((CUdeviceptr)q1, 64 * KiB, 32));
    cudaDeviceSynchronize();
  }
  send_tag(ch, q1 ? "written" : "skipped");
  wait_tag(ch, "ack", K + "child");
  if (q1) ptr_attrs(K + "attr.", (CUdeviceptr)q1 + 4096, (CUdeviceptr)q1);
  e = cudaIpcOpenMemHandle(&qi, hi, cudaIpcMemLazyEnablePeerAccess);
  outr(K + "open.interior", e);
  if (!e && q1) {
    out(K + "open.interior.offset", i64((long long)((char*)qi - (char*)q1)));
    unsigned char got[16], at0[16], at4k[16];
    CUresult r = cuMemcpyDtoH(got, (CUdeviceptr)qi, 16);
    pattern(at0, 16, 32, 0);
    pattern(at4k, 16, 32, 4096);
    out(K + "open.interior.dataAt", r ? nm(r) : !memcmp(got, at0, 16) ? "base" : !memcmp(got, at4k, 16) ? "interior" : "other");
  }
  e = cudaIpcOpenMemHandle(&q2, h, 0);
  out(K + "open.flags0", rx(e, sd(q2 == q1)));
  e = cudaIpcOpenMemHandle(&q3, h, 2);
  out(K + "open.flags2", rx(e, sd(q3 == q1)));
  e = cudaIpcOpenMemHandle(&q4, h, cudaIpcMemLazyEnablePeerAccess);
  out(K + "open.twice", rx(e, sd(q4 == q1)));
  CUdeviceptr dq = 0;
  CUresult r = cuIpcOpenMemHandle(&dq, hd, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  out(K + "cuOpen", cx(r, sd((void*)dq == q1)));
  if (q1) out(K + "readAfterReopens", cmp_dev((CUdeviceptr)q1, 64 * KiB, 32));
  if (dq) outc(K + "close.cuOpen", cuIpcCloseMemHandle(dq));
  if (q4) outr(K + "close.twiceOpen", cudaIpcCloseMemHandle(q4));
  if (q3) outr(K + "close.flags2", cudaIpcCloseMemHandle(q3));
  if (q2) outr(K + "close.flags0", cudaIpcCloseMemHandle(q2));
  if (qi) outr(K + "close.interior", cudaIpcCloseMemHandle(qi));
  if (q1) {
    out(K + "readBeforeLastClose", cmp_dev((CUdeviceptr)q1, 64 * KiB, 32));
    outr(K + "close.first", cudaIpcCloseMemHandle(q1));
    outr(K + "close.again", cudaIpcCloseMemHandle(q1));
  }
  void* m = nullptr;
  cudaMalloc(&m, 4 * KiB);
  outr(K + "close.nonIpc", cudaIpcCloseMemHandle(m));
  cudaFree(m);
  void* qf = nullptr;
  e = cudaIpcOpenMemHandle(&qf, hf, cudaIpcMemLazyEnablePeerAccess);
  outr(K + "open.freedByExporter", e);
  if (!e) cudaIpcCloseMemHandle(qf);
  cudaIpcMemHandle_t z;
  memset(&z, 0, sizeof z);
  void* qz = nullptr;
  e = cudaIpcOpenMemHandle(&qz, z, cudaIpcMemLazyEnablePeerAccess);
  outr(K + "open.zeroHandle", e);
  if (!e) cudaIpcCloseMemHandle(qz);
}

// =========================================================================================
// C. Legacy IPC: events
// =========================================================================================
static void probe_ipc_event() {
  const std::string K = "ipcev.";
  cudaIpcEventHandle_t eh, eh2, x;
  memset(&eh, 0, sizeof eh);
  memset(&eh2, 0, sizeof eh2);
  cudaEvent_t e0 = nullptr, e1 = nullptr, e2 = nullptr;
  cudaEventCreateWithFlags(&e0, cudaEventDefault);
  outr(K + "get.noInterprocess", cudaIpcGetEventHandle(&x, e0));
  cudaEventDestroy(e0);
  cudaError_t e = cudaEventCreateWithFlags(&e1, cudaEventInterprocess);
  outr(K + "create.interprocessTiming", e);
  if (!e) {
    outr(K + "get.interprocessTiming", cudaIpcGetEventHandle(&x, e1));
    cudaEventDestroy(e1);
  }
  e = cudaEventCreateWithFlags(&e2, cudaEventInterprocess | cudaEventDisableTiming);
  outr(K + "create.interprocess", e);
  if (e) return;
  outr(K + "get", cudaIpcGetEventHandle(&eh, e2));
  e = cudaIpcGetEventHandle(&eh2, e2);
  out(K + "get.twice", rx(e, ident(&eh, &eh2, sizeof eh)));
  cudaEvent_t so = nullptr;
  e = cudaIpcOpenEventHandle(&so, eh);
  outr(K + "open.sameProcess", e);
  if (!e) out(K + "open.sameProcess.handle", sd(so == e2));
  if (!e && so != e2) cudaEventDestroy(so);
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  Child ch = spawn_child("ipcevent");
  send_bytes(ch.ch, &eh, sizeof eh);
  if (wait_tag(ch.ch, "opened", "ipcevent")) {
    outc(K + "hostFunc", cuLaunchHostFunc((CUstream)s, sleep300, nullptr));
    outr(K + "record", cudaEventRecord(e2, s));
    send_tag(ch.ch, "recorded");
    if (wait_tag(ch.ch, "done", "ipcevent")) {
      cudaStreamSynchronize(s);
      outr(K + "parentQueryAfterChild", cudaEventQuery(e2));
    }
  }
  finish_child(ch);
  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  outr(K + "destroy", cudaEventDestroy(e2));
}

static void child_ipcevent(Chan& ch) {
  const std::string K = "ipcev.child.";
  cudaIpcEventHandle_t eh;
  if (!recv_bytes(ch, &eh, sizeof eh)) { out(K + "proto", "lost_at_start"); return; }
  cudaEvent_t ev = nullptr, ev2 = nullptr;
  outr(K + "open", cudaIpcOpenEventHandle(&ev, eh));
  cudaError_t e = cudaIpcOpenEventHandle(&ev2, eh);
  out(K + "open.twice", rx(e, sd(ev2 == ev)));
  if (ev) outr(K + "queryBeforeRecord", cudaEventQuery(ev));
  send_tag(ch, "opened");
  if (!wait_tag(ch, "recorded", K + "child")) return;
  cudaStream_t cs = nullptr;
  cudaStreamCreate(&cs);
  if (ev) {
    outr(K + "queryPending", cudaEventQuery(ev));
    outr(K + "streamWait", cudaStreamWaitEvent(cs, ev, 0));
    outr(K + "streamQueryPending", cudaStreamQuery(cs));
    outr(K + "sync", cudaEventSynchronize(ev));
    outr(K + "queryAfterSync", cudaEventQuery(ev));
    outr(K + "streamSync", cudaStreamSynchronize(cs));
    float ms = 0;
    outr(K + "elapsed", cudaEventElapsedTime(&ms, ev, ev));
    outr(K + "recordInChild", cudaEventRecord(ev, cs));
    outr(K + "recordInChild.sync", cudaStreamSynchronize(cs));
    outr(K + "queryAfterChildRecord", cudaEventQuery(ev));
    if (ev2 && ev2 != ev) outr(K + "destroy.second", cudaEventDestroy(ev2));
    outr(K + "destroy", cudaEventDestroy(ev));
  }
  cudaStreamDestroy(cs);
  send_tag(ch, "done");
}

// =========================================================================================
// D. Fabric
// =========================================================================================
static void probe_fabric() {
  const std::string K = "fabric.";
  DIR* dir = opendir("/dev/nvidia-caps-imex-channels");
  out(K + "imexChannelsDir", dir ? "yes" : "no");
  if (dir) {
    std::vector<std::string> names;
    while (struct dirent* de = readdir(dir))
      if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) names.push_back(de->d_name);
    closedir(dir);
    std::sort(names.begin(), names.end());
    std::string s;
    for (auto& n : names) s += (s.empty() ? "" : ",") + n;
    out(K + "imexChannels", s.empty() ? "(empty)" : s);
  }
  int av = -1;
  CUresult r = cuDeviceGetAttribute(&av, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0);
  out(K + "attr.handleTypeFabricSupported", cx(r, i64(av)));
  CUmemFabricHandle pfh, vfh, z;
  memset(&pfh, 0, sizeof pfh); memset(&vfh, 0, sizeof vfh); memset(&z, 0, sizeof z);
  bool pool_ok = false, vmm_ok = false;
  CUmemoryPool pf = nullptr, ppf = nullptr;
  CUmemPoolProps a = pool_props(kLocs[0], FABRIC), b = pool_props(kLocs[0], POSIX | FABRIC);
  outc(K + "pool.create.fabric", cuMemPoolCreate(&pf, &a));
  outc(K + "pool.create.posixFabric", cuMemPoolCreate(&ppf, &b));
  if (pf) {
    r = cuMemPoolExportToShareableHandle(&pfh, pf, FABRIC, 0);
    outc(K + "pool.fabric.exportFabric", r);
    pool_ok = r == CUDA_SUCCESS;
    int fd = -1;
    r = cuMemPoolExportToShareableHandle(&fd, pf, POSIX, 0);
    outc(K + "pool.fabric.exportPosix", r);
    if (!r && fd >= 0) close(fd);
  }
  if (ppf) {
    CUmemFabricHandle t;
    outc(K + "pool.posixFabric.exportFabric", cuMemPoolExportToShareableHandle(&t, ppf, FABRIC, 0));
    int fd = -1;
    r = cuMemPoolExportToShareableHandle(&fd, ppf, POSIX, 0);
    outc(K + "pool.posixFabric.exportPosix", r);
    if (!r && fd >= 0) close(fd);
  }
  CUmemGenericAllocationHandle h = 0, hi = 0;
  CUmemAllocationProp p = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, FABRIC);
  r = cuMemCreate(&h, 2 * MiB, &p, 0);
  outc(K + "vmm.create", r);
  bool created = r == CUDA_SUCCESS;
  if (created) {
    r = cuMemExportToShareableHandle(&vfh, h, FABRIC, 0);
    outc(K + "vmm.exportFabric", r);
    vmm_ok = r == CUDA_SUCCESS;
    if (vmm_ok) {
      r = cuMemImportFromShareableHandle(&hi, &vfh, FABRIC);
      out(K + "vmm.importSameProcess", cx(r, sd(hi == h)));
      if (!r && hi != h) cuMemRelease(hi);
    }
  }
  if (pool_ok || vmm_ok) {
    Child ch = spawn_child("fabricimp");
    unsigned char flags[2] = {(unsigned char)vmm_ok, (unsigned char)pool_ok};
    send_bytes(ch.ch, flags, 2);
    send_bytes(ch.ch, &vfh, 64);
    send_bytes(ch.ch, &pfh, 64);
    finish_child(ch);
  }
  if (created) outc(K + "vmm.release", cuMemRelease(h));
  // pf/ppf stay alive: on 580 without an IMEX channel, destroying a fabric pool after a
  // failed fabric export segfaults (measured by the risky.*FabricPoolDestroy* children)
  CUmemGenericAllocationHandle zh = 0;
  r = cuMemImportFromShareableHandle(&zh, &z, FABRIC);
  outc(K + "vmm.importZeroed", r);
  if (!r) cuMemRelease(zh);
  CUmemoryPool zp = nullptr;
  outc(K + "pool.importZeroed", cuMemPoolImportFromShareableHandle(&zp, &z, FABRIC, 0));

  out(K + "end", "reached");  // a crash after this line is at process exit
}

static void child_fabricimp(Chan& ch) {
  const std::string K = "fabric.child.";
  unsigned char flags[2];
  CUmemFabricHandle vfh, pfh;
  if (!recv_bytes(ch, flags, 2) || !recv_bytes(ch, &vfh, 64) || !recv_bytes(ch, &pfh, 64)) {
    out(K + "proto", "lost_at_start");
    return;
  }
  if (flags[0]) {
    CUmemGenericAllocationHandle h = 0;
    CUresult r = cuMemImportFromShareableHandle(&h, &vfh, FABRIC);
    outc(K + "vmm.import", r);
    if (!r) out(K + "vmm.props", handle_props(h)), cuMemRelease(h);
  }
  if (flags[1]) {
    CUmemoryPool p = nullptr;
    CUresult r = cuMemPoolImportFromShareableHandle(&p, &pfh, FABRIC, 0);
    outc(K + "pool.import", r);
    if (!r) cuMemPoolDestroy(p);
  }
}

// =========================================================================================
// E. Two devices
// =========================================================================================
static void probe_twodev(CUcontext c0) {
  const std::string K = "twodev.";
  if (g_ndev < 2) { out(K + "skipped", "devices=" + i64(g_ndev)); return; }
  CUcontext c1 = nullptr;
  cuDevicePrimaryCtxRetain(&c1, 1);
  cuCtxSetCurrent(c1);
  LocSpec L1 = {"dev1", CU_MEM_LOCATION_TYPE_DEVICE, 1};
  CUmemPoolProps pp = pool_props(L1, POSIX);
  CUmemoryPool P = nullptr;
  outc(K + "pool.create", cuMemPoolCreate(&P, &pp));
  int fd = -1;
  CUdeviceptr a = 0;
  CUmemPoolPtrExportData E;
  memset(&E, 0, 64);
  if (P) {
    outc(K + "pool.export", cuMemPoolExportToShareableHandle(&fd, P, POSIX, 0));
    cuMemAllocFromPoolAsync(&a, 4 * KiB, P, nullptr);
    cuStreamSynchronize(nullptr);
    put_dev(a, 4 * KiB, 41);
    outc(K + "pool.exportPtr", cuMemPoolExportPointer(&E, a));
  }
  cudaSetDevice(1);
  void* m = nullptr;
  cudaIpcMemHandle_t h;
  memset(&h, 0, sizeof h);
  outr(K + "ipc.malloc", cudaMalloc(&m, MiB));
  if (m) put_dev((CUdeviceptr)m, 64 * KiB, 42);
  outr(K + "ipc.get", cudaIpcGetMemHandle(&h, m));
  cudaSetDevice(0);
  cuCtxSetCurrent(c0);
  Child ch = spawn_child("twodev");
  send_fd(ch.ch, fd);
  send_bytes(ch.ch, &E, 64);
  send_bytes(ch.ch, &h, sizeof h);
  finish_child(ch);
  cuCtxSetCurrent(c1);
  if (a) cuMemFreeAsync(a, nullptr);
  cuStreamSynchronize(nullptr);
  if (P) cuMemPoolDestroy(P);
  if (m) cudaFree(m);
  if (fd >= 0) close(fd);
  cudaSetDevice(0);
  cuCtxSetCurrent(c0);
}

static void child_twodev(Chan& ch) {
  const std::string K = "twodev.child.";
  int fd = recv_fd(ch);
  CUmemPoolPtrExportData E;
  cudaIpcMemHandle_t h;
  if (!recv_bytes(ch, &E, 64) || !recv_bytes(ch, &h, sizeof h)) { out(K + "proto", "lost_at_start"); return; }
  CUmemoryPool P = nullptr;
  CUresult r = fd >= 0 ? cuMemPoolImportFromShareableHandle(&P, fdh(fd), POSIX, 0) : CUDA_ERROR_INVALID_VALUE;
  outc(K + "pool.import", r);
  if (P) {
    for (int dv = 0; dv < 2; dv++) {
      CUmemLocation l = mkloc(CU_MEM_LOCATION_TYPE_DEVICE, dv);
      CUmemAccess_flags f = (CUmemAccess_flags)0x77;
      r = cuMemPoolGetAccess(&f, P, &l);
      out(K + "pool.access.dev" + i64(dv), cx(r, u64(f)));
    }
    CUmemAccessDesc d1 = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 1), d0 = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    outc(K + "pool.setAccess.dev1", cuMemPoolSetAccess(P, &d1, 1));
    outc(K + "pool.setAccess.dev0", cuMemPoolSetAccess(P, &d0, 1));
    CUdeviceptr pa = 0;
    r = cuMemPoolImportPointer(&pa, P, &E);
    outc(K + "pool.importPtr", r);
    if (!r) {
      out(K + "pool.read", cmp_dev(pa, 4 * KiB, 41));
      unsigned long long o = 0;
      CUresult q = cuPointerGetAttribute(&o, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pa);
      out(K + "pool.deviceOrdinal", q ? nm(q) : u64(o));
      outc(K + "pool.free", cuMemFree(pa));
    }
    cuMemPoolDestroy(P);
  }
  void* q = nullptr;
  cudaError_t e = cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess);
  outr(K + "ipc.openLazy", e);
  if (!e) {
    out(K + "ipc.read", cmp_dev((CUdeviceptr)q, 64 * KiB, 42));
    unsigned long long o = 0;
    CUresult s = cuPointerGetAttribute(&o, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)q);
    out(K + "ipc.deviceOrdinal", s ? nm(s) : u64(o));
    outr(K + "ipc.close", cudaIpcCloseMemHandle(q));
  }
  q = nullptr;
  e = cudaIpcOpenMemHandle(&q, h, 0);
  outr(K + "ipc.openFlags0", e);
  if (!e) cudaIpcCloseMemHandle(q);
  int cur = -1;
  cudaGetDevice(&cur);
  out(K + "currentDevice", i64(cur));
}

// =========================================================================================
// Risky cases, each in its own child
// =========================================================================================
static const char* kRisky[] = {"poolExportDestroyed", "poolExportNullOut", "exportPtrNullData",
                               "poolImportSameProcess", "granNullProp", "setAccessNullDesc",
                               "vmmCopyBeforeAccess", "propsGarbageHandle", "ipcGetNullHandle",
                               "ipcEventOpenZeroHandle", "fabricPoolDestroy", "posixFabricPoolDestroy",
                               "fabricPoolDestroyAfterExport"};
static void child_risky(const std::string& n) {
  const std::string K = "risky." + n;
  CUmemPoolProps pp = pool_props(kLocs[0], POSIX);
  if (n == "poolExportDestroyed") {
    CUmemoryPool p = nullptr;
    cuMemPoolCreate(&p, &pp);
    cuMemPoolDestroy(p);
    int fd = -1;
    outc(K, cuMemPoolExportToShareableHandle(&fd, p, POSIX, 0));
  } else if (n == "poolExportNullOut") {
    CUmemoryPool p = nullptr;
    cuMemPoolCreate(&p, &pp);
    outc(K, cuMemPoolExportToShareableHandle(nullptr, p, POSIX, 0));
  } else if (n == "exportPtrNullData") {
    CUmemoryPool p = nullptr;
    cuMemPoolCreate(&p, &pp);
    CUdeviceptr a = 0;
    cuMemAllocFromPoolAsync(&a, 4 * KiB, p, nullptr);
    cuStreamSynchronize(nullptr);
    outc(K, cuMemPoolExportPointer(nullptr, a));
  } else if (n == "poolImportSameProcess") {
    CUmemoryPool p = nullptr, q = nullptr;
    cuMemPoolCreate(&p, &pp);
    int fd = -1;
    cuMemPoolExportToShareableHandle(&fd, p, POSIX, 0);
    CUresult r = cuMemPoolImportFromShareableHandle(&q, fdh(fd), POSIX, 0);
    out(K + ".import", cx(r, sd(q == p)));
    if (!r) {
      CUdeviceptr a = 0, b = 0;
      cuMemAllocFromPoolAsync(&a, 4 * KiB, p, nullptr);
      cuStreamSynchronize(nullptr);
      CUmemPoolPtrExportData E;
      cuMemPoolExportPointer(&E, a);
      CUresult s = cuMemPoolImportPointer(&b, q, &E);
      out(K + ".importPtr", cx(s, sd(a == b)));
    }
  } else if (n == "granNullProp") {
    size_t g = 0;
    outc(K, cuMemGetAllocationGranularity(&g, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  } else if (n == "setAccessNullDesc" || n == "vmmCopyBeforeAccess") {
    CUmemGenericAllocationHandle h = 0;
    CUmemAllocationProp p = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    CUdeviceptr v = 0;
    cuMemCreate(&h, 2 * MiB, &p, 0);
    cuMemAddressReserve(&v, 2 * MiB, 0, 0, 0);
    cuMemMap(v, 2 * MiB, 0, h, 0);
    if (n == "setAccessNullDesc") {
      outc(K, cuMemSetAccess(v, 2 * MiB, nullptr, 1));
    } else {
      outc(K + ".htod", put_dev(v, 4 * KiB, 5));
      outc(K + ".sync", cuCtxSynchronize());
      CUmemAccessDesc d = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
      outc(K + ".setAccess", cuMemSetAccess(v, 2 * MiB, &d, 1));
      outc(K + ".htodAfterAccess", put_dev(v, 4 * KiB, 5));
      out(K + ".readAfterAccess", cmp_dev(v, 4 * KiB, 5));
    }
  } else if (n == "propsGarbageHandle") {
    CUmemAllocationProp q;
    outc(K, cuMemGetAllocationPropertiesFromHandle(&q, (CUmemGenericAllocationHandle)0x12345678));
  } else if (n == "ipcGetNullHandle") {
    void* p = nullptr;
    cudaMalloc(&p, 4 * KiB);
    outr(K, cudaIpcGetMemHandle(nullptr, p));
  } else if (n == "fabricPoolDestroy" || n == "posixFabricPoolDestroy" || n == "fabricPoolDestroyAfterExport") {
    CUmemPoolProps fp = pool_props(kLocs[0], n == "posixFabricPoolDestroy" ? POSIX | FABRIC : FABRIC);
    CUmemoryPool p = nullptr;
    CUresult r = cuMemPoolCreate(&p, &fp);
    out(K + ".create", nm(r));
    if (r) return;
    if (n == "fabricPoolDestroyAfterExport") {
      CUmemFabricHandle fh;
      outc(K + ".export", cuMemPoolExportToShareableHandle(&fh, p, FABRIC, 0));
    }
    outc(K + ".destroy", cuMemPoolDestroy(p));
  } else if (n == "ipcEventOpenZeroHandle") {
    cudaIpcEventHandle_t z;
    memset(&z, 0, sizeof z);
    cudaEvent_t e = nullptr;
    outr(K, cudaIpcOpenEventHandle(&e, z));
  }
}

// =========================================================================================
static int child_main(const std::string& name, int sock) {
  g_deadline = Clock::now() + std::chrono::seconds(kChildAlarm - 2);
  alarm(kChildAlarm);
  signal(SIGPIPE, SIG_IGN);
  Chan ch;
  ch.fd = sock;
  CUresult r = cuInit(0);
  if (r) { outc(name + ".init", r); return 1; }
  CUcontext c = nullptr;
  cuDevicePrimaryCtxRetain(&c, 0);
  cuCtxSetCurrent(c);
  cudaSetDevice(0);
  auto dot = name.find('.');
  std::string kind = name.substr(0, dot), arg = dot == std::string::npos ? "" : name.substr(dot + 1);
  if (kind == "poolshare") child_poolshare(ch, *find_loc(arg));
  else if (kind == "poolfree") child_poolfree(ch, *find_loc(arg));
  else if (kind == "poolnull") child_poolnull(ch, arg);
  else if (kind == "vmmimp") child_vmmimp(ch);
  else if (kind == "ipcmem") child_ipcmem(ch);
  else if (kind == "ipcevent") child_ipcevent(ch);
  else if (kind == "fabric") probe_fabric();
  else if (kind == "fabricimp") child_fabricimp(ch);
  else if (kind == "selftest") raise(SIGSEGV);  // PROBE_SELFTEST=1: crash reporting
  else if (kind == "twodev") child_twodev(ch);
  else if (kind == "risky") child_risky(arg);
  else out(name + ".unknown", "yes");
  fflush(stdout);
  return 0;
}

static void on_watchdog(int) {
  const char m[] = "watchdog = fired\n";
  if (write(1, m, sizeof m - 1) < 0) {}
  _exit(3);
}

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--child") return child_main(argv[2], argc >= 4 ? atoi(argv[3]) : -1);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGALRM, on_watchdog);
  alarm(115);
  g_deadline = Clock::now() + std::chrono::seconds(105);
  g_only = getenv("PROBE_ONLY");
  CUresult r = cuInit(0);
  outc("init", r);
  if (r) { out("done", "1"); return 0; }
  cuDeviceGetCount(&g_ndev);
  out("devices", i64(g_ndev));
  int dv = 0;
  cuDriverGetVersion(&dv);
  out("driver", i64(dv));
  CUcontext c0 = nullptr;
  cuDevicePrimaryCtxRetain(&c0, 0);
  cuCtxSetCurrent(c0);
  cudaSetDevice(0);
  if (want("pool")) {
    probe_pool_export();
    for (const LocSpec& L : kLocs) probe_pool_share(L);
  }
  if (want("vmm")) probe_vmm();
  if (want("ipc")) probe_ipc_mem();
  if (want("event")) probe_ipc_event();
  if (want("fabric")) {  // in a child: fabric calls may wait on IMEX
    Child c = spawn_child("fabric");
    finish_child(c);
  }
  if (want("twodev")) probe_twodev(c0);
  if (want("risky"))
    for (const char* n : kRisky) run_risky(n);
  if (getenv("PROBE_SELFTEST")) {
    Child c = spawn_child("selftest");
    finish_child(c);
  }
  out("done", "1");
  return 0;
}
