// The drop-in promise for the memory APIs: built against NVIDIA's headers, linked with NVIDIA's
// -lcudart -lcuda, run on cuda-shim's libraries through LD_LIBRARY_PATH (or the launcher's
// --preload). Every runtime entry here must resolve under libcudart.so.13's version node, as
// NVIDIA's does: stream-ordered pools, a VMM allocation exported and imported as external memory,
// managed memory with attach, advise and prefetch.
//
// Then IPC across real processes: the program re-runs itself (`--child SCENARIO FD`, fork + exec,
// so the child starts CUDA from scratch) and hands it pool, legacy IPC, VMM and external-memory
// handles over a socketpair (descriptors by SCM_RIGHTS). In each exchange the parent writes one
// pattern, the child checks it and writes another, and the parent checks that one. Only what
// NVIDIA's driver does is used, so the same binary runs on a real GPU.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

static int failures = 0;
static const char* role = "dropin_memory";  // "dropin_memory[child SCENARIO]" in a child
#define EXPECT(cond)                                                          \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "%s: FAILED %s (line %d)\n", role, #cond, __LINE__); \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

// Which libcuda this process runs on: only cuda-shim's exports cuShimGetVersion.
static bool on_cuda_shim() { return dlsym(RTLD_DEFAULT, "cuShimGetVersion") != nullptr; }

static bool all_bytes(const std::vector<unsigned char>& v, unsigned char b) {
  for (unsigned char c : v)
    if (c != b) return false;
  return !v.empty();
}

// ---- A child process and the socket to it -------------------------------------------------

constexpr int kTimeoutMs = 20000;  // under ctest's 60 s: a lost peer fails instead of hanging

struct Channel {
  int fd = -1;

  bool readable() const {
    pollfd p{fd, POLLIN, 0};
    int r;
    do r = ::poll(&p, 1, kTimeoutMs);
    while (r < 0 && errno == EINTR);
    return r > 0;
  }
  bool send(const void* p, size_t n) {
    auto* c = static_cast<const char*>(p);
    while (n) {
      ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      c += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  bool recv(void* p, size_t n) {
    auto* c = static_cast<char*>(p);
    while (n) {
      if (!readable()) return false;
      ssize_t r = ::recv(fd, c, n, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      c += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  bool send_int(int64_t v) { return send(&v, sizeof v); }
  int64_t recv_int() {
    int64_t v = INT64_MIN;  // what a lost peer reads as
    return recv(&v, sizeof v) ? v : INT64_MIN;
  }
  // The descriptor itself travels (SCM_RIGHTS), with one byte of payload.
  bool send_fd(int d) {
    char byte = 'F';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = sizeof buf;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &d, sizeof d);
    return ::sendmsg(fd, &m, MSG_NOSIGNAL) == 1;
  }
  int recv_fd() {
    if (!readable()) return -1;
    char byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int))] = {};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = sizeof buf;
    if (::recvmsg(fd, &m, MSG_CMSG_CLOEXEC) != 1) return -1;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
    int d = -1;
    std::memcpy(&d, CMSG_DATA(c), sizeof d);
    return d;
  }
};

struct Child {
  pid_t pid = -1;
  Channel ch;
  bool on_shim = false;  // what the child reported about its libcuda
};

// Starts this binary as child `scenario`: fork + exec, so nothing of the parent's CUDA state
// (which must not be used after fork) reaches it. The child's first word says which libcuda it
// loaded.
static Child spawn(const char* scenario) {
  Child c;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return c;
  std::string fdarg = std::to_string(sv[1]);
  char self[] = "/proc/self/exe", flag[] = "--child";
  std::string name = scenario;
  char* argv[] = {self, flag, name.data(), fdarg.data(), nullptr};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::fcntl(sv[1], F_SETFD, 0);  // only the child's end survives exec
    ::execve("/proc/self/exe", argv, environ);
    ::_exit(127);
  }
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    return c;
  }
  c.pid = pid;
  c.ch.fd = sv[0];
  c.on_shim = c.ch.recv_int() == 1;
  return c;
}

