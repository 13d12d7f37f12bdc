// Measures how NVIDIA's driver answers external memory and external semaphores:
// cuImportExternalMemory (every handle type, many fd sources, sizes, flags), mapped buffers
// (ranges, aliasing, pointer attributes, freeing, lifetime), mapped mipmapped arrays,
// cuImportExternalSemaphore and cuSignal/WaitExternalSemaphoresAsync, the runtime's
// cuda* twins for a subset, and a Vulkan interop section (exported memory and binary /
// timeline semaphores). Not part of the build: compile it on a GPU machine with
//   g++ -std=c++17 -O1 tools/probe/probe_extmem.cpp -I/usr/local/cuda/include
//       -L/usr/local/cuda/lib64 -lcudart -lcuda -ldl -lpthread -o probe_extmem
// (or against cuda-shim: -I include/cuda_shim -L build/lib). Add -I.gpu/include (the
// Vulkan headers) for the vk section; without <vulkan/vulkan.h> it prints vk.skipped.
// Vulkan is dlopen'ed (libvulkan.so.1), no link dependency. Diff the "key = value" lines of
// two runs. Values never hold addresses or fd numbers, only relations and codes.
// Crash-prone cases run in children: the binary re-executes itself as
// "/proc/self/exe --child NAME SOCKFD"; fds cross a SOCK_SEQPACKET socketpair with
// SCM_RIGHTS. Every child has an alarm() and is reported as
// child.NAME = exit(N) | CRASH(signal N) | TIMEOUT. The whole run is bounded by a ~240 s
// deadline. PROBE_ONLY=import,buf,mip,sem,rt,vk,risky picks sections.
// Conventions: "CODE fd=open|closed" is the call's result and the state of the passed fd
// right after it; "out=untouched|null|set" (on failure only) says what the call did to the
// output handle, preset to a sentinel. probe_extmem.h200.txt beside it is its output on
// one H200 (driver 580.159.04, CUDA 13.0): 1002 lines, deterministic across runs. There the
// driver itself aborts on numLevels 0 (glibc heap corruption, child.mipcase.l0 and
// risky.rtMipLevels0) and segfaults on garbage / destroyed / twice-destroyed handles.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/eventfd.h>
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
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if __has_include(<vulkan/vulkan.h>)
#define VK_NO_PROTOTYPES 1
#include <vulkan/vulkan.h>
#define HAVE_VK 1
#endif

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
  int f = memfd_create("probe_extmem", 0);
  if (f >= 0 && ftruncate(f, 2 * MiB) != 0) {}
  return f;
}
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
static int child_alarm(const std::string& n) { return n == "vk" ? 100 : kChildAlarm; }
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
    alarm(child_alarm(name));  // survives exec
    execl("/proc/self/exe", "probe_extmem", "--child", name.c_str(), fdarg.c_str(), (char*)nullptr);
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
  auto end = Clock::now() + std::chrono::milliseconds(ms_left((child_alarm(c.name) + 5) * 1000));
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
static const CUmemAllocationHandleType POSIX = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
static CUmemLocation mkloc(CUmemLocationType t, int id) {
  CUmemLocation l;
  memset(&l, 0, sizeof l);
  l.type = t;
  l.id = id;
  return l;
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
static CUcontext g_ctx = nullptr;

// pointer attributes and address range, addresses relative to base
static void ptr_attrs(const std::string& K, CUdeviceptr p, CUdeviceptr base) {
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
  a("rdmaCapable", CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE);
  a("accessFlags", CU_POINTER_ATTRIBUTE_ACCESS_FLAGS);
  a("syncMemops", CU_POINTER_ATTRIBUTE_SYNC_MEMOPS);
  ra("devicePointer", CU_POINTER_ATTRIBUTE_DEVICE_POINTER);
  {
    void* hp = (void*)1;
    CUresult r = cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p);
    out(K + "hostPointer", r ? nm(r) : hp == nullptr ? "null" : (CUdeviceptr)(uintptr_t)hp == p ? "samePtr" : "other");
  }
  {
    CUcontext c = (CUcontext)1;
    CUresult r = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p);
    out(K + "context", r ? nm(r) : c == nullptr ? "null" : c == g_ctx ? "primary" : "other");
  }
  unsigned long long mp = 0;
  CUresult r = cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p);
  out(K + "mempool", r ? nm(r) : mp == 0 ? "null" : "set");
  CUdeviceptr b = 0;
  size_t s = 0;
  r = cuMemGetAddressRange(&b, &s, p);
  out(K + "addressRange", cx(r, rel(b, base) + " size=" + u64(s)));
  unsigned long long f = 99;
  CUmemLocation l = mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  r = cuMemGetAccess(&f, &l, p);
  out(K + "memGetAccess", cx(r, u64(f)));
}

struct Vmm {
  CUmemGenericAllocationHandle h = 0;
  CUdeviceptr va = 0;
  size_t size = 0;
};
static CUresult vmm_make(Vmm& v, size_t size, CUmemLocationType lt = CU_MEM_LOCATION_TYPE_DEVICE, int id = 0) {
  CUmemAllocationProp p = vm_props(lt, id, POSIX);
  v.size = size;
  CUresult r = cuMemCreate(&v.h, size, &p, 0);
  if (r) { v.h = 0; return r; }
  if ((r = cuMemAddressReserve(&v.va, size, 0, 0, 0))) { v.va = 0; return r; }
  if ((r = cuMemMap(v.va, size, 0, v.h, 0))) { cuMemAddressFree(v.va, size); v.va = 0; return r; }
  CUmemAccessDesc d = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
  return cuMemSetAccess(v.va, size, &d, 1);
}
static void vmm_drop(Vmm& v) {
  if (v.va) { cuMemUnmap(v.va, v.size); cuMemAddressFree(v.va, v.size); }
  if (v.h) cuMemRelease(v.h);
  v = Vmm();
}
static int vmm_fd(const Vmm& v) {
  int fd = -1;
  if (!v.h) return -1;
  CUresult r = cuMemExportToShareableHandle(&fd, v.h, POSIX, 0);
  return r ? -1 : fd;
}

// ---- external memory helpers -------------------------------------------------------------
static CUexternalMemory const kSentMem = (CUexternalMemory)(uintptr_t)0x5e17;
static CUDA_EXTERNAL_MEMORY_HANDLE_DESC emd(int type, int fd, unsigned long long size, unsigned flags = 0) {
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
  memset(&d, 0, sizeof d);
  d.type = (CUexternalMemoryHandleType)type;
  d.handle.fd = fd;
  d.size = size;
  d.flags = flags;
  return d;
}
template <class T>
static std::string outstate(T v, T sentinel) {
  return v == sentinel ? "untouched" : v == T() ? "null" : "set";
}
// imports; "CODE fd=..." [out=...] ; *e null on failure
static std::string imp(CUexternalMemory* e, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC& d, int fd, CUresult* rr = nullptr) {
  *e = kSentMem;
  CUresult r = cuImportExternalMemory(e, &d);
  if (rr) *rr = r;
  std::string s = nm(r);
  if (fd >= 0) s += " fd=" + fdstate(fd);
  if (r) { s += " out=" + outstate(*e, kSentMem); *e = nullptr; }
  return s;
}
// full case: import, report; on success K.destroy, K.fdAfterDestroy; closes what is still
// open at the end. use() runs on the imported handle before destroy.
static CUresult imp_case(const std::string& K, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC& d, int fd,
                         const std::function<void(CUexternalMemory)>& use = {}) {
  CUexternalMemory e = nullptr;
  CUresult r;
  out(K, imp(&e, d, fd, &r));
  if (!r) {
    if (use) use(e);
    outc(K + ".destroy", cuDestroyExternalMemory(e));
    if (fd >= 0) out(K + ".fdAfterDestroy", fdstate(fd));
  }
  if (fd >= 0 && fcntl(fd, F_GETFD) != -1) close(fd);
  return r;
}
static CUDA_EXTERNAL_MEMORY_BUFFER_DESC bdesc(unsigned long long off, unsigned long long size, unsigned flags = 0) {
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC b;
  memset(&b, 0, sizeof b);
  b.offset = off;
  b.size = size;
  b.flags = flags;
  return b;
}
static CUresult mapbuf(CUdeviceptr* p, CUexternalMemory e, unsigned long long off, unsigned long long size,
                       unsigned flags = 0) {
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC b = bdesc(off, size, flags);
  *p = 0;
  CUresult r = cuExternalMemoryGetMappedBuffer(p, e, &b);
  if (r) *p = 0;
  return r;
}
static CUDA_ARRAY3D_DESCRIPTOR a3d(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch, unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR a;
  memset(&a, 0, sizeof a);
  a.Width = w;
  a.Height = h;
  a.Depth = d;
  a.Format = f;
  a.NumChannels = ch;
  a.Flags = flags;
  return a;
}
static std::string a3d_str(const CUDA_ARRAY3D_DESCRIPTOR& a) {
  return "W=" + u64(a.Width) + " H=" + u64(a.Height) + " D=" + u64(a.Depth) + " fmt=" + u64(a.Format) +
         " ch=" + u64(a.NumChannels) + " flags=" + u64(a.Flags);
}
static CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC mdesc(unsigned long long off, const CUDA_ARRAY3D_DESCRIPTOR& a,
                                                        unsigned levels) {
  CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC m;
  memset(&m, 0, sizeof m);
  m.offset = off;
  m.arrayDesc = a;
  m.numLevels = levels;
  return m;
}
// imports a fresh 2 MiB VMM allocation as external memory (v keeps the exporter side)
static CUresult ext_from_vmm(Vmm& v, CUexternalMemory* e, size_t size = 2 * MiB, unsigned flags = 0) {
  *e = nullptr;
  CUresult r = v.h ? CUDA_SUCCESS : vmm_make(v, 2 * MiB);
  if (r) return r;
  int fd = vmm_fd(v);
  if (fd < 0) return CUDA_ERROR_UNKNOWN;
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = emd(CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, fd, size, flags);
  r = cuImportExternalMemory(e, &d);
  if (r) { *e = nullptr; close(fd); }
  return r;
}

// ---- external semaphore helpers ----------------------------------------------------------
static CUexternalSemaphore const kSentSem = (CUexternalSemaphore)(uintptr_t)0x5e17;
static CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC sdesc(int type, int fd, unsigned flags = 0) {
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
  memset(&d, 0, sizeof d);
  d.type = (CUexternalSemaphoreHandleType)type;
  d.handle.fd = fd;
  d.flags = flags;
  return d;
}
static std::string simp(CUexternalSemaphore* s, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC& d, int fd,
                        CUresult* rr = nullptr) {
  *s = kSentSem;
  CUresult r = cuImportExternalSemaphore(s, &d);
  if (rr) *rr = r;
  std::string str = nm(r);
  if (fd >= 0) str += " fd=" + fdstate(fd);
  if (r) { str += " out=" + outstate(*s, kSentSem); *s = nullptr; }
  return str;
}
static CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sigp(unsigned long long v, unsigned flags = 0) {
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p;
  memset(&p, 0, sizeof p);
  p.params.fence.value = v;
  p.flags = flags;
  return p;
}
static CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS waitp(unsigned long long v, unsigned flags = 0) {
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p;
  memset(&p, 0, sizeof p);
  p.params.fence.value = v;
  p.flags = flags;
  return p;
}
static CUresult csig(CUexternalSemaphore s, unsigned long long v, CUstream st, unsigned flags = 0) {
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p = sigp(v, flags);
  return cuSignalExternalSemaphoresAsync(&s, &p, 1, st);
}
static CUresult cwait(CUexternalSemaphore s, unsigned long long v, CUstream st, unsigned flags = 0) {
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p = waitp(v, flags);
  return cuWaitExternalSemaphoresAsync(&s, &p, 1, st);
}
// "completed" | "blocked" (still NOT_READY after ms) | another code
static std::string poll_stream(CUstream s, int ms) {
  auto end = Clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    CUresult r = cuStreamQuery(s);
    if (r == CUDA_SUCCESS) return "completed";
    if (r != CUDA_ERROR_NOT_READY) return nm(r);
    if (Clock::now() > end) return "blocked";
    usleep(1000);
  }
}
static int make_eventfd() { return eventfd(0, 0); }