// The child's exit status (128 + signal when killed, -1 when it had to be killed).
static int finish(Child& c) {
  if (c.ch.fd >= 0) ::close(c.ch.fd);
  c.ch.fd = -1;
  if (c.pid <= 0) return -1;
  for (int i = 0; i < kTimeoutMs / 10; ++i) {
    int st = 0;
    pid_t r = ::waitpid(c.pid, &st, WNOHANG);
    if (r == c.pid) {
      c.pid = -1;
      if (WIFEXITED(st)) return WEXITSTATUS(st);
      return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    }
    if (r < 0) break;
    ::usleep(10000);
  }
  ::kill(c.pid, SIGKILL);
  ::waitpid(c.pid, nullptr, 0);
  c.pid = -1;
  return -1;
}

// What the children reported about their libcuda, for the summary line.
static int children_on_shim = 0, children_on_nvidia = 0;

// Every exchange, the parent's half. The child has what it imports; it checks `before`, writes
// `after`, syncs and says whether the write went through. `read_back` fills `got` with what
// the parent sees now. Then the child releases its imports and exits, before the parent frees.
template <class ReadBack>
static void exchange(Child& c, size_t n, unsigned char before, unsigned char after, ReadBack read_back) {
  EXPECT(c.pid > 0);
  if (c.pid <= 0) return;
  ++(c.on_shim ? children_on_shim : children_on_nvidia);
  EXPECT(c.ch.send_int(static_cast<int64_t>(n)));
  EXPECT(c.ch.send_int(before));
  EXPECT(c.ch.send_int(after));
  int64_t wrote = c.ch.recv_int();
  EXPECT(wrote == 1);
  if (wrote == 1) {
    std::vector<unsigned char> got(n, static_cast<unsigned char>(~after));
    read_back(got);
    EXPECT(all_bytes(got, after));  // the child's writes are this process's memory
  }
  c.ch.send_int(0);  // released: the child may unmap and exit
  EXPECT(finish(c) == 0);
}

// The child's half: n and both patterns, then `check` reads the memory into a buffer and
// `write` fills it with a byte; each answers whether its calls succeeded.
struct Exchange {
  size_t n = 0;
  unsigned char before = 0, after = 0;
};
static bool child_header(Channel& ch, Exchange& x) {
  int64_t n = ch.recv_int(), b = ch.recv_int(), a = ch.recv_int();
  if (n <= 0 || b < 0 || a < 0) return false;
  x.n = static_cast<size_t>(n);
  x.before = static_cast<unsigned char>(b);
  x.after = static_cast<unsigned char>(a);
  return true;
}
template <class Read, class Write>
static void child_exchange(Channel& ch, const Exchange& x, Read read, Write write) {
  std::vector<unsigned char> got(x.n, static_cast<unsigned char>(~x.before));
  EXPECT(read(got));
  EXPECT(all_bytes(got, x.before));  // the parent's writes, seen here
  bool wrote = write(x.after);
  EXPECT(wrote);
  EXPECT(cudaDeviceSynchronize() == cudaSuccess);
  ch.send_int(wrote ? 1 : 0);
  EXPECT(ch.recv_int() == 0);  // the parent has checked
}

static void init_device() {
  EXPECT(cudaSetDevice(0) == cudaSuccess);
  EXPECT(cudaFree(nullptr) == cudaSuccess);  // the primary context, current for the cu* calls too
}

// ---- Single process -----------------------------------------------------------------------

static void single_process() {
  cudaStream_t s = nullptr;
  EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);

  // A pool that can be shared, an allocation from it, and its exported fd.
  cudaMemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = 0;
  cudaMemPool_t pool = nullptr;
  EXPECT(cudaMemPoolCreate(&pool, &pp) == cudaSuccess);
  void* pa = nullptr;
  EXPECT(cudaMallocFromPoolAsync(&pa, 1 << 20, pool, s) == cudaSuccess);
  EXPECT(cudaMemsetAsync(pa, 0x5a, 1 << 20, s) == cudaSuccess);
  int pool_fd = -1;
  EXPECT(cudaMemPoolExportToShareableHandle(&pool_fd, pool, cudaMemHandleTypePosixFileDescriptor, 0) == cudaSuccess);
  EXPECT(pool_fd >= 0);
  cudaMemPoolPtrExportData ed;
  EXPECT(cudaMemPoolExportPointer(&ed, pa) == cudaSuccess);
  EXPECT(cudaFreeAsync(pa, s) == cudaSuccess);
  EXPECT(cudaStreamSynchronize(s) == cudaSuccess);

  // A cuMemCreate allocation, exported as a POSIX fd and imported back as external memory.
  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t gran = 0;
  EXPECT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS);
  CUmemGenericAllocationHandle h = 0;
  EXPECT(cuMemCreate(&h, gran, &prop, 0) == CUDA_SUCCESS);
  int vmm_fd = -1;
  EXPECT(cuMemExportToShareableHandle(&vmm_fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  cudaExternalMemoryHandleDesc md;
  std::memset(&md, 0, sizeof md);
  md.type = cudaExternalMemoryHandleTypeOpaqueFd;
  md.handle.fd = vmm_fd;
  md.size = gran;
  cudaExternalMemory_t ext = nullptr;
  EXPECT(cudaImportExternalMemory(&ext, &md) == cudaSuccess);
  cudaExternalMemoryBufferDesc bd;
  std::memset(&bd, 0, sizeof bd);
  bd.size = gran;
  void* a = nullptr;
  void* b = nullptr;
  EXPECT(cudaExternalMemoryGetMappedBuffer(&a, ext, &bd) == cudaSuccess);
  EXPECT(cudaExternalMemoryGetMappedBuffer(&b, ext, &bd) == cudaSuccess);
  EXPECT(cudaMemset(a, 0x3c, 4096) == cudaSuccess);
  unsigned char byte = 0;
  EXPECT(cudaMemcpy(&byte, static_cast<char*>(b) + 4095, 1, cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(byte == 0x3c);  // two mappings, one memory
  EXPECT(cudaFree(a) == cudaSuccess);
  EXPECT(cudaFree(b) == cudaSuccess);
  EXPECT(cudaDestroyExternalMemory(ext) == cudaSuccess);
  EXPECT(cuMemRelease(h) == CUDA_SUCCESS);

  // Managed memory: the host writes, the stream-ordered calls accept it.
  int* m = nullptr;
  EXPECT(cudaMallocManaged(reinterpret_cast<void**>(&m), 4096, cudaMemAttachGlobal) == cudaSuccess);
  if (m) {
    m[0] = 42;
    EXPECT(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle) == cudaSuccess);
    cudaMemLocation dev;
    std::memset(&dev, 0, sizeof dev);
    dev.type = cudaMemLocationTypeDevice;
    dev.id = 0;
    EXPECT(cudaMemAdvise(m, 4096, cudaMemAdviseSetPreferredLocation, dev) == cudaSuccess);
    EXPECT(cudaMemPrefetchAsync(m, 4096, dev, 0, s) == cudaSuccess);
    EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
    int pref = -7;
    EXPECT(cudaMemRangeGetAttribute(&pref, sizeof pref, cudaMemRangeAttributePreferredLocation, m, 4096) ==
           cudaSuccess);
    EXPECT(pref == 0);
    EXPECT(m[0] == 42);
    EXPECT(cudaFree(m) == cudaSuccess);
  }

  close(pool_fd);
  EXPECT(cudaMemPoolDestroy(pool) == cudaSuccess);
  EXPECT(cudaStreamDestroy(s) == cudaSuccess);
}

// ---- (a) Pool IPC -------------------------------------------------------------------------

// A shareable pool on the device, or on host NUMA node `numa`; one allocation from it goes to
// the child as the pool's fd plus the pointer's 64 export bytes.
static void pool_ipc(bool host, int numa) {
  const size_t n = (1 << 20) + 4096;
  cudaStream_t s = nullptr;
  EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  cudaMemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  pp.location.type = host ? cudaMemLocationTypeHostNuma : cudaMemLocationTypeDevice;
  pp.location.id = host ? numa : 0;
  cudaMemPool_t pool = nullptr;
  EXPECT(cudaMemPoolCreate(&pool, &pp) == cudaSuccess);
  void* p = nullptr;
  if (pool) EXPECT(cudaMallocFromPoolAsync(&p, n, pool, s) == cudaSuccess);
  EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
  if (p) {
    // Host-located pool memory is the host's to write: the device memset refuses it.
    if (host)
      std::memset(p, 0xa1, n);
    else
      EXPECT(cudaMemsetAsync(p, 0xa1, n, s) == cudaSuccess);
    EXPECT(cudaStreamSynchronize(s) == cudaSuccess);  // written before the child looks
    int fd = -1;
    EXPECT(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0) == cudaSuccess);
    cudaMemPoolPtrExportData ed;
    std::memset(&ed, 0, sizeof ed);
    EXPECT(cudaMemPoolExportPointer(&ed, p) == cudaSuccess);
    if (fd >= 0) {
      Child c = spawn("pool");
      EXPECT(c.ch.send_fd(fd));
      EXPECT(c.ch.send(&ed, sizeof ed));
      EXPECT(c.ch.send_int(host));
      exchange(c, n, 0xa1, 0xb2, [&](std::vector<unsigned char>& got) {
        if (host)
          std::memcpy(got.data(), p, n);
        else
          EXPECT(cudaMemcpy(got.data(), p, n, cudaMemcpyDeviceToHost) == cudaSuccess);
      });
      close(fd);
    }
    EXPECT(cudaFreeAsync(p, s) == cudaSuccess);
    EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
  }
  if (pool) EXPECT(cudaMemPoolDestroy(pool) == cudaSuccess);
  EXPECT(cudaStreamDestroy(s) == cudaSuccess);
}

static void pool_child(Channel& ch) {
  int fd = ch.recv_fd();
  cudaMemPoolPtrExportData ed;
  std::memset(&ed, 0, sizeof ed);
  EXPECT(fd >= 0);
  EXPECT(ch.recv(&ed, sizeof ed));
  bool host = ch.recv_int() == 1;
  Exchange x;
  EXPECT(child_header(ch, x));
  cudaMemPool_t pool = nullptr;
  EXPECT(cudaMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                              cudaMemHandleTypePosixFileDescriptor, 0) == cudaSuccess);
  close(fd);  // the importer keeps its descriptor; the pool no longer needs it
  void* p = nullptr;
  if (pool) EXPECT(cudaMemPoolImportPointer(&p, pool, &ed) == cudaSuccess);
  // cudaMemcpyDefault: the pointer says where it lives (a host NUMA pool's memory is host memory).
  child_exchange(
      ch, x,
      [&](std::vector<unsigned char>& got) {
        return p && cudaMemcpy(got.data(), p, x.n, cudaMemcpyDefault) == cudaSuccess;
      },
      [&](unsigned char b) {
        if (!p) return false;
        if (!host) return cudaMemset(p, b, x.n) == cudaSuccess;
        std::vector<unsigned char> src(x.n, b);
        return cudaMemcpy(p, src.data(), x.n, cudaMemcpyDefault) == cudaSuccess;
      });
  // Imports go before the exporter frees: the pointer, then the pool.
  if (p) EXPECT(cudaFree(p) == cudaSuccess);
  if (pool) EXPECT(cudaMemPoolDestroy(pool) == cudaSuccess);
}