// =========================================================================================
// A. Import: fd sources, sizes, flags (parent); handle-type matrix (children)
// =========================================================================================
static void probe_import() {
  const std::string K = "import.";
  CUmemAllocationProp gp = vm_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, POSIX);
  size_t gran = 0;
  outc(K + "granularity.code", cuMemGetAllocationGranularity(&gran, &gp, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  out(K + "granularity", u64(gran));
  Vmm v;
  CUresult r = vmm_make(v, 2 * MiB);
  outc(K + "vmm.make", r);
  if (r) return;
  const unsigned OF = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  {
    int fd = vmm_fd(v);
    out(K + "vmmFd.kind", fdkind(fd));
    out(K + "vmmFd.cloexec", cloexec(fd));
    struct stat st;
    if (fd >= 0 && !fstat(fd, &st)) out(K + "vmmFd.fstatSize", i64(st.st_size));
    if (fd >= 0) close(fd);
  }
  // (a) VMM device allocation
  put_dev(v.va, 64 * KiB, 1);
  cuCtxSynchronize();
  {
    int fd = vmm_fd(v);
    CUexternalMemory e = nullptr;
    CUresult ri;
    out(K + "src.vmmDev", imp(&e, emd(OF, fd, 2 * MiB), fd, &ri));
    if (!ri) {
      CUdeviceptr p = 0;
      CUresult m = mapbuf(&p, e, 0, 2 * MiB);
      out(K + "src.vmmDev.map", cx(m, ""));
      if (!m) {
        out(K + "src.vmmDev.read", cmp_dev(p, 64 * KiB, 1));
        cuMemFree(p);
      }
      // the same fd number again (the driver closed it, or it is still ours)
      bool was_open = fcntl(fd, F_GETFD) != -1;
      CUexternalMemory e2 = nullptr;
      CUresult r2;
      std::string s2 = imp(&e2, emd(OF, fd, 2 * MiB), fd, &r2);
      out(K + "src.vmmDev.sameFdAgain", s2 + (was_open ? " (fd was open)" : " (fd was closed)") +
                                            (r2 ? "" : " handle=" + sd(e2 == e)));
      if (!r2 && e2 != e) cuDestroyExternalMemory(e2);
      outc(K + "src.vmmDev.destroy", cuDestroyExternalMemory(e));
      out(K + "src.vmmDev.fdAfterDestroy", fdstate(fd));
    }
    if (fd >= 0 && fcntl(fd, F_GETFD) != -1) close(fd);
  }
  // (b) VMM host-NUMA / host allocations
  for (auto lt : {std::make_pair("vmmHostNuma", CU_MEM_LOCATION_TYPE_HOST_NUMA),
                  std::make_pair("vmmHost", CU_MEM_LOCATION_TYPE_HOST)}) {
    Vmm h;
    CUresult c = vmm_make(h, 2 * MiB, lt.second, 0);
    out(K + "src." + lt.first + ".make", nm(c));
    if (!c) {
      put_dev(h.va, 64 * KiB, 2);
      cuCtxSynchronize();
      int fd = vmm_fd(h);
      out(K + "src." + lt.first + ".export", fd >= 0 ? "ok" : "failed");
      std::string kk = K + "src." + lt.first;
      imp_case(kk, emd(OF, fd, 2 * MiB), fd, [&](CUexternalMemory e) {
        CUdeviceptr p = 0;
        CUresult m = mapbuf(&p, e, 0, 2 * MiB);
        out(kk + ".map", nm(m));
        if (!m) {
          out(kk + ".read", cmp_dev(p, 64 * KiB, 2));
          unsigned long long t = 0;
          CUresult q = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
          out(kk + ".memoryType", q ? nm(q) : u64(t));
          cuMemFree(p);
        }
      });
    }
    vmm_drop(h);
  }
  // (c) pool export fd
  {
    CUmemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.handleTypes = POSIX;
    pp.location = mkloc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    CUmemoryPool P = nullptr;
    CUresult c = cuMemPoolCreate(&P, &pp);
    out(K + "src.pool.create", nm(c));
    if (!c) {
      CUdeviceptr a = 0;
      cuMemAllocFromPoolAsync(&a, 4 * KiB, P, nullptr);
      cuStreamSynchronize(nullptr);
      int fd = -1;
      c = cuMemPoolExportToShareableHandle(&fd, P, POSIX, 0);
      out(K + "src.pool.export", nm(c));
      if (!c) {
        out(K + "src.pool.fdKind", fdkind(fd));
        imp_case(K + "src.pool", emd(OF, fd, 2 * MiB), fd);
      }
      if (a) cuMemFreeAsync(a, nullptr);
      cuStreamSynchronize(nullptr);
      cuMemPoolDestroy(P);
    }
  }
  // (d)-(h)
  {
    int fd = make_memfd();
    imp_case(K + "src.memfd", emd(OF, fd, 2 * MiB), fd);
    imp_case(K + "src.fdMinus1", emd(OF, -1, 2 * MiB), -1);
    int cfd = closed_fd_number();
    imp_case(K + "src.closedFd", emd(OF, cfd, 2 * MiB), -1);
    int sv[2] = {-1, -1};
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    imp_case(K + "src.socket", emd(OF, sv[0], 2 * MiB), sv[0]);
    if (sv[1] >= 0) close(sv[1]);
    int dn = open("/dev/null", O_RDWR);
    imp_case(K + "src.devNull", emd(OF, dn, 2 * MiB), dn);
    int ev = make_eventfd();
    imp_case(K + "src.eventfd", emd(OF, ev, 2 * MiB), ev);
    int nc = open("/dev/nvidiactl", O_RDWR);
    out(K + "src.nvidiactl.open", nc >= 0 ? "ok" : "failed");
    if (nc >= 0) imp_case(K + "src.nvidiactl", emd(OF, nc, 2 * MiB), nc);
  }
  // (i) dup of the VMM fd, a second export of the same allocation, same fd number twice
  {
    int f = vmm_fd(v), dfd = f >= 0 ? dup(f) : -1, f3 = vmm_fd(v);
    out(K + "dup.inode", inode_rel(f, dfd));
    out(K + "secondExport.inode", inode_rel(f, f3));
    CUexternalMemory e1 = nullptr, e2 = nullptr, e3 = nullptr;
    CUresult r1, r2, r3;
    out(K + "dup.first", imp(&e1, emd(OF, f, 2 * MiB), f, &r1));
    out(K + "dup.dupFdBefore", fdstate(dfd));
    std::string s2 = imp(&e2, emd(OF, dfd, 2 * MiB), dfd, &r2);
    out(K + "dup.second", r1 || r2 ? s2 : s2 + " handle=" + sd(e1 == e2));
    std::string s3 = imp(&e3, emd(OF, f3, 2 * MiB), f3, &r3);
    out(K + "secondExport.import", r1 || r3 ? s3 : s3 + " handle=" + sd(e1 == e3));
    if (!r1 && !r2) {
      CUdeviceptr p1 = 0, p2 = 0, p3 = 0;
      mapbuf(&p1, e1, 0, 2 * MiB);
      mapbuf(&p2, e2, 0, 2 * MiB);
      if (e3) mapbuf(&p3, e3, 0, 2 * MiB);
      out(K + "dup.bufPtrs", p1 && p2 ? sd(p1 == p2) : "mapFailed");
      if (p1 && p2) {
        put_dev(p1, 64 * KiB, 3);
        cuCtxSynchronize();
        out(K + "dup.secondSeesFirst", cmp_dev(p2, 64 * KiB, 3));
        out(K + "dup.exporterSeesFirst", cmp_dev(v.va, 64 * KiB, 3));
        if (p3) out(K + "secondExport.sees", cmp_dev(p3, 64 * KiB, 3));
      }
      for (CUdeviceptr p : {p1, p2, p3})
        if (p) cuMemFree(p);
    }
    if (e3 && e3 != e1) outc(K + "secondExport.destroy", cuDestroyExternalMemory(e3));
    if (e2 && e2 != e1) outc(K + "dup.destroySecond", cuDestroyExternalMemory(e2));
    if (e1) outc(K + "dup.destroyFirst", cuDestroyExternalMemory(e1));
    if (e2 && e2 == e1) outc(K + "dup.destroySameHandleAgain", cuDestroyExternalMemory(e2));
    for (int x : {f, dfd, f3})
      if (x >= 0 && fcntl(x, F_GETFD) != -1) close(x);
  }
  // (j) dma-buf of a cuMemAlloc allocation
  {
    int av = -1;
    cuDeviceGetAttribute(&av, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0);
    out(K + "dmabuf.attrSupported", i64(av));
    CUdeviceptr m = 0;
    cuMemAlloc(&m, 2 * MiB);
    put_dev(m, 64 * KiB, 4);
    cuCtxSynchronize();
    int fd = -1;
    CUresult c = cuMemGetHandleForAddressRange(&fd, m, 2 * MiB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    out(K + "dmabuf.get", nm(c));
    if (!c) {
      out(K + "dmabuf.fdKind", fdkind(fd));
      int fd2 = dup(fd);
      imp_case(K + "dmabuf.asType9", emd(CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD, fd, 2 * MiB), fd,
               [&](CUexternalMemory e) {
                 CUdeviceptr p = 0;
                 CUresult mm = mapbuf(&p, e, 0, 2 * MiB);
                 out(K + "dmabuf.asType9.map", nm(mm));
                 if (!mm) {
                   out(K + "dmabuf.asType9.read", cmp_dev(p, 64 * KiB, 4));
                   cuMemFree(p);
                 }
               });
      imp_case(K + "dmabuf.asOpaqueFd", emd(OF, fd2, 2 * MiB), fd2);
    }
    cuMemFree(m);
    int vf = vmm_fd(v);
    imp_case(K + "dmabuf.vmmFdAsType9", emd(CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD, vf, 2 * MiB), vf);
  }
  // sizes against the 2 MiB allocation
  const struct { const char* n; unsigned long long s; } sizes[] = {
      {"0", 0}, {"1", 1}, {"4KiB", 4 * KiB}, {"1MiB", MiB}, {"2MiB", 2 * MiB}, {"2MiBplus1", 2 * MiB + 1},
      {"4MiB", 4 * MiB}, {"huge", 1ULL << 50}};
  for (auto& s : sizes) {
    int fd = vmm_fd(v);
    std::string kk = K + "size." + s.n;
    imp_case(kk, emd(OF, fd, s.s), fd, [&](CUexternalMemory e) {
      CUdeviceptr p = 0;
      CUresult m = mapbuf(&p, e, 0, s.s);
      out(kk + ".mapFull", nm(m));
      if (!m) cuMemFree(p);
      if (s.s != 2 * MiB) {
        m = mapbuf(&p, e, 0, 2 * MiB);
        out(kk + ".mapAllocSize", nm(m));
        if (!m) cuMemFree(p);
      }
      if (s.s > 2 * MiB) {
        m = mapbuf(&p, e, 0, 2 * MiB + 1);
        out(kk + ".mapAllocSizePlus1", nm(m));
        if (!m) cuMemFree(p);
        m = mapbuf(&p, e, 2 * MiB, 4 * KiB);
        out(kk + ".mapBeyondAllocation", nm(m));
        if (!m) cuMemFree(p);
      }
    });
  }
  // flags and reserved words
  for (unsigned fl : {0u, 1u, 2u, 0x80000000u}) {
    int fd = vmm_fd(v);
    imp_case(K + "flags." + u64(fl), emd(OF, fd, 2 * MiB, fl), fd);
  }
  for (int w : {0, 15}) {
    int fd = vmm_fd(v);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = emd(OF, fd, 2 * MiB);
    d.reserved[w] = 1;
    imp_case(K + "reserved" + i64(w), d, fd);
  }
  {  // the union's upper bytes nonzero (handle.win32.name set) with OpaqueFd
    int fd = vmm_fd(v);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = emd(OF, 0, 2 * MiB);
    d.handle.win32.name = (const void*)"x";
    d.handle.fd = fd;
    imp_case(K + "opaqueFdWithWin32NameSet", d, fd);
  }
  // cross-process: the importer is a child
  {
    put_dev(v.va, 64 * KiB, 5);
    cuCtxSynchronize();
    int fd = vmm_fd(v);
    Child ch = spawn_child("xproc");
    send_fd(ch.ch, fd);
    int w = await_write(ch.ch, "import.xproc.parent");
    if (w >= 0) {
      out(K + "xproc.exporterSeesChildWrite", w ? cmp_dev(v.va, 64 * KiB, 6) : "childDidNotWrite");
      send_tag(ch.ch, "ack");
    }
    finish_child(ch);
    out(K + "xproc.parentFdAfter", fdstate(fd));
    if (fd >= 0) close(fd);
  }
  vmm_drop(v);
}

static void child_xproc(Chan& ch) {
  const std::string K = "import.xproc.";
  int fd = recv_fd(ch);
  CUexternalMemory e = nullptr;
  CUresult r;
  out(K + "import", imp(&e, emd(CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, fd, 2 * MiB), fd, &r));
  CUdeviceptr p = 0;
  if (!r && !mapbuf(&p, e, 0, 2 * MiB)) {
    out(K + "read", cmp_dev(p, 64 * KiB, 5));
    put_dev(p, 64 * KiB, 6);
    cuCtxSynchronize();
    send_tag(ch, "written");
  } else {
    send_tag(ch, "skipped");
  }
  wait_tag(ch, "ack", K);
  if (p) outc(K + "free", cuMemFree(p));
  if (e) outc(K + "destroy", cuDestroyExternalMemory(e));
}

// handle-type matrix: one child per group (types with pointers in the union may crash)
static void child_emtypes(const std::string& grp) {
  int dn = open("/dev/null", O_RDWR);  // fd 0 (the all-zero handle) is /dev/null here
  if (dn >= 0 && dn != 0) { dup2(dn, 0); close(dn); }
  std::vector<int> types = grp == "a" ? std::vector<int>{0, 1, 9, 100, -1}
                           : grp == "b" ? std::vector<int>{2, 3, 4, 5, 6, 7}
                                        : std::vector<int>{8};
  Vmm v;
  vmm_make(v, 2 * MiB);
  for (int t : types) {
    const std::string K = "emtype." + (t < 0 ? std::string("minus1") : i64(t)) + ".";
    imp_case(K + "fdMinus1", emd(t, -1, 2 * MiB), -1);
    int f = vmm_fd(v);
    imp_case(K + "vmmFd", emd(t, f, 2 * MiB), f);
    int m = make_memfd();
    imp_case(K + "memfd", emd(t, m, 2 * MiB), m);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC z = emd(t, 0, 2 * MiB);
    memset(&z.handle, 0, sizeof z.handle);
    imp_case(K + "zeroHandle", z, -1);
    if (t == 1) imp_case(K + "vmmFdSize0", emd(t, vmm_fd(v), 0), -1);
  }
  vmm_drop(v);
}

// =========================================================================================
// B. Mapped buffers
// =========================================================================================
static void probe_buf() {
  const std::string K = "buf.";
  Vmm v;
  CUexternalMemory e = nullptr;
  CUresult r = ext_from_vmm(v, &e);
  outc(K + "import", r);
  if (r) { vmm_drop(v); return; }
  put_dev(v.va, 2 * MiB, 1);
  cuCtxSynchronize();
  CUdeviceptr p0 = 0;
  r = mapbuf(&p0, e, 0, 2 * MiB);
  outc(K + "map.full", r);
  if (r) { cuDestroyExternalMemory(e); vmm_drop(v); return; }
  out(K + "map.full.relToExporterVa", sd(p0 == v.va));
  out(K + "map.full.readExporterData", cmp_dev(p0, 2 * MiB, 1));
  put_dev(p0, 64 * KiB, 2);
  cuCtxSynchronize();
  out(K + "map.full.exporterSeesBufWrite", cmp_dev(v.va, 64 * KiB, 2));
  put_dev(v.va, 2 * MiB, 3);  // reference content for the ranges below
  cuCtxSynchronize();
  const struct { const char* n; unsigned long long off, size; unsigned flags; int resv; } cs[] = {
      {"full", 0, 2 * MiB, 0, -1},           {"size1", 0, 1, 0, -1},
      {"off1", 1, 4096, 0, -1},              {"off256", 256, 4096, 0, -1},
      {"off4KiB", 4096, 4096, 0, -1},        {"off64KiB", 64 * KiB, 64 * KiB, 0, -1},
      {"offHalf", MiB, MiB, 0, -1},          {"overEnd", MiB, 2 * MiB, 0, -1},
      {"overEndBy1", 0, 2 * MiB + 1, 0, -1}, {"size0", 0, 0, 0, -1},
      {"offEndSize0", 2 * MiB, 0, 0, -1},    {"offEndSize1", 2 * MiB, 1, 0, -1},
      {"offBeyond", 4 * MiB, 4096, 0, -1},   {"sizeHuge", 0, 1ULL << 50, 0, -1},
      {"offWrap", ~0ULL - 4095, 8192, 0, -1}, {"flags1", 0, 2 * MiB, 1, -1},
      {"flags2", 0, 2 * MiB, 2, -1},         {"flagsHigh", 0, 2 * MiB, 0x80000000u, -1},
      {"reserved0", 0, 2 * MiB, 0, 0},       {"reserved15", 0, 2 * MiB, 0, 15},
      {"size4097", 0, 4097, 0, -1},          {"off4KiBsize1", 4096, 1, 0, -1}};
  for (auto& c : cs) {
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b = bdesc(c.off, c.size, c.flags);
    if (c.resv >= 0) b.reserved[c.resv] = 1;
    CUdeviceptr p = (CUdeviceptr)0x5e17;
    r = cuExternalMemoryGetMappedBuffer(&p, e, &b);
    std::string s = nm(r);
    if (r) s += " out=" + std::string(p == 0x5e17 ? "untouched" : p == 0 ? "null" : "set");
    else {
      s += " rel=" + rel(p, p0);
      size_t n = (size_t)std::min<unsigned long long>(c.size, 4096);
      s += " data=" + cmp_dev(p, n, 3, (size_t)c.off);
    }
    out(K + "case." + c.n, s);
    if (!r) {
      CUdeviceptr b0 = 0;
      size_t bs = 0;
      CUresult q = cuMemGetAddressRange(&b0, &bs, p);
      out(K + "case." + c.n + ".addressRange", cx(q, rel(b0, p) + " size=" + u64(bs)));
      outc(K + "case." + c.n + ".free", cuMemFree(p));
    }
  }
  // the same range twice, different ranges
  {
    CUdeviceptr a = 0, b = 0, c = 0, d = 0;
    mapbuf(&a, e, 0, 2 * MiB);
    mapbuf(&b, e, 64 * KiB, 64 * KiB);
    mapbuf(&c, e, 64 * KiB, 64 * KiB);
    mapbuf(&d, e, 0, 64 * KiB);
    out(K + "twice.full", a ? sd(a == p0) : "mapFailed");
    out(K + "twice.range64KiB", b && c ? sd(b == c) : "mapFailed");
    out(K + "twice.off64KiB.relToFull", b ? rel(b, p0) : "mapFailed");
    out(K + "twice.off0size64KiB.relToFull", d ? rel(d, p0) : "mapFailed");
    if (b && a) {  // overlap: write through the 64 KiB window, read through the full one
      put_dev(b, 64 * KiB, 4);
      cuCtxSynchronize();
      out(K + "overlap.fullSeesWindowWrite", cmp_dev(a + 64 * KiB, 64 * KiB, 4));
      out(K + "overlap.otherWindowSees", c ? cmp_dev(c, 64 * KiB, 4) : "mapFailed");
      out(K + "overlap.exporterSees", cmp_dev(v.va + 64 * KiB, 64 * KiB, 4));
      outc(K + "overlap.dtod", cuMemcpyDtoD(a, b, 4096));
      cuCtxSynchronize();
      out(K + "overlap.dtodResult", cmp_dev(v.va, 4096, 4));
      outc(K + "memsetD8", cuMemsetD8(b, 0x5a, 4096));
      cuCtxSynchronize();
    }
    // pointer attributes
    ptr_attrs(K + "attr.full.", p0, p0);
    ptr_attrs(K + "attr.interior4KiB.", p0 + 4096, p0);
    if (b) ptr_attrs(K + "attr.window64KiB.", b + 16, b);
    ptr_attrs(K + "attr.exporterVa.", v.va, v.va);
    for (auto pr : {std::make_pair("full", p0), std::make_pair("exporterVa", v.va)}) {
      CUmemGenericAllocationHandle h2 = 0;
      CUresult q = cuMemRetainAllocationHandle(&h2, (void*)(uintptr_t)pr.second);
      out(K + "retainHandle." + pr.first, cx(q, "sameAsExporterHandle=" + sd(h2 == v.h)));
      if (!q) {
        CUmemAllocationProp pp;
        memset(&pp, 0, sizeof pp);
        CUresult g = cuMemGetAllocationPropertiesFromHandle(&pp, h2);
        out(K + "retainHandle." + pr.first + ".props",
            cx(g, "type=" + u64(pp.type) + " ht=" + u64(pp.requestedHandleTypes) + " loc=" +
                      u64(pp.location.type)));
        cuMemRelease(h2);
      }
      CUipcMemHandle ih;
      outc(K + "ipcGetMemHandle." + pr.first, cuIpcGetMemHandle(&ih, pr.second));
    }
    {
      CUmemGenericAllocationHandle h2 = 0;
      outc(K + "retainHandle.window64KiB", b ? cuMemRetainAllocationHandle(&h2, (void*)(uintptr_t)b)
                                             : CUDA_ERROR_UNKNOWN);
      if (h2) cuMemRelease(h2);
    }
    for (CUdeviceptr x : {a, b, c, d})
      if (x) cuMemFree(x);
  }
  // frees
  {
    CUdeviceptr f = 0, g = 0, h = 0;
    mapbuf(&f, e, 0, 2 * MiB);
    outc(K + "free.interior", f ? cuMemFree(f + 4096) : CUDA_ERROR_UNKNOWN);
    outc(K + "free.first", f ? cuMemFree(f) : CUDA_ERROR_UNKNOWN);
    outc(K + "free.again", f ? cuMemFree(f) : CUDA_ERROR_UNKNOWN);
    mapbuf(&g, e, 0, 4096);
    CUresult q = g ? cuMemFreeAsync(g, nullptr) : CUDA_ERROR_UNKNOWN;
    outc(K + "free.async", q);
    outc(K + "free.async.sync", cuStreamSynchronize(nullptr));
    if (q && g) outc(K + "free.async.thenFree", cuMemFree(g));
    mapbuf(&h, e, 0, 4096);
    outr(K + "free.cudaFree", h ? cudaFree((void*)h) : cudaErrorUnknown);
    CUdeviceptr k = 0;
    mapbuf(&k, e, 0, 4096);
    outc(K + "free.cuMemFreeHost", k ? cuMemFreeHost((void*)k) : CUDA_ERROR_UNKNOWN);
    if (k) outc(K + "free.cuMemFreeHost.thenFree", cuMemFree(k));
    CUdeviceptr n = 0;
    CUresult m = mapbuf(&n, e, 0, 2 * MiB);
    out(K + "free.remapAfterFrees", cx(m, "rel=" + rel(n, p0)));
    if (n) cuMemFree(n);
  }
  outc(K + "free.p0", cuMemFree(p0));
  outc(K + "destroy", cuDestroyExternalMemory(e));
  out(K + "afterDestroy.exporterStillHoldsData", cmp_dev(v.va + 128 * KiB, 64 * KiB, 3, 128 * KiB));
  vmm_drop(v);
}

// =========================================================================================
// C. Mipmapped arrays
// =========================================================================================
struct MipCase {
  const char* n;
  unsigned long long off;
  CUDA_ARRAY3D_DESCRIPTOR a;
  unsigned levels;
};
static std::vector<MipCase> mip_cases() {
  const CUarray_format U8 = CU_AD_FORMAT_UNSIGNED_INT8;
  return {
      {"l1", 0, a3d(256, 256, 0, U8, 4, 0), 1},
      {"l3", 0, a3d(256, 256, 0, U8, 4, 0), 3},
      {"l9", 0, a3d(256, 256, 0, U8, 4, 0), 9},
      {"l10", 0, a3d(256, 256, 0, U8, 4, 0), 10},
      {"l0", 0, a3d(256, 256, 0, U8, 4, 0), 0},
      {"l100", 0, a3d(256, 256, 0, U8, 4, 0), 100},
      {"off1", 1, a3d(256, 256, 0, U8, 4, 0), 1},
      {"off256", 256, a3d(256, 256, 0, U8, 4, 0), 1},
      {"off4KiB", 4096, a3d(256, 256, 0, U8, 4, 0), 1},
      {"off64KiB", 64 * KiB, a3d(256, 256, 0, U8, 4, 0), 1},
      {"offEnd", 2 * MiB, a3d(256, 256, 0, U8, 4, 0), 1},
      {"offNearEnd", 2 * MiB - 64 * KiB, a3d(256, 256, 0, U8, 4, 0), 1},
      {"offBeyond", 4 * MiB, a3d(256, 256, 0, U8, 4, 0), 1},
      {"big4096", 0, a3d(4096, 4096, 0, U8, 4, 0), 1},
      {"exact2MiB", 0, a3d(1024, 512, 0, U8, 4, 0), 1},
      {"w1d", 0, a3d(256, 0, 0, U8, 4, 0), 1},
      {"d3", 0, a3d(64, 64, 4, U8, 4, 0), 1},
      {"d3l3", 0, a3d(64, 64, 4, U8, 4, 0), 3},
      {"layered", 0, a3d(64, 64, 4, U8, 4, CUDA_ARRAY3D_LAYERED), 1},
      {"layeredl3", 0, a3d(64, 64, 4, U8, 4, CUDA_ARRAY3D_LAYERED), 3},
      {"cubemap", 0, a3d(64, 64, 6, U8, 4, CUDA_ARRAY3D_CUBEMAP), 1},
      {"surfaceLdst", 0, a3d(256, 256, 0, U8, 4, CUDA_ARRAY3D_SURFACE_LDST), 1},
      {"textureGather", 0, a3d(256, 256, 0, U8, 4, CUDA_ARRAY3D_TEXTURE_GATHER), 1},
      {"flagsHigh", 0, a3d(256, 256, 0, U8, 4, 0x80000000u), 1},
      {"float1", 0, a3d(256, 256, 0, CU_AD_FORMAT_FLOAT, 1, 0), 1},
      {"ch3", 0, a3d(256, 256, 0, U8, 3, 0), 1},
      {"fmt0", 0, a3d(256, 256, 0, (CUarray_format)0, 4, 0), 1},
      {"width0", 0, a3d(0, 256, 0, U8, 4, 0), 1},
      {"reserved0", 0, a3d(256, 256, 0, U8, 4, 0), 1},
  };
}
// one case per child (numLevels 0 aborted the whole process in glibc free() on 580)
static void child_mipcase(const std::string& name) {
  const std::string K = "mip.";
  Vmm v;
  CUexternalMemory e = nullptr;
  CUresult r = ext_from_vmm(v, &e);
  if (r) { outc(K + "case." + name + ".import", r); return; }
  for (auto& c : mip_cases()) {
    if (name != c.n) continue;
    const std::string kk = K + "case." + c.n;
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md = mdesc(c.off, c.a, c.levels);
    if (!strcmp(c.n, "reserved0")) md.reserved[0] = 1;
    CUmipmappedArray m = (CUmipmappedArray)(uintptr_t)0x5e17;
    r = cuExternalMemoryGetMappedMipmappedArray(&m, e, &md);
    out(kk, r ? std::string(nm(r)) + " out=" + outstate(m, (CUmipmappedArray)(uintptr_t)0x5e17) : nm(r));
    if (r) break;
    CUarray a0 = nullptr, al = nullptr, ab = nullptr;
    unsigned last = c.levels ? c.levels - 1 : 0;
    outc(kk + ".level0", cuMipmappedArrayGetLevel(&a0, m, 0));
    if (last) outc(kk + ".levelLast", cuMipmappedArrayGetLevel(&al, m, last));
    outc(kk + ".levelBeyond", cuMipmappedArrayGetLevel(&ab, m, c.levels ? c.levels : 1));
    outc(kk + ".level100", cuMipmappedArrayGetLevel(&ab, m, 100));
    if (a0) {
      CUDA_ARRAY3D_DESCRIPTOR d;
      memset(&d, 0, sizeof d);
      CUresult q = cuArray3DGetDescriptor(&d, a0);
      out(kk + ".level0.desc3d", cx(q, a3d_str(d)));
      CUDA_ARRAY_DESCRIPTOR d2;
      memset(&d2, 0, sizeof d2);
      q = cuArrayGetDescriptor(&d2, a0);
      out(kk + ".level0.desc2d", cx(q, "W=" + u64(d2.Width) + " H=" + u64(d2.Height)));
      CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
      memset(&mr, 0, sizeof mr);
      q = cuArrayGetMemoryRequirements(&mr, a0, 0);
      out(kk + ".level0.memReq", cx(q, "size=" + u64(mr.size) + " align=" + u64(mr.alignment)));
    }
    if (al) {
      CUDA_ARRAY3D_DESCRIPTOR d;
      memset(&d, 0, sizeof d);
      CUresult q = cuArray3DGetDescriptor(&d, al);
      out(kk + ".levelLast.desc3d", cx(q, a3d_str(d)));
    }
    CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
    memset(&mr, 0, sizeof mr);
    CUresult q = cuMipmappedArrayGetMemoryRequirements(&mr, m, 0);
    out(kk + ".memReq", cx(q, "size=" + u64(mr.size) + " align=" + u64(mr.alignment)));
    if (!strcmp(c.n, "l1") && a0) {  // data through level 0
      std::vector<unsigned char> hb(256 * 1024), rb(256 * 1024);
      pattern(hb.data(), hb.size(), 8);
      CUDA_MEMCPY2D cp;
      memset(&cp, 0, sizeof cp);
      cp.srcMemoryType = CU_MEMORYTYPE_HOST;
      cp.srcHost = hb.data();
      cp.srcPitch = 1024;
      cp.dstMemoryType = CU_MEMORYTYPE_ARRAY;
      cp.dstArray = a0;
      cp.WidthInBytes = 1024;
      cp.Height = 256;
      outc(kk + ".data.htoa", cuMemcpy2D(&cp));
      memset(&cp, 0, sizeof cp);
      cp.srcMemoryType = CU_MEMORYTYPE_ARRAY;
      cp.srcArray = a0;
      cp.dstMemoryType = CU_MEMORYTYPE_HOST;
      cp.dstHost = rb.data();
      cp.dstPitch = 1024;
      cp.WidthInBytes = 1024;
      cp.Height = 256;
      q = cuMemcpy2D(&cp);
      out(kk + ".data.atoh", cx(q, memcmp(hb.data(), rb.data(), hb.size()) ? "mismatch" : "match"));
      out(kk + ".data.linearView", cmp_dev(v.va, 256 * 1024, 8));
      std::vector<unsigned char> lin(256 * 1024);
      cuMemcpyDtoH(lin.data(), v.va, lin.size());
      bool anyset = false;
      for (unsigned char x : lin) anyset |= x != 3 && x != 0;
      out(kk + ".data.linearViewChanged", anyset ? "yes" : "no");
      CUmipmappedArray m2 = nullptr;
      q = cuExternalMemoryGetMappedMipmappedArray(&m2, e, &md);
      out(kk + ".second", cx(q, sd(m2 == m)));
      if (!q) {
        CUarray b0 = nullptr;
        cuMipmappedArrayGetLevel(&b0, m2, 0);
        out(kk + ".second.level0", sd(b0 == a0));
        memset(rb.data(), 0, rb.size());
        cp.srcArray = b0;
        q = cuMemcpy2D(&cp);
        out(kk + ".second.sees", cx(q, memcmp(hb.data(), rb.data(), hb.size()) ? "mismatch" : "match"));
        outc(kk + ".second.destroy", cuMipmappedArrayDestroy(m2));
      }
    }
    outc(kk + ".destroy", cuMipmappedArrayDestroy(m));
  }
  outc(K + "case." + name + ".destroyExt", cuDestroyExternalMemory(e));
  vmm_drop(v);
}

static void probe_mip() {
  const std::string K = "mip.";
  const CUarray_format U8 = CU_AD_FORMAT_UNSIGNED_INT8;
  for (auto& c : mip_cases()) {
    Child ch = spawn_child(std::string("mipcase.") + c.n);
    finish_child(ch);
  }
  // reference: ordinary mipmapped arrays of the same shape
  for (unsigned lv : {1u, 9u}) {
    CUDA_ARRAY3D_DESCRIPTOR a = a3d(256, 256, 0, U8, 4, 0);
    CUmipmappedArray m = nullptr;
    CUresult q = cuMipmappedArrayCreate(&m, &a, lv);
    CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
    memset(&mr, 0, sizeof mr);
    if (!q) q = cuMipmappedArrayGetMemoryRequirements(&mr, m, 0);
    out(K + "ref.create.l" + u64(lv) + ".memReq", cx(q, "size=" + u64(mr.size) + " align=" + u64(mr.alignment)));
    if (m) cuMipmappedArrayDestroy(m);
  }
}

// =========================================================================================
// D. Semaphores without Vulkan
// =========================================================================================
static void child_semtypes(const std::string& grp) {
  int dn = open("/dev/null", O_RDWR);
  if (dn >= 0 && dn != 0) { dup2(dn, 0); close(dn); }
  std::vector<int> types = grp == "a" ? std::vector<int>{0, 1, 9, 100, -1}
                           : grp == "b" ? std::vector<int>{2, 3, 4, 5, 7, 8, 10}
                                        : std::vector<int>{6};
  Vmm v;
  vmm_make(v, 2 * MiB);
  auto one = [&](const std::string& K, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC& d, int fd) {
    CUexternalSemaphore s = nullptr;
    CUresult r;
    out(K, simp(&s, d, fd, &r));
    if (!r) {
      outc(K + ".destroy", cuDestroyExternalSemaphore(s));
      if (fd >= 0) out(K + ".fdAfterDestroy", fdstate(fd));
    }
    if (fd >= 0 && fcntl(fd, F_GETFD) != -1) close(fd);
  };
  for (int t : types) {
    const std::string K = "semtype." + (t < 0 ? std::string("minus1") : i64(t)) + ".";
    one(K + "fdMinus1", sdesc(t, -1), -1);
    int m = make_memfd();
    one(K + "memfd", sdesc(t, m), m);
    int ev = make_eventfd();
    one(K + "eventfd", sdesc(t, ev), ev);
    int f = vmm_fd(v);
    one(K + "vmmFd", sdesc(t, f), f);
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC z = sdesc(t, 0);
    memset(&z.handle, 0, sizeof z.handle);
    one(K + "zeroHandle", z, -1);
    if (t == 1 || t == 9) {
      one(K + "fdMinus1.flags1", sdesc(t, -1, 1), -1);
      int ev2 = make_eventfd();
      one(K + "eventfd.flags1", sdesc(t, ev2, 1), ev2);
    }
  }
  vmm_drop(v);
}

static void probe_sem() {
  const std::string K = "sem.";
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp = sigp(1);
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp = waitp(1);
  CUexternalSemaphore dummy = nullptr;
  outc(K + "signal.num0.nullArrays", cuSignalExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
  outc(K + "signal.num0.arrays", cuSignalExternalSemaphoresAsync(&dummy, &sp, 0, nullptr));
  outc(K + "wait.num0.nullArrays", cuWaitExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
  outc(K + "wait.num0.arrays", cuWaitExternalSemaphoresAsync(&dummy, &wp, 0, nullptr));
  outr(K + "rt.signal.num0", cudaSignalExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
  outr(K + "rt.wait.num0", cudaWaitExternalSemaphoresAsync(nullptr, nullptr, 0, nullptr));
}

// =========================================================================================
// E. Runtime API subset
// =========================================================================================
static void probe_rt() {
  const std::string K = "rt.";
  Vmm v;
  vmm_make(v, 2 * MiB);
  put_dev(v.va, 64 * KiB, 9);
  cuCtxSynchronize();
  auto rd = [](int type, int fd, unsigned long long size, unsigned flags = 0) {
    cudaExternalMemoryHandleDesc d;
    memset(&d, 0, sizeof d);
    d.type = (cudaExternalMemoryHandleType)type;
    d.handle.fd = fd;
    d.size = size;
    d.flags = flags;
    return d;
  };
  auto rimp = [&](const std::string& kk, const cudaExternalMemoryHandleDesc& d, int fd,
                  cudaExternalMemory_t* keep = nullptr) {
    cudaExternalMemory_t e = (cudaExternalMemory_t)(uintptr_t)0x5e17;
    cudaError_t r = cudaImportExternalMemory(&e, &d);
    std::string s = rn(r);
    if (fd >= 0) s += " fd=" + fdstate(fd);
    if (r) s += " out=" + outstate(e, (cudaExternalMemory_t)(uintptr_t)0x5e17);
    out(kk, s);
    if (!r && keep) *keep = e;
    else if (!r) outr(kk + ".destroy", cudaDestroyExternalMemory(e));
    if (fd >= 0 && fcntl(fd, F_GETFD) != -1 && (r || !keep)) close(fd);
    cudaGetLastError();
    return r;
  };
  rimp(K + "import.fdMinus1", rd(1, -1, 2 * MiB), -1);
  rimp(K + "import.type0", rd(0, vmm_fd(v), 2 * MiB), -1);
  rimp(K + "import.type2win32Zero", rd(2, 0, 2 * MiB), -1);
  rimp(K + "import.type100", rd(100, -1, 2 * MiB), -1);
  { int m = make_memfd(); rimp(K + "import.memfd", rd(1, m, 2 * MiB), m); }
  { int f = vmm_fd(v); rimp(K + "import.size0", rd(1, f, 0), f); }
  { int f = vmm_fd(v); rimp(K + "import.size4MiB", rd(1, f, 4 * MiB), f); }
  { int f = vmm_fd(v); rimp(K + "import.flags2", rd(1, f, 2 * MiB, 2), f); }
  cudaExternalMemory_t e = nullptr;
  int f = vmm_fd(v);
  cudaError_t r = rimp(K + "import.vmmFd", rd(1, f, 2 * MiB), f, &e);
  if (!r) {
    auto bd = [](unsigned long long off, unsigned long long size, unsigned fl = 0) {
      cudaExternalMemoryBufferDesc b;
      memset(&b, 0, sizeof b);
      b.offset = off;
      b.size = size;
      b.flags = fl;
      return b;
    };
    void* p = nullptr;
    cudaExternalMemoryBufferDesc b = bd(0, 2 * MiB);
    r = cudaExternalMemoryGetMappedBuffer(&p, e, &b);
    out(K + "map.full", rx(r, "data=" + (r ? std::string() : cmp_dev((CUdeviceptr)p, 64 * KiB, 9))));
    const struct { const char* n; unsigned long long off, size; unsigned fl; } bc[] = {
        {"overEnd", MiB, 2 * MiB, 0}, {"size0", 0, 0, 0}, {"offBeyond", 4 * MiB, 4096, 0},
        {"flags1", 0, 4096, 1}, {"off1", 1, 4096, 0}};
    for (auto& c : bc) {
      void* q = nullptr;
      cudaExternalMemoryBufferDesc bb = bd(c.off, c.size, c.fl);
      cudaError_t s = cudaExternalMemoryGetMappedBuffer(&q, e, &bb);
      outr(K + "map." + c.n, s);
      cudaGetLastError();
      if (!s) cudaFree(q);
    }
    if (p) {
      cudaPointerAttributes at;
      memset(&at, 0, sizeof at);
      cudaError_t s = cudaPointerGetAttributes(&at, p);
      out(K + "map.full.attrs", rx(s, "type=" + i64(at.type) + " device=" + i64(at.device) + " devicePointer=" +
                                          sd(at.devicePointer == p) + " hostPointer=" +
                                          (at.hostPointer ? "set" : "null")));
      outr(K + "map.full.cudaFree", cudaFree(p));
      outr(K + "map.full.cudaFreeAgain", cudaFree(p));
      cudaGetLastError();
    }
    cudaExternalMemoryMipmappedArrayDesc md;
    memset(&md, 0, sizeof md);
    md.formatDesc = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    md.extent.width = 256;
    md.extent.height = 256;
    md.extent.depth = 0;
    for (unsigned lv : {1u, 9u, 100u}) {  // numLevels 0: the child risky.rtMipLevels0
      md.numLevels = lv;
      cudaMipmappedArray_t m = nullptr;
      cudaError_t s = cudaExternalMemoryGetMappedMipmappedArray(&m, e, &md);
      outr(K + "mip.l" + u64(lv), s);
      cudaGetLastError();
      if (!s) {
        cudaArray_t a = nullptr;
        outr(K + "mip.l" + u64(lv) + ".level0", cudaGetMipmappedArrayLevel(&a, m, 0));
        outr(K + "mip.l" + u64(lv) + ".levelBeyond", cudaGetMipmappedArrayLevel(&a, m, lv ? lv : 1));
        cudaGetLastError();
        outr(K + "mip.l" + u64(lv) + ".free", cudaFreeMipmappedArray(m));
      }
    }
    md.numLevels = 1;
    md.offset = 4 * MiB;
    {
      cudaMipmappedArray_t m = nullptr;
      cudaError_t s = cudaExternalMemoryGetMappedMipmappedArray(&m, e, &md);
      outr(K + "mip.offBeyond", s);
      cudaGetLastError();
      if (!s) cudaFreeMipmappedArray(m);
    }
    outr(K + "destroy", cudaDestroyExternalMemory(e));
    out(K + "destroy.fd", fdstate(f));
  }
  if (f >= 0 && fcntl(f, F_GETFD) != -1) close(f);
  // semaphores
  auto rs = [](int type, int fd, unsigned fl = 0) {
    cudaExternalSemaphoreHandleDesc d;
    memset(&d, 0, sizeof d);
    d.type = (cudaExternalSemaphoreHandleType)type;
    d.handle.fd = fd;
    d.flags = fl;
    return d;
  };
  auto rsimp = [&](const std::string& kk, const cudaExternalSemaphoreHandleDesc& d, int fd) {
    cudaExternalSemaphore_t s = (cudaExternalSemaphore_t)(uintptr_t)0x5e17;
    cudaError_t q = cudaImportExternalSemaphore(&s, &d);
    std::string str = rn(q);
    if (fd >= 0) str += " fd=" + fdstate(fd);
    if (q) str += " out=" + outstate(s, (cudaExternalSemaphore_t)(uintptr_t)0x5e17);
    out(kk, str);
    cudaGetLastError();
    if (!q) outr(kk + ".destroy", cudaDestroyExternalSemaphore(s));
    if (fd >= 0 && fcntl(fd, F_GETFD) != -1) close(fd);
  };
  rsimp(K + "sem.opaqueFd.fdMinus1", rs(1, -1), -1);
  rsimp(K + "sem.type0", rs(0, -1), -1);
  rsimp(K + "sem.type100", rs(100, -1), -1);
  rsimp(K + "sem.timeline.fdMinus1", rs(9, -1), -1);
  { int m = make_memfd(); rsimp(K + "sem.timeline.memfd", rs(9, m), m); }
  { int ev = make_eventfd(); rsimp(K + "sem.opaqueFd.eventfd", rs(1, ev), ev); }
  rsimp(K + "sem.win32Zero", rs(2, 0), -1);
  outr(K + "getLastErrorAtEnd", cudaGetLastError());
  vmm_drop(v);
}

// =========================================================================================
// F. Vulkan interop (child "vk")
// =========================================================================================
#ifdef HAVE_VK
struct Vk {
  void* lib = nullptr;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance inst = VK_NULL_HANDLE;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue q = VK_NULL_HANDLE;
  uint32_t qf = 0;
  VkCommandPool cp = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties mp;
#define VKFN(n) PFN_##n n = nullptr;
  VKFN(vkCreateInstance) VKFN(vkEnumeratePhysicalDevices) VKFN(vkGetPhysicalDeviceProperties2)
  VKFN(vkGetPhysicalDeviceQueueFamilyProperties) VKFN(vkGetPhysicalDeviceMemoryProperties) VKFN(vkCreateDevice)
  VKFN(vkEnumerateDeviceExtensionProperties) VKFN(vkGetPhysicalDeviceExternalSemaphoreProperties)
  VKFN(vkGetPhysicalDeviceExternalBufferProperties) VKFN(vkGetDeviceQueue) VKFN(vkCreateBuffer)
  VKFN(vkGetBufferMemoryRequirements) VKFN(vkAllocateMemory) VKFN(vkBindBufferMemory) VKFN(vkMapMemory)
  VKFN(vkGetMemoryFdKHR) VKFN(vkCreateCommandPool) VKFN(vkAllocateCommandBuffers) VKFN(vkBeginCommandBuffer)
  VKFN(vkEndCommandBuffer) VKFN(vkCmdCopyBuffer) VKFN(vkQueueSubmit) VKFN(vkQueueWaitIdle) VKFN(vkCreateSemaphore)
  VKFN(vkGetSemaphoreFdKHR) VKFN(vkGetSemaphoreCounterValue) VKFN(vkWaitSemaphores) VKFN(vkSignalSemaphore)
  VKFN(vkCreateFence) VKFN(vkWaitForFences) VKFN(vkDestroyFence) VKFN(vkDeviceWaitIdle) VKFN(vkFreeMemory)
  VKFN(vkDestroyBuffer) VKFN(vkDestroySemaphore)
#undef VKFN
};
static Vk g_vk;
static const char* vkr(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_INVALID_EXTERNAL_HANDLE: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    default: {
      static char b[32];
      snprintf(b, sizeof b, "VkResult(%d)", (int)r);
      return b;
    }
  }
}
static bool vk_init(const std::string& K) {
  Vk& v = g_vk;
  v.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  out(K + "loader", v.lib ? "found" : "missing");
  if (!v.lib) return false;
  v.gipa = (PFN_vkGetInstanceProcAddr)dlsym(v.lib, "vkGetInstanceProcAddr");
  if (!v.gipa) return false;
  v.vkCreateInstance = (PFN_vkCreateInstance)v.gipa(VK_NULL_HANDLE, "vkCreateInstance");
  VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  ai.pApplicationName = "probe_extmem";
  ai.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &ai;
  VkResult r = v.vkCreateInstance(&ici, nullptr, &v.inst);
  out(K + "createInstance", vkr(r));
  if (r) return false;
#define LOADI(n) v.n = (PFN_##n)v.gipa(v.inst, #n);
  LOADI(vkEnumeratePhysicalDevices) LOADI(vkGetPhysicalDeviceProperties2) LOADI(vkGetPhysicalDeviceQueueFamilyProperties)
  LOADI(vkGetPhysicalDeviceMemoryProperties) LOADI(vkCreateDevice) LOADI(vkEnumerateDeviceExtensionProperties)
  LOADI(vkGetPhysicalDeviceExternalSemaphoreProperties) LOADI(vkGetPhysicalDeviceExternalBufferProperties)
  uint32_t n = 0;
  v.vkEnumeratePhysicalDevices(v.inst, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  if (n) v.vkEnumeratePhysicalDevices(v.inst, &n, pds.data());
  out(K + "physicalDevices", u64(n));
  for (auto p : pds) {
    VkPhysicalDeviceIDProperties idp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 pp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    pp.pNext = &idp;
    v.vkGetPhysicalDeviceProperties2(p, &pp);
    if (pp.properties.vendorID != 0x10de) continue;
    v.pd = p;
    out(K + "api", u64(VK_API_VERSION_MAJOR(pp.properties.apiVersion)) + "." +
                       u64(VK_API_VERSION_MINOR(pp.properties.apiVersion)));
    CUuuid cu;
    memset(&cu, 0, sizeof cu);
    cuDeviceGetUuid(&cu, 0);
    out(K + "uuidMatchesCudaDevice0", memcmp(cu.bytes, idp.deviceUUID, 16) ? "no" : "yes");
    break;
  }
  if (!v.pd) { out(K + "nvidiaDevice", "none"); return false; }
  v.vkGetPhysicalDeviceMemoryProperties(v.pd, &v.mp);
  uint32_t ne = 0;
  v.vkEnumerateDeviceExtensionProperties(v.pd, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> ex(ne);
  v.vkEnumerateDeviceExtensionProperties(v.pd, nullptr, &ne, ex.data());
  auto has = [&](const char* e) {
    for (auto& x : ex)
      if (!strcmp(x.extensionName, e)) return true;
    return false;
  };
  out(K + "ext.externalMemoryFd", has("VK_KHR_external_memory_fd") ? "yes" : "no");
  out(K + "ext.externalSemaphoreFd", has("VK_KHR_external_semaphore_fd") ? "yes" : "no");
  out(K + "ext.externalMemoryDmaBuf", has("VK_EXT_external_memory_dma_buf") ? "yes" : "no");
  uint32_t nq = 0;
  v.vkGetPhysicalDeviceQueueFamilyProperties(v.pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  v.vkGetPhysicalDeviceQueueFamilyProperties(v.pd, &nq, qs.data());
  for (uint32_t i = 0; i < nq; i++)
    if (qs[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) { v.qf = i; break; }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = v.qf;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  const char* dex[] = {"VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd"};
  VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &f12;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 2;
  dci.ppEnabledExtensionNames = dex;
  r = v.vkCreateDevice(v.pd, &dci, nullptr, &v.dev);
  out(K + "createDevice", vkr(r));
  if (r) return false;
#define LOADD(n) v.n = (PFN_##n)v.gipa(v.inst, #n);
  LOADD(vkGetDeviceQueue) LOADD(vkCreateBuffer) LOADD(vkGetBufferMemoryRequirements) LOADD(vkAllocateMemory)
  LOADD(vkBindBufferMemory) LOADD(vkMapMemory) LOADD(vkGetMemoryFdKHR) LOADD(vkCreateCommandPool)
  LOADD(vkAllocateCommandBuffers) LOADD(vkBeginCommandBuffer) LOADD(vkEndCommandBuffer) LOADD(vkCmdCopyBuffer)
  LOADD(vkQueueSubmit) LOADD(vkQueueWaitIdle) LOADD(vkCreateSemaphore) LOADD(vkGetSemaphoreFdKHR)
  LOADD(vkGetSemaphoreCounterValue) LOADD(vkWaitSemaphores) LOADD(vkSignalSemaphore) LOADD(vkCreateFence)
  LOADD(vkWaitForFences) LOADD(vkDestroyFence) LOADD(vkDeviceWaitIdle) LOADD(vkFreeMemory) LOADD(vkDestroyBuffer)
  LOADD(vkDestroySemaphore)
  if (!v.vkGetMemoryFdKHR || !v.vkGetSemaphoreFdKHR) { out(K + "fdEntryPoints", "missing"); return false; }
  v.vkGetDeviceQueue(v.dev, v.qf, 0, &v.q);
  VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpi.queueFamilyIndex = v.qf;
  v.vkCreateCommandPool(v.dev, &cpi, nullptr, &v.cp);
  VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = v.cp;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  v.vkAllocateCommandBuffers(v.dev, &cai, &v.cb);
  return true;
}
static uint32_t vk_pick(uint32_t bits, VkMemoryPropertyFlags want, uint32_t skip = ~0u) {
  for (uint32_t i = 0; i < g_vk.mp.memoryTypeCount; i++)
    if ((bits & (1u << i)) && i != skip && (g_vk.mp.memoryTypes[i].propertyFlags & want) == want) return i;
  return ~0u;
}
struct VkBuf {
  VkBuffer b = VK_NULL_HANDLE;
  VkDeviceMemory m = VK_NULL_HANDLE;
  VkDeviceSize alloc = 0;
  uint32_t type = ~0u;
  void* map = nullptr;
};
static VkResult vk_buf(VkBuf& o, VkDeviceSize size, bool exportable, bool dedicated, VkMemoryPropertyFlags want) {
  Vk& v = g_vk;
  VkExternalMemoryBufferCreateInfo ebi = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ebi.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.pNext = exportable ? &ebi : nullptr;
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = v.vkCreateBuffer(v.dev, &bci, nullptr, &o.b);
  if (r) return r;
  VkMemoryRequirements req;
  v.vkGetBufferMemoryRequirements(v.dev, o.b, &req);
  o.type = vk_pick(req.memoryTypeBits, want);
  if (o.type == ~0u) return VK_ERROR_FEATURE_NOT_PRESENT;
  VkExportMemoryAllocateInfo emi = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
  emi.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkMemoryDedicatedAllocateInfo dai = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
  dai.buffer = o.b;
  VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  const void* chain = nullptr;
  if (dedicated) { dai.pNext = chain; chain = &dai; }
  if (exportable) { emi.pNext = chain; chain = &emi; }
  mai.pNext = chain;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = o.type;
  o.alloc = req.size;
  r = v.vkAllocateMemory(v.dev, &mai, nullptr, &o.m);
  if (r) return r;
  r = v.vkBindBufferMemory(v.dev, o.b, o.m, 0);
  if (r) return r;
  if (v.mp.memoryTypes[o.type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
    r = v.vkMapMemory(v.dev, o.m, 0, VK_WHOLE_SIZE, 0, &o.map);
  return r;
}
static void vk_buf_free(VkBuf& o) {
  if (o.b) g_vk.vkDestroyBuffer(g_vk.dev, o.b, nullptr);
  if (o.m) g_vk.vkFreeMemory(g_vk.dev, o.m, nullptr);
  o = VkBuf();
}
static int vk_mem_fd(VkDeviceMemory m, VkResult* rr = nullptr) {
  VkMemoryGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
  gi.memory = m;
  gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  int fd = -1;
  VkResult r = g_vk.vkGetMemoryFdKHR(g_vk.dev, &gi, &fd);
  if (rr) *rr = r;
  return r ? -1 : fd;
}
// submit: optional copy, optional wait / signal semaphore (with timeline values), then wait
// for the queue (or a fence with a timeout)
static VkResult vk_submit(const VkBuf* src, const VkBuf* dst, VkDeviceSize n, VkSemaphore waitS, uint64_t waitV,
                          VkSemaphore sigS, uint64_t sigV, int fence_ms = -1) {
  Vk& v = g_vk;
  if (src) {
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    v.vkBeginCommandBuffer(v.cb, &bi);
    VkBufferCopy rg = {0, 0, n};
    v.vkCmdCopyBuffer(v.cb, src->b, dst->b, 1, &rg);
    v.vkEndCommandBuffer(v.cb);
  }
  VkPipelineStageFlags st = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkTimelineSemaphoreSubmitInfo ti = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ti.waitSemaphoreValueCount = waitS ? 1 : 0;
  ti.pWaitSemaphoreValues = &waitV;
  ti.signalSemaphoreValueCount = sigS ? 1 : 0;
  ti.pSignalSemaphoreValues = &sigV;
  VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ti;
  si.commandBufferCount = src ? 1 : 0;
  si.pCommandBuffers = &v.cb;
  si.waitSemaphoreCount = waitS ? 1 : 0;
  si.pWaitSemaphores = &waitS;
  si.pWaitDstStageMask = &st;
  si.signalSemaphoreCount = sigS ? 1 : 0;
  si.pSignalSemaphores = &sigS;
  VkFence f = VK_NULL_HANDLE;
  if (fence_ms >= 0) {
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    v.vkCreateFence(v.dev, &fci, nullptr, &f);
  }
  VkResult r = v.vkQueueSubmit(v.q, 1, &si, f);
  if (r) return r;
  if (fence_ms >= 0) {
    r = v.vkWaitForFences(v.dev, 1, &f, VK_TRUE, (uint64_t)fence_ms * 1000000ull);
    if (r == VK_SUCCESS) v.vkDestroyFence(v.dev, f, nullptr);  // a pending fence is leaked
    return r;
  }
  return v.vkQueueWaitIdle(v.q);
}
static VkSemaphore vk_sem(bool timeline, VkExternalSemaphoreHandleTypeFlagBits ht, VkResult* rr = nullptr) {
  VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  tci.initialValue = 0;
  VkExportSemaphoreCreateInfo eci = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
  eci.handleTypes = ht;
  eci.pNext = timeline ? &tci : nullptr;
  VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sci.pNext = ht ? (const void*)&eci : timeline ? (const void*)&tci : nullptr;
  VkSemaphore s = VK_NULL_HANDLE;
  VkResult r = g_vk.vkCreateSemaphore(g_vk.dev, &sci, nullptr, &s);
  if (rr) *rr = r;
  return r ? VK_NULL_HANDLE : s;
}
static int vk_sem_fd(VkSemaphore s, VkExternalSemaphoreHandleTypeFlagBits ht, VkResult* rr = nullptr) {
  VkSemaphoreGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
  gi.semaphore = s;
  gi.handleType = ht;
  int fd = -1;
  VkResult r = g_vk.vkGetSemaphoreFdKHR(g_vk.dev, &gi, &fd);
  if (rr) *rr = r;
  return r ? -1 : fd;
}
static std::string vk_counter(VkSemaphore s) {
  uint64_t v = 0;
  VkResult r = g_vk.vkGetSemaphoreCounterValue(g_vk.dev, s, &v);
  return r ? vkr(r) : u64(v);
}
static VkResult vk_signal(VkSemaphore s, uint64_t val) {
  VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
  si.semaphore = s;
  si.value = val;
  return g_vk.vkSignalSemaphore(g_vk.dev, &si);
}
static VkResult vk_wait(VkSemaphore s, uint64_t val, int ms) {
  VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &s;
  wi.pValues = &val;
  return g_vk.vkWaitSemaphores(g_vk.dev, &wi, (uint64_t)ms * 1000000ull);
}
static std::string staging_cmp(const VkBuf& st, size_t n, int seed) {
  std::vector<unsigned char> e(n);
  pattern(e.data(), n, seed);
  return memcmp(st.map, e.data(), n) ? "mismatch" : "match";
}

static void vk_memory(const std::string& K0) {
  const std::string K = K0 + "mem.";
  Vk& v = g_vk;
  const VkDeviceSize SZ = MiB;
  VkBuf st, plain, ded, hv;
  VkResult r = vk_buf(st, SZ, false, false, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  out(K + "staging", vkr(r));
  if (r) return;
  r = vk_buf(plain, SZ, true, false, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  out(K + "plain.alloc", vkr(r));
  if (!r) out(K + "plain.allocationSize", u64(plain.alloc));
  r = vk_buf(ded, SZ, true, true, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  out(K + "dedicated.alloc", vkr(r));
  VkResult rh = vk_buf(hv, SZ, true, false, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  out(K + "hostVisible.allocExportable", vkr(rh));
  {
    VkPhysicalDeviceExternalBufferInfo bi = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
    bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalBufferProperties ep = {VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
    v.vkGetPhysicalDeviceExternalBufferProperties(v.pd, &bi, &ep);
    out(K + "opaqueFd.features", u64(ep.externalMemoryProperties.externalMemoryFeatures));
  }
  if (!plain.m) return;
  // fd facts
  {
    VkResult fr;
    int a = vk_mem_fd(plain.m, &fr), b = vk_mem_fd(plain.m);
    out(K + "getFd", vkr(fr));
    out(K + "fd.kind", fdkind(a));
    out(K + "fd.cloexec", cloexec(a));
    struct stat sa;
    if (a >= 0 && !fstat(a, &sa))
      out(K + "fd.fstatSize", sa.st_size == (off_t)plain.alloc ? "allocationSize" : i64(sa.st_size));
    out(K + "fd.twice", a >= 0 && b >= 0 ? inode_rel(a, b) : "failed");
    Vmm vm;
    vmm_make(vm, 2 * MiB);
    int c = vmm_fd(vm);
    out(K + "fd.kindSameAsCudaVmmFd", fdkind(a) == fdkind(c) ? "yes" : "no(" + fdkind(c) + ")");
    for (int x : {a, b, c})
      if (x >= 0) close(x);
    vmm_drop(vm);
  }
  const unsigned OF = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  // sizes and dedicated-flag mismatch
  {
    int f = vk_mem_fd(plain.m);
    imp_case(K + "plain.sizePlus1", emd(OF, f, plain.alloc + 1), f);
    f = vk_mem_fd(plain.m);
    imp_case(K + "plain.sizeHalf", emd(OF, f, plain.alloc / 2), f);
    f = vk_mem_fd(plain.m);
    imp_case(K + "plain.size2x", emd(OF, f, plain.alloc * 2), f);
    f = vk_mem_fd(plain.m);
    imp_case(K + "plain.size0", emd(OF, f, 0), f);
    f = vk_mem_fd(plain.m);
    imp_case(K + "plain.dedicatedFlag", emd(OF, f, plain.alloc, CUDA_EXTERNAL_MEMORY_DEDICATED), f);
    f = vk_mem_fd(plain.m);
    imp_case(K + "plain.asDmabufType", emd(CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD, f, plain.alloc), f);
    if (ded.m) {
      f = vk_mem_fd(ded.m);
      imp_case(K + "dedicated.noFlag", emd(OF, f, ded.alloc), f);
    }
  }
  // data both ways, for plain (flags 0) and dedicated (DEDICATED flag)
  for (int w = 0; w < 2; w++) {
    VkBuf& B = w ? ded : plain;
    if (!B.m) continue;
    const std::string kk = K + (w ? "dedicated" : "plain") + ".";
    int f = vk_mem_fd(B.m);
    CUexternalMemory e = nullptr;
    CUresult cr;
    out(kk + "import", imp(&e, emd(OF, f, B.alloc, w ? CUDA_EXTERNAL_MEMORY_DEDICATED : 0), f, &cr));
    if (cr) { if (f >= 0 && fcntl(f, F_GETFD) != -1) close(f); continue; }
    CUdeviceptr p = 0;
    CUresult m = mapbuf(&p, e, 0, B.alloc);
    outc(kk + "map", m);
    if (!m) {
      pattern((unsigned char*)st.map, SZ, 21 + w);
      out(kk + "vkFill", vkr(vk_submit(&st, &B, SZ, 0, 0, 0, 0)));
      out(kk + "cudaReadsVk", cmp_dev(p, SZ, 21 + w));
      put_dev(p, SZ, 31 + w);
      cuCtxSynchronize();
      memset(st.map, 0, SZ);
      out(kk + "vkCopyBack", vkr(vk_submit(&B, &st, SZ, 0, 0, 0, 0)));
      out(kk + "vkReadsCuda", staging_cmp(st, SZ, 31 + w));
      if (!w) {
        ptr_attrs(kk + "attr.", p, p);
        CUmemGenericAllocationHandle h = 0;
        CUresult q = cuMemRetainAllocationHandle(&h, (void*)(uintptr_t)p);
        outc(kk + "retainHandle", q);
        if (!q) cuMemRelease(h);
        // a second import of the same memory
        int f2 = vk_mem_fd(B.m);
        CUexternalMemory e2 = nullptr;
        CUresult c2;
        std::string s2 = imp(&e2, emd(OF, f2, B.alloc), f2, &c2);
        out(kk + "secondImport", c2 ? s2 : s2 + " handle=" + sd(e2 == e));
        if (!c2) {
          CUdeviceptr p2 = 0;
          if (!mapbuf(&p2, e2, 0, B.alloc)) {
            out(kk + "secondImport.bufPtr", sd(p2 == p));
            out(kk + "secondImport.sees", cmp_dev(p2, SZ, 31 + w));
            cuMemFree(p2);
          }
          if (e2 != e) cuDestroyExternalMemory(e2);
        }
        if (f2 >= 0 && fcntl(f2, F_GETFD) != -1) close(f2);
        // the runtime on the same memory
        int f3 = vk_mem_fd(B.m);
        cudaExternalMemoryHandleDesc rd;
        memset(&rd, 0, sizeof rd);
        rd.type = cudaExternalMemoryHandleTypeOpaqueFd;
        rd.handle.fd = f3;
        rd.size = B.alloc;
        cudaExternalMemory_t re = nullptr;
        cudaError_t er = cudaImportExternalMemory(&re, &rd);
        out(kk + "rt.import", rn(er) + std::string(" fd=") + fdstate(f3));
        if (!er) {
          cudaExternalMemoryBufferDesc bd;
          memset(&bd, 0, sizeof bd);
          bd.size = B.alloc;
          void* rp = nullptr;
          er = cudaExternalMemoryGetMappedBuffer(&rp, re, &bd);
          out(kk + "rt.map", rx(er, er ? "" : "data=" + cmp_dev((CUdeviceptr)rp, SZ, 31 + w)));
          if (!er) cudaFree(rp);
          outr(kk + "rt.destroy", cudaDestroyExternalMemory(re));
        }
        if (f3 >= 0 && fcntl(f3, F_GETFD) != -1) close(f3);
      }
      cuMemFree(p);
    }
    outc(kk + "destroy", cuDestroyExternalMemory(e));
    out(kk + "fdAfterDestroy", fdstate(f));
    if (f >= 0 && fcntl(f, F_GETFD) != -1) close(f);
  }
  // exportable host-visible memory: Vulkan writes through its mapping, CUDA reads
  if (!rh && hv.map) {
    int f = vk_mem_fd(hv.m);
    imp_case(K + "hostVisible.import", emd(OF, f, hv.alloc), f, [&](CUexternalMemory e) {
      CUdeviceptr p = 0;
      CUresult m = mapbuf(&p, e, 0, hv.alloc);
      outc(K + "hostVisible.map", m);
      if (!m) {
        pattern((unsigned char*)hv.map, SZ, 25);
        out(K + "hostVisible.cudaReads", cmp_dev(p, SZ, 25));
        unsigned long long t = 0;
        CUresult q = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
        out(K + "hostVisible.memoryType", q ? nm(q) : u64(t));
        cuMemFree(p);
      }
    });
  }
  // Vulkan frees its memory while CUDA still holds the import and a buffer
  if (plain.m) {
    int f = vk_mem_fd(plain.m);
    CUexternalMemory e = nullptr;
    CUresult cr;
    imp(&e, emd(OF, f, plain.alloc), f, &cr);
    CUdeviceptr p = 0;
    if (!cr && !mapbuf(&p, e, 0, plain.alloc)) {
      put_dev(p, 64 * KiB, 27);
      cuCtxSynchronize();
      vk_buf_free(plain);
      out(K + "afterVkFree.cudaReads", cmp_dev(p, 64 * KiB, 27));
      cuMemFree(p);
    }
    if (e) outc(K + "afterVkFree.destroy", cuDestroyExternalMemory(e));
    if (f >= 0 && fcntl(f, F_GETFD) != -1) close(f);
  }
  vk_buf_free(plain);
  vk_buf_free(ded);
  vk_buf_free(hv);
  vk_buf_free(st);
}

static void vk_semaphores(const std::string& K0) {
  const std::string K = K0 + "sem.";
  Vk& v = g_vk;
  const auto OPQ = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  const auto SYN = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
  for (int tl = 0; tl < 2; tl++)
    for (auto ht : {OPQ, SYN}) {
      VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
      tci.semaphoreType = tl ? VK_SEMAPHORE_TYPE_TIMELINE : VK_SEMAPHORE_TYPE_BINARY;
      VkPhysicalDeviceExternalSemaphoreInfo si = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO};
      si.pNext = &tci;
      si.handleType = ht;
      VkExternalSemaphoreProperties ep = {VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
      v.vkGetPhysicalDeviceExternalSemaphoreProperties(v.pd, &si, &ep);
      out(K + "caps." + (tl ? "timeline." : "binary.") + (ht == OPQ ? "opaqueFd" : "syncFd"),
          "features=" + u64(ep.externalSemaphoreFeatures));
    }
  VkResult r;
  VkSemaphore B = vk_sem(false, OPQ, &r);
  out(K + "binary.create", vkr(r));
  VkSemaphore T = vk_sem(true, OPQ, &r);
  out(K + "timeline.create", vkr(r));
  if (!B || !T) return;
  int fb = vk_sem_fd(B, OPQ, &r);
  out(K + "binary.getFd", vkr(r));
  int ft = vk_sem_fd(T, OPQ, &r);
  out(K + "timeline.getFd", vkr(r));
  out(K + "binary.fd.kind", fdkind(fb));
  out(K + "timeline.fd.kind", fdkind(ft));
  out(K + "binary.fd.cloexec", cloexec(fb));
  const unsigned SOF = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD, STL = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  // cross-wise and flags, each on a fresh fd
  auto trial = [&](const std::string& n, VkSemaphore s, unsigned type, unsigned flags) {
    int f = vk_sem_fd(s, OPQ);
    CUexternalSemaphore x = nullptr;
    CUresult cr;
    out(K + n, simp(&x, sdesc(type, f, flags), f, &cr));
    if (!cr) {
      outc(K + n + ".destroy", cuDestroyExternalSemaphore(x));
      out(K + n + ".fdAfterDestroy", fdstate(f));
    }
    if (f >= 0 && fcntl(f, F_GETFD) != -1) close(f);
  };
  trial("binaryAsTimelineType", B, STL, 0);
  trial("timelineAsOpaqueType", T, SOF, 0);
  trial("binary.flags1", B, SOF, 1);
  trial("timeline.flags1", T, STL, 1);
  trial("binary.asWin32Type", B, CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32, 0);
  {
    int f = vk_sem_fd(B, OPQ);
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d = sdesc(SOF, f);
    d.reserved[0] = 1;
    CUexternalSemaphore x = nullptr;
    CUresult cr;
    out(K + "binary.reserved0", simp(&x, d, f, &cr));
    if (!cr) cuDestroyExternalSemaphore(x);
    if (f >= 0 && fcntl(f, F_GETFD) != -1) close(f);
  }
  CUexternalSemaphore cB = nullptr, cT = nullptr, cB2 = nullptr;
  CUresult rb, rt;
  out(K + "binary.import", simp(&cB, sdesc(SOF, fb), fb, &rb));
  out(K + "timeline.import", simp(&cT, sdesc(STL, ft), ft, &rt));
  {
    int f = vk_sem_fd(B, OPQ);
    CUresult c2;
    std::string s = simp(&cB2, sdesc(SOF, f), f, &c2);
    out(K + "binary.secondImport", c2 || rb ? s : s + " handle=" + sd(cB2 == cB));
    if (f >= 0 && fcntl(f, F_GETFD) != -1) close(f);
  }
  CUstream s1 = nullptr, s2 = nullptr, s3 = nullptr, s4 = nullptr;
  cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s4, CU_STREAM_NON_BLOCKING);
  if (!rt) {
    const std::string k = K + "timeline.";
    outc(k + "cudaSignal5", csig(cT, 5, s1));
    outc(k + "cudaSignal5.sync", cuStreamSynchronize(s1));
    out(k + "afterCudaSignal5.vkCounter", vk_counter(T));
    out(k + "afterCudaSignal5.vkWait5", vkr(vk_wait(T, 5, 1000)));
    outc(k + "cudaWait9", cwait(cT, 9, s2));
    out(k + "cudaWait9.after300ms", poll_stream(s2, 300));
    out(k + "vkSignal7", vkr(vk_signal(T, 7)));
    out(k + "cudaWait9.afterVkSignal7", poll_stream(s2, 200));
    outc(k + "cudaWait7", cwait(cT, 7, s3));
    out(k + "cudaWait7.state", poll_stream(s3, 2000));
    out(k + "vkSignal9", vkr(vk_signal(T, 9)));
    out(k + "cudaWait9.afterVkSignal9", poll_stream(s2, 2000));
    outc(k + "cudaWait0", cwait(cT, 0, s3));
    out(k + "cudaWait0.state", poll_stream(s3, 1000));
    outc(k + "cudaWait3past", cwait(cT, 3, s3));
    out(k + "cudaWait3past.state", poll_stream(s3, 1000));
    // Vulkan queue waits on a value CUDA signals later
    outc(k + "cudaWait11ThenSignal12.wait", cwait(cT, 11, s4));
    outc(k + "cudaWait11ThenSignal12.signal", csig(cT, 12, s4));
    out(k + "vkSubmitSignal11", vkr(vk_submit(nullptr, nullptr, 0, 0, 0, T, 11, 2000)));
    out(k + "cudaWait11ThenSignal12.state", poll_stream(s4, 2000));
    out(k + "afterChain.vkCounter", vk_counter(T));
    // params validation on a live timeline semaphore
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp = sigp(13);
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp = waitp(13);
    outc(k + "signal.num0", cuSignalExternalSemaphoresAsync(&cT, &sp, 0, s1));
    outc(k + "signal.nullParams", cuSignalExternalSemaphoresAsync(&cT, nullptr, 1, s1));
    outc(k + "wait.nullParams", cuWaitExternalSemaphoresAsync(&cT, nullptr, 1, s1));
    outc(k + "signal.nullSemArray", cuSignalExternalSemaphoresAsync(nullptr, &sp, 1, s1));
    outc(k + "signal.flags1", csig(cT, 13, s1, 1));
    outc(k + "wait.flags2", cwait(cT, 13, s1, 2));
    outc(k + "wait.flags1", cwait(cT, 13, s1, 1));
    outc(k + "signal.flagsHigh", csig(cT, 13, s1, 0x80000000u));
    sp.reserved[0] = 1;
    outc(k + "signal.reserved0", cuSignalExternalSemaphoresAsync(&cT, &sp, 1, s1));
    sp = sigp(13);
    sp.params.reserved[0] = 1;
    outc(k + "signal.paramsReserved0", cuSignalExternalSemaphoresAsync(&cT, &sp, 1, s1));
    sp = sigp(13);
    sp.params.keyedMutex.key = 5;
    outc(k + "signal.keyedMutexKey", cuSignalExternalSemaphoresAsync(&cT, &sp, 1, s1));
    wp = waitp(13);
    wp.params.keyedMutex.timeoutMs = 100;
    outc(k + "wait.keyedMutexTimeout", cuWaitExternalSemaphoresAsync(&cT, &wp, 1, s1));
    outc(k + "signal.legacyStream", csig(cT, 13, CU_STREAM_LEGACY));
    outc(k + "signal.perThreadStream", csig(cT, 13, CU_STREAM_PER_THREAD));
    out(k + "afterValidation.sync", poll_stream(s1, 2000));
    cuCtxSynchronize();
    out(k + "afterValidation.vkCounter", vk_counter(T));
    outr(k + "rt.signal14", [&] {
      cudaExternalSemaphoreSignalParams p;
      memset(&p, 0, sizeof p);
      p.params.fence.value = 14;
      return cudaSignalExternalSemaphoresAsync((cudaExternalSemaphore_t*)&cT, &p, 1, (cudaStream_t)s1);
    }());
    cuStreamSynchronize(s1);
    out(k + "rt.afterSignal14.vkCounter", vk_counter(T));
    // mixed binary + timeline in one call
    if (!rb) {
      CUexternalSemaphore arr[2] = {cB, cT};
      CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS pa[2] = {sigp(0), sigp(15)};
      outc(k + "mixedSignal", cuSignalExternalSemaphoresAsync(arr, pa, 2, s1));
      CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wa[2] = {waitp(0), waitp(15)};
      outc(k + "mixedWait", cuWaitExternalSemaphoresAsync(arr, wa, 2, s1));
      out(k + "mixed.state", poll_stream(s1, 2000));
      out(k + "mixed.vkCounter", vk_counter(T));
    }
    // CUDA signals a lower value than the current one
    outc(k + "cudaSignalLower4", csig(cT, 4, s1));
    out(k + "cudaSignalLower4.state", poll_stream(s1, 2000));
    out(k + "cudaSignalLower4.vkCounter", vk_counter(T));
  }
  if (!rb) {
    const std::string k = K + "binary.";
    outc(k + "cudaSignal", csig(cB, 0, s1));
    outc(k + "cudaWait", cwait(cB, 0, s1));
    out(k + "signalThenWait.sameStream", poll_stream(s1, 2000));
    outc(k + "secondWait", cwait(cB, 0, s3));
    out(k + "secondWait.after500ms", poll_stream(s3, 500));
    outc(k + "unblockSignal", csig(cB, 0, s4));
    out(k + "secondWait.afterCudaSignalOtherStream", poll_stream(s3, 2000));
    out(k + "unblockSignal.stream", poll_stream(s4, 2000));
    out(k + "vkSubmitSignal", vkr(vk_submit(nullptr, nullptr, 0, 0, 0, B, 0, 2000)));
    outc(k + "cudaWaitAfterVkSignal", cwait(cB, 0, s1));
    out(k + "cudaWaitAfterVkSignal.state", poll_stream(s1, 2000));
    outc(k + "cudaSignalForVk", csig(cB, 0, s1));
    cuStreamSynchronize(s1);
    out(k + "vkWaitsCudaSignal", vkr(vk_submit(nullptr, nullptr, 0, B, 0, 0, 0, 2000)));
    outc(k + "signalFenceValue5", csig(cB, 5, s1));
    outc(k + "waitFenceValue5", cwait(cB, 5, s1));
    out(k + "fenceValue5.state", poll_stream(s1, 2000));
    outc(k + "signal.flags1", csig(cB, 0, s1, 1));
    outc(k + "wait.flags2", cwait(cB, 0, s1, 2));
    out(k + "flags.state", poll_stream(s1, 2000));
    outr(k + "rt.signal", [&] {
      cudaExternalSemaphoreSignalParams p;
      memset(&p, 0, sizeof p);
      return cudaSignalExternalSemaphoresAsync((cudaExternalSemaphore_t*)&cB, &p, 1, (cudaStream_t)s1);
    }());
    outr(k + "rt.wait", [&] {
      cudaExternalSemaphoreWaitParams p;
      memset(&p, 0, sizeof p);
      return cudaWaitExternalSemaphoresAsync((cudaExternalSemaphore_t*)&cB, &p, 1, (cudaStream_t)s1);
    }());
    out(k + "rt.state", poll_stream(s1, 2000));
  }
  // a SYNC_FD export (needs a pending signal) imported as opaque fd
  {
    VkSemaphore S = vk_sem(false, SYN, &r);
    out(K + "syncFd.create", vkr(r));
    if (S) {
      out(K + "syncFd.submitSignal", vkr(vk_submit(nullptr, nullptr, 0, 0, 0, S, 0, 2000)));
      int f = vk_sem_fd(S, SYN, &r);
      out(K + "syncFd.getFd", vkr(r));
      out(K + "syncFd.fd.kind", fdkind(f));
      if (f >= 0) {
        CUexternalSemaphore x = nullptr;
        CUresult cr;
        out(K + "syncFd.asOpaqueFd", simp(&x, sdesc(SOF, f), f, &cr));
        if (!cr) cuDestroyExternalSemaphore(x);
        if (fcntl(f, F_GETFD) != -1) close(f);
      }
    }
  }
  // exported binary fd imported as external memory, memory fd as semaphore
  {
    int f = vk_sem_fd(B, OPQ);
    imp_case(K + "semFdAsExternalMemory", emd(CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, f, 2 * MiB), f);
  }
  cuCtxSynchronize();
  if (cB2 && cB2 != cB) outc(K + "binary.secondImport.destroy", cuDestroyExternalSemaphore(cB2));
  if (cB) outc(K + "binary.destroy", cuDestroyExternalSemaphore(cB));
  if (cT) outc(K + "timeline.destroy", cuDestroyExternalSemaphore(cT));
  out(K + "binary.fdAfterDestroy", fdstate(fb));
  if (fb >= 0 && fcntl(fb, F_GETFD) != -1) close(fb);
  if (ft >= 0 && fcntl(ft, F_GETFD) != -1) close(ft);
  out(K0 + "end", "reached");
  // last: destroy twice (may crash)
  {
    int f = vk_sem_fd(B, OPQ);
    CUexternalSemaphore x = nullptr;
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d = sdesc(SOF, f);
    if (f >= 0 && !cuImportExternalSemaphore(&x, &d)) {
      outc(K + "destroyTwice.first", cuDestroyExternalSemaphore(x));
      outc(K + "destroyTwice.second", cuDestroyExternalSemaphore(x));
    }
  }
  out(K0 + "endAfterDestroyTwice", "reached");
}
#endif

static void child_vk() {
  const std::string K = "vk.";
#ifdef HAVE_VK
  if (!vk_init(K)) { out(K + "skipped", "init"); return; }
  vk_memory(K);
  vk_semaphores(K);
#else
  out(K + "skipped", "noHeaders");
#endif
}

// =========================================================================================
// Risky cases, each in its own child
// =========================================================================================
static const char* kRisky[] = {
    "importNullDesc",     "importNullOut",      "mapNullDevPtr",       "mapNullDesc",         "mapNullExt",
    "mapGarbageExt",      "mapDestroyedExt",    "destroyNull",         "destroyTwice",        "destroyGarbage",
    "destroyLiveBuffer",  "releaseExporter",    "oversizeAccess",      "vmmOnBuffer",         "mipNullOut",
    "mipNullDesc",        "mipNullExt",         "mipDestroyTwice",     "mipDestroyExtFirst",  "mipArrayDestroyLevel",
    "semImportNullDesc",  "semImportNullOut",   "semDestroyNull",      "semDestroyGarbage",   "signalNullArrays",
    "signalNullSemInArray", "waitNullSemInArray", "signalGarbageSem",  "rtImportNullDesc",    "rtMapNullDesc",
    "rtDestroyNull",      "rtSemDestroyNull",   "rtSignalNullArrays", "rtMipLevels0"};
static void child_risky(const std::string& n) {
  const std::string K = "risky." + n;
  Vmm v;
  CUexternalMemory e = nullptr;
  CUdeviceptr p = 0;
  const CUDA_ARRAY3D_DESCRIPTOR A = a3d(256, 256, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0);
  if (n == "importNullDesc") {
    outc(K, cuImportExternalMemory(&e, nullptr));
  } else if (n == "importNullOut") {
    vmm_make(v, 2 * MiB);
    int f = vmm_fd(v);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = emd(1, f, 2 * MiB);
    CUresult r = cuImportExternalMemory(nullptr, &d);
    out(K, std::string(nm(r)) + " fd=" + fdstate(f));
  } else if (n == "mapNullDevPtr" || n == "mapNullDesc" || n == "mapDestroyedExt") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b = bdesc(0, 2 * MiB);
    if (n == "mapNullDevPtr") outc(K, cuExternalMemoryGetMappedBuffer(nullptr, e, &b));
    else if (n == "mapNullDesc") outc(K, cuExternalMemoryGetMappedBuffer(&p, e, nullptr));
    else {
      outc(K + ".destroy", cuDestroyExternalMemory(e));
      outc(K, cuExternalMemoryGetMappedBuffer(&p, e, &b));
    }
  } else if (n == "mapNullExt" || n == "mapGarbageExt") {
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b = bdesc(0, 2 * MiB);
    outc(K, cuExternalMemoryGetMappedBuffer(&p, n == "mapNullExt" ? nullptr : (CUexternalMemory)(uintptr_t)0x12345678, &b));
  } else if (n == "destroyNull") {
    outc(K, cuDestroyExternalMemory(nullptr));
  } else if (n == "destroyGarbage") {
    outc(K, cuDestroyExternalMemory((CUexternalMemory)(uintptr_t)0x12345678));
  } else if (n == "destroyTwice") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    outc(K + ".first", cuDestroyExternalMemory(e));
    outc(K + ".second", cuDestroyExternalMemory(e));
  } else if (n == "destroyLiveBuffer") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    put_dev(v.va, 64 * KiB, 10);
    cuCtxSynchronize();
    mapbuf(&p, e, 0, 2 * MiB);
    outc(K + ".destroy", cuDestroyExternalMemory(e));
    CUdeviceptr b = 0;
    size_t s = 0;
    CUresult q = cuMemGetAddressRange(&b, &s, p);
    out(K + ".addressRange", cx(q, rel(b, p) + " size=" + u64(s)));
    out(K + ".read", cmp_dev(p, 64 * KiB, 10));
    outc(K + ".htod", put_dev(p, 4 * KiB, 11));
    outc(K + ".sync", cuCtxSynchronize());
    out(K + ".exporterSees", cmp_dev(v.va, 4 * KiB, 11));
    outc(K + ".free", cuMemFree(p));
    outc(K + ".freeAgain", cuMemFree(p));
  } else if (n == "releaseExporter") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    put_dev(v.va, 64 * KiB, 12);
    cuCtxSynchronize();
    mapbuf(&p, e, 0, 2 * MiB);
    outc(K + ".unmap", cuMemUnmap(v.va, v.size));
    outc(K + ".addressFree", cuMemAddressFree(v.va, v.size));
    outc(K + ".release", cuMemRelease(v.h));
    v = Vmm();
    out(K + ".bufferRead", cmp_dev(p, 64 * KiB, 12));
    outc(K + ".bufferWrite", put_dev(p, 4 * KiB, 13));
    outc(K + ".sync", cuCtxSynchronize());
    out(K + ".bufferReadBack", cmp_dev(p, 4 * KiB, 13));
    outc(K + ".free", cuMemFree(p));
    CUdeviceptr p2 = 0;
    CUresult m = mapbuf(&p2, e, 0, 2 * MiB);  // a new mapping after the exporter is gone
    out(K + ".mapAfterRelease", cx(m, "data=" + (m ? std::string() : cmp_dev(p2, 4 * KiB, 13))));
    if (!m) cuMemFree(p2);
    outc(K + ".destroy", cuDestroyExternalMemory(e));
  } else if (n == "oversizeAccess") {
    vmm_make(v, 2 * MiB);
    int f = vmm_fd(v);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = emd(1, f, 4 * MiB);
    CUresult r = cuImportExternalMemory(&e, &d);
    outc(K + ".import4MiB", r);
    if (r) return;
    r = mapbuf(&p, e, 0, 4 * MiB);
    outc(K + ".map4MiB", r);
    if (r) return;
    std::vector<unsigned char> b(4096);
    outc(K + ".readTail", cuMemcpyDtoH(b.data(), p + 4 * MiB - 4096, 4096));
    outc(K + ".sync", cuCtxSynchronize());
  } else if (n == "vmmOnBuffer") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    put_dev(v.va, 2 * MiB, 14);
    cuCtxSynchronize();
    mapbuf(&p, e, 0, 2 * MiB);
    outc(K + ".unmap4KiB", cuMemUnmap(p + 4096, 4096));
    outc(K + ".unmapFull", cuMemUnmap(p, 2 * MiB));
    CUmemAccessDesc ad = adesc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    outc(K + ".setAccess", cuMemSetAccess(p, 2 * MiB, &ad, 1));
    outc(K + ".map", cuMemMap(p, 2 * MiB, 0, v.h, 0));
    outc(K + ".addressFree", cuMemAddressFree(p, 2 * MiB));
    out(K + ".readAfter", cmp_dev(p, 4096, 14));
    outc(K + ".free", cuMemFree(p));
  } else if (n == "mipNullOut" || n == "mipNullDesc" || n == "mipDestroyTwice" || n == "mipDestroyExtFirst" ||
             n == "mipArrayDestroyLevel") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md = mdesc(0, A, 1);
    CUmipmappedArray m = nullptr;
    if (n == "mipNullOut") { outc(K, cuExternalMemoryGetMappedMipmappedArray(nullptr, e, &md)); return; }
    if (n == "mipNullDesc") { outc(K, cuExternalMemoryGetMappedMipmappedArray(&m, e, nullptr)); return; }
    r = cuExternalMemoryGetMappedMipmappedArray(&m, e, &md);
    if (r) { outc(K + ".map", r); return; }
    CUarray a0 = nullptr;
    cuMipmappedArrayGetLevel(&a0, m, 0);
    if (n == "mipDestroyTwice") {
      outc(K + ".first", cuMipmappedArrayDestroy(m));
      outc(K + ".second", cuMipmappedArrayDestroy(m));
    } else if (n == "mipArrayDestroyLevel") {
      outc(K + ".arrayDestroyLevel0", cuArrayDestroy(a0));
      outc(K + ".mipDestroy", cuMipmappedArrayDestroy(m));
    } else {
      outc(K + ".destroyExt", cuDestroyExternalMemory(e));
      CUarray b0 = nullptr;
      outc(K + ".getLevel", cuMipmappedArrayGetLevel(&b0, m, 0));
      std::vector<unsigned char> hb(256 * 1024);
      CUDA_MEMCPY2D cp;
      memset(&cp, 0, sizeof cp);
      cp.srcMemoryType = CU_MEMORYTYPE_HOST;
      cp.srcHost = hb.data();
      cp.srcPitch = 1024;
      cp.dstMemoryType = CU_MEMORYTYPE_ARRAY;
      cp.dstArray = a0;
      cp.WidthInBytes = 1024;
      cp.Height = 256;
      outc(K + ".htoa", cuMemcpy2D(&cp));
      outc(K + ".sync", cuCtxSynchronize());
      outc(K + ".mipDestroy", cuMipmappedArrayDestroy(m));
    }
  } else if (n == "mipNullExt") {
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC md = mdesc(0, A, 1);
    CUmipmappedArray m = nullptr;
    outc(K, cuExternalMemoryGetMappedMipmappedArray(&m, nullptr, &md));
  } else if (n == "semImportNullDesc") {
    CUexternalSemaphore s = nullptr;
    outc(K, cuImportExternalSemaphore(&s, nullptr));
  } else if (n == "semImportNullOut") {
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d = sdesc(1, -1);
    outc(K + ".fdMinus1", cuImportExternalSemaphore(nullptr, &d));
    int ev = make_eventfd();
    d = sdesc(9, ev);
    outc(K + ".timelineEventfd", cuImportExternalSemaphore(nullptr, &d));
  } else if (n == "semDestroyNull") {
    outc(K, cuDestroyExternalSemaphore(nullptr));
  } else if (n == "semDestroyGarbage") {
    outc(K, cuDestroyExternalSemaphore((CUexternalSemaphore)(uintptr_t)0x12345678));
  } else if (n == "signalNullArrays") {
    outc(K + ".signal", cuSignalExternalSemaphoresAsync(nullptr, nullptr, 1, nullptr));
    outc(K + ".wait", cuWaitExternalSemaphoresAsync(nullptr, nullptr, 1, nullptr));
  } else if (n == "signalNullSemInArray" || n == "waitNullSemInArray" || n == "signalGarbageSem") {
    CUexternalSemaphore s = n == "signalGarbageSem" ? (CUexternalSemaphore)(uintptr_t)0x12345678 : nullptr;
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp = sigp(1);
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp = waitp(1);
    if (n == "waitNullSemInArray") outc(K, cuWaitExternalSemaphoresAsync(&s, &wp, 1, nullptr));
    else outc(K, cuSignalExternalSemaphoresAsync(&s, &sp, 1, nullptr));
    outc(K + ".sync", cuCtxSynchronize());
  } else if (n == "rtImportNullDesc") {
    cudaExternalMemory_t x = nullptr;
    outr(K, cudaImportExternalMemory(&x, nullptr));
    cudaExternalSemaphore_t y = nullptr;
    outr(K + ".sem", cudaImportExternalSemaphore(&y, nullptr));
  } else if (n == "rtMapNullDesc") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    void* q = nullptr;
    outr(K, cudaExternalMemoryGetMappedBuffer(&q, (cudaExternalMemory_t)e, nullptr));
    cudaExternalMemoryBufferDesc b;
    memset(&b, 0, sizeof b);
    b.size = 4096;
    outr(K + ".nullExt", cudaExternalMemoryGetMappedBuffer(&q, nullptr, &b));
    outr(K + ".nullDevPtr", cudaExternalMemoryGetMappedBuffer(nullptr, (cudaExternalMemory_t)e, &b));
  } else if (n == "rtMipLevels0") {
    CUresult r = ext_from_vmm(v, &e);
    if (r) { outc(K + ".import", r); return; }
    cudaExternalMemoryMipmappedArrayDesc md;
    memset(&md, 0, sizeof md);
    md.formatDesc = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    md.extent.width = 256;
    md.extent.height = 256;
    md.numLevels = 0;
    cudaMipmappedArray_t m = nullptr;
    outr(K, cudaExternalMemoryGetMappedMipmappedArray(&m, (cudaExternalMemory_t)e, &md));
  } else if (n == "rtDestroyNull") {
    outr(K, cudaDestroyExternalMemory(nullptr));
  } else if (n == "rtSemDestroyNull") {
    outr(K, cudaDestroyExternalSemaphore(nullptr));
  } else if (n == "rtSignalNullArrays") {
    outr(K + ".signal", cudaSignalExternalSemaphoresAsync(nullptr, nullptr, 1, nullptr));
    outr(K + ".wait", cudaWaitExternalSemaphoresAsync(nullptr, nullptr, 1, nullptr));
  }
  out(K + ".end", "reached");
}

// =========================================================================================
static int child_main(const std::string& name, int sock) {
  int al = child_alarm(name);
  g_deadline = Clock::now() + std::chrono::seconds(al - 2);
  alarm(al);
  signal(SIGPIPE, SIG_IGN);
  Chan ch;
  ch.fd = sock;
  CUresult r = cuInit(0);
  if (r) { outc(name + ".init", r); return 1; }
  cuDevicePrimaryCtxRetain(&g_ctx, 0);
  cuCtxSetCurrent(g_ctx);
  cudaSetDevice(0);
  auto dot = name.find('.');
  std::string kind = name.substr(0, dot), arg = dot == std::string::npos ? "" : name.substr(dot + 1);
  if (kind == "xproc") child_xproc(ch);
  else if (kind == "emtypes") child_emtypes(arg);
  else if (kind == "mipcase") child_mipcase(arg);
  else if (kind == "semtypes") child_semtypes(arg);
  else if (kind == "vk") child_vk();
  else if (kind == "risky") child_risky(arg);
  else if (kind == "selftest") raise(SIGSEGV);
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
  alarm(280);
  g_deadline = Clock::now() + std::chrono::seconds(240);
  g_only = getenv("PROBE_ONLY");
  CUresult r = cuInit(0);
  outc("init", r);
  if (r) { out("done", "1"); return 0; }
  cuDeviceGetCount(&g_ndev);
  out("devices", i64(g_ndev));
  int dv = 0;
  cuDriverGetVersion(&dv);
  out("driver", i64(dv));
  cuDevicePrimaryCtxRetain(&g_ctx, 0);
  cuCtxSetCurrent(g_ctx);
  cudaSetDevice(0);
  if (want("import")) {
    probe_import();
    for (const char* g : {"emtypes.a", "emtypes.b", "emtypes.c"}) {
      Child c = spawn_child(g);
      finish_child(c);
    }
  }
  if (want("buf")) probe_buf();
  if (want("mip")) probe_mip();
  if (want("sem")) {
    probe_sem();
    for (const char* g : {"semtypes.a", "semtypes.b", "semtypes.c"}) {
      Child c = spawn_child(g);
      finish_child(c);
    }
  }
  if (want("rt")) probe_rt();
  if (want("vk")) {
    Child c = spawn_child("vk");
    finish_child(c);
  }
  if (want("risky"))
    for (const char* n : kRisky) run_risky(n);
  if (getenv("PROBE_SELFTEST")) {
    Child c = spawn_child("selftest");
    finish_child(c);
  }
  out("done", "1");
  return 0;
}