// ---- (b) Legacy IPC -----------------------------------------------------------------------

static void legacy_ipc() {
  const size_t n = 1 << 20;
  void* d = nullptr;
  EXPECT(cudaMalloc(&d, n) == cudaSuccess);
  if (!d) return;
  EXPECT(cudaMemset(d, 0xc3, n) == cudaSuccess);
  EXPECT(cudaDeviceSynchronize() == cudaSuccess);
  cudaIpcMemHandle_t h;
  std::memset(&h, 0, sizeof h);
  cudaError_t e = cudaIpcGetMemHandle(&h, d);
  EXPECT(e == cudaSuccess);
  if (e == cudaSuccess) {
    Child c = spawn("legacy");
    EXPECT(c.ch.send(&h, sizeof h));
    exchange(c, n, 0xc3, 0xd4, [&](std::vector<unsigned char>& got) {
      EXPECT(cudaMemcpy(got.data(), d, n, cudaMemcpyDeviceToHost) == cudaSuccess);
    });
  }
  EXPECT(cudaFree(d) == cudaSuccess);
}

static void legacy_child(Channel& ch) {
  cudaIpcMemHandle_t h;
  std::memset(&h, 0, sizeof h);
  EXPECT(ch.recv(&h, sizeof h));
  Exchange x;
  EXPECT(child_header(ch, x));
  void* p = nullptr;
  EXPECT(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess);
  child_exchange(
      ch, x,
      [&](std::vector<unsigned char>& got) {
        return p && cudaMemcpy(got.data(), p, x.n, cudaMemcpyDeviceToHost) == cudaSuccess;
      },
      [&](unsigned char b) { return p && cudaMemset(p, b, x.n) == cudaSuccess; });
  if (p) EXPECT(cudaIpcCloseMemHandle(p) == cudaSuccess);
}

// ---- (c) VMM and (d) external memory ------------------------------------------------------

// Reserves address space for `h` (size n), maps it and gives device 0 read-write access.
static CUdeviceptr vmm_map(CUmemGenericAllocationHandle h, size_t n) {
  CUdeviceptr va = 0;
  EXPECT(cuMemAddressReserve(&va, n, 0, 0, 0) == CUDA_SUCCESS);
  if (!va) return 0;
  EXPECT(cuMemMap(va, n, 0, h, 0) == CUDA_SUCCESS);
  CUmemAccessDesc acc;
  std::memset(&acc, 0, sizeof acc);
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = 0;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  EXPECT(cuMemSetAccess(va, n, &acc, 1) == CUDA_SUCCESS);
  return va;
}

static void vmm_unmap(CUdeviceptr va, size_t n) {
  EXPECT(cuMemUnmap(va, n) == CUDA_SUCCESS);
  EXPECT(cuMemAddressFree(va, n) == CUDA_SUCCESS);
}

// Whole-buffer copies through cuMemcpy: unified addressing tells host from device.
static bool cu_fill(CUdeviceptr va, size_t n, unsigned char b) {
  std::vector<unsigned char> src(n, b);
  return cuMemcpy(va, reinterpret_cast<CUdeviceptr>(src.data()), n) == CUDA_SUCCESS &&
         cuCtxSynchronize() == CUDA_SUCCESS;
}
static bool cu_read(std::vector<unsigned char>& dst, CUdeviceptr va) {
  return cuMemcpy(reinterpret_cast<CUdeviceptr>(dst.data()), va, dst.size()) == CUDA_SUCCESS;
}

// One cuMemCreate allocation of the minimum granularity, shared twice: as a VMM handle the
// child maps, then as external memory the child imports with the runtime.
static void vmm_and_external_ipc() {
  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t n = 0;
  EXPECT(cuMemGetAllocationGranularity(&n, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS);
  if (!n) return;
  CUmemGenericAllocationHandle h = 0;
  CUresult r = cuMemCreate(&h, n, &prop, 0);
  EXPECT(r == CUDA_SUCCESS);
  if (r != CUDA_SUCCESS) return;
  CUdeviceptr va = vmm_map(h, n);
  auto read_back = [&](std::vector<unsigned char>& got) { EXPECT(cu_read(got, va)); };

  // (c) The handle itself: the child imports it and maps it into its own address space.
  EXPECT(va && cu_fill(va, n, 0xe5));
  int fd = -1;
  EXPECT(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  if (fd >= 0 && va) {
    Child c = spawn("vmm");
    EXPECT(c.ch.send_fd(fd));
    exchange(c, n, 0xe5, 0xf6, read_back);
  }
  if (fd >= 0) close(fd);

  // (d) A second export (cudaImportExternalMemory takes ownership of the child's copy) as
  // external memory of the allocation's size.
  EXPECT(va && cu_fill(va, n, 0x17));
  fd = -1;
  EXPECT(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  if (fd >= 0 && va) {
    Child c = spawn("external");
    EXPECT(c.ch.send_fd(fd));
    exchange(c, n, 0x17, 0x28, read_back);
  }
  if (fd >= 0) close(fd);

  if (va) vmm_unmap(va, n);
  EXPECT(cuMemRelease(h) == CUDA_SUCCESS);
}

static void vmm_child(Channel& ch) {
  int fd = ch.recv_fd();
  EXPECT(fd >= 0);
  Exchange x;
  EXPECT(child_header(ch, x));
  CUmemGenericAllocationHandle h = 0;
  CUresult r = cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  EXPECT(r == CUDA_SUCCESS);
  close(fd);  // importing does not take the descriptor
  CUdeviceptr va = r == CUDA_SUCCESS ? vmm_map(h, x.n) : 0;
  child_exchange(
      ch, x, [&](std::vector<unsigned char>& got) { return va && cu_read(got, va); },
      [&](unsigned char b) { return va && cu_fill(va, x.n, b); });
  if (va) vmm_unmap(va, x.n);
  if (r == CUDA_SUCCESS) EXPECT(cuMemRelease(h) == CUDA_SUCCESS);
}

static void external_child(Channel& ch) {
  int fd = ch.recv_fd();
  EXPECT(fd >= 0);
  Exchange x;
  EXPECT(child_header(ch, x));
  cudaExternalMemoryHandleDesc md;
  std::memset(&md, 0, sizeof md);
  md.type = cudaExternalMemoryHandleTypeOpaqueFd;
  md.handle.fd = fd;  // the driver's now: not closed here
  md.size = x.n;
  cudaExternalMemory_t ext = nullptr;
  EXPECT(cudaImportExternalMemory(&ext, &md) == cudaSuccess);
  void* p = nullptr;
  if (ext) {
    cudaExternalMemoryBufferDesc bd;
    std::memset(&bd, 0, sizeof bd);
    bd.size = x.n;
    EXPECT(cudaExternalMemoryGetMappedBuffer(&p, ext, &bd) == cudaSuccess);
  }
  child_exchange(
      ch, x,
      [&](std::vector<unsigned char>& got) {
        return p && cudaMemcpy(got.data(), p, x.n, cudaMemcpyDeviceToHost) == cudaSuccess;
      },
      [&](unsigned char b) { return p && cudaMemset(p, b, x.n) == cudaSuccess; });
  if (p) EXPECT(cudaFree(p) == cudaSuccess);
  if (ext) EXPECT(cudaDestroyExternalMemory(ext) == cudaSuccess);
}

// ---- main ---------------------------------------------------------------------------------

static int child_main(const char* scenario, int fd) {
  static std::string name = std::string("dropin_memory[child ") + scenario + "]";
  role = name.c_str();
  alarm(50);  // a child never outlives a hung test
  Channel ch;
  ch.fd = fd;
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ch.send_int(on_cuda_shim() ? 1 : 0);
  init_device();
  if (std::strcmp(scenario, "pool") == 0)
    pool_child(ch);
  else if (std::strcmp(scenario, "legacy") == 0)
    legacy_child(ch);
  else if (std::strcmp(scenario, "vmm") == 0)
    vmm_child(ch);
  else if (std::strcmp(scenario, "external") == 0)
    external_child(ch);
  else
    EXPECT(!"unknown scenario");
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0) return child_main(argv[2], std::atoi(argv[3]));
  init_device();
  std::string ran = "single-process";
  single_process();

  pool_ipc(false, 0);
  ran += " pool-ipc-device";
  int numa = -1;
  EXPECT(cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, 0) == cudaSuccess);
  if (numa >= 0) {
    pool_ipc(true, numa);
    ran += " pool-ipc-host-numa";
  } else {
    ran += " (pool-ipc-host-numa skipped: no host NUMA id)";
  }
  legacy_ipc();
  ran += " legacy-ipc";
  vmm_and_external_ipc();
  ran += " vmm-ipc external-memory-ipc";

  const char* kids = children_on_shim && children_on_nvidia ? "mixed"
                     : children_on_shim                     ? "cuda-shim"
                     : children_on_nvidia                   ? "NVIDIA"
                                                            : "none";
  std::printf("dropin_memory: %s (libcuda %s, child processes %s; ran %s; %d failure%s)\n",
              failures ? "FAIL" : "PASS", on_cuda_shim() ? "cuda-shim" : "NVIDIA", kids, ran.c_str(), failures,
              failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
