// Emulator-only: what other users of the machine can reach. The registry segment and every
// memfd the emulator creates (device, pinned, managed memory, pool windows, cuMemCreate
// allocations, exportable semaphores) are mode 0600 and this user's; and, when the test runs as
// root (CI does), a process of another user (uid 65534) can open neither the segment nor the
// memory behind our descriptors through /proc, and cannot open our legacy IPC handle: it runs
// this binary again as that user and reports what the kernel and the emulator told it.
#include <cuda.h>
#include <cuda_shim_ext.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "multiprocess.hpp"
#include "unit_common.hpp"

extern char** environ;

namespace {

constexpr uid_t kNobody = 65534;

// The registry segment's name: the one the test main chose (CUDA_SHIM_REGISTRY), which must be
// the one cuShimIpcState reports.
std::string registry_name() {
  std::string state(cuShimIpcState(nullptr, 0) + 1, '\0');
  state.resize(cuShimIpcState(state.data(), state.size()));
  const std::string key = "registry /dev/shm/";
  auto at = state.find(key);
  if (at == std::string::npos) return {};
  auto end = state.find(' ', at + key.size());
  return state.substr(at + key.size(), end - at - key.size());
}

struct FdEntry {
  int fd;
  std::string link;
};
// This process's descriptors whose link starts with `prefix` (e.g. "/memfd:cuda-shim").
std::vector<FdEntry> fds_with_link(const std::string& prefix) {
  std::vector<FdEntry> out;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return out;
  int dirfd_num = dirfd(d);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    int fd = std::atoi(e->d_name);
    if (fd == dirfd_num) continue;
    char path[64], link[512];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0) continue;
    std::string l(link, static_cast<size_t>(n));
    if (l.rfind(prefix, 0) == 0) out.push_back({fd, l});
  }
  closedir(d);
  return out;
}

// A device pool shareable as POSIX descriptors (maxSize 0: the device's), and its exported descriptor.
CUmemoryPool exported_pool(int& fd, size_t max_size = 0) {
  CUmemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  pp.maxSize = max_size;
  CUmemoryPool pool = nullptr;
  REQUIRE(cuMemPoolCreate(&pool, &pp) == CUDA_SUCCESS);
  REQUIRE(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  return pool;
}

// A 2 MiB cuMemCreate allocation shareable as a POSIX descriptor, and its exported descriptor.
CUmemGenericAllocationHandle exported_vmm(int& fd) {
  CUmemAllocationProp p;
  std::memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle h = 0;
  REQUIRE(cuMemCreate(&h, 2 << 20, &p, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_SUCCESS);
  return h;
}

unsigned mode_of(int fd) {
  struct stat st {};
  REQUIRE(fstat(fd, &st) == 0);
  return st.st_mode & 07777;
}

// Runs this binary as MP child `name` under uid/gid `uid` (no supplementary groups), with the
// parent's environment: the same CUDA_SHIM_REGISTRY, so it tries the parent's segment.
mp::Child spawn_as(uid_t uid, const char* name) {
  mp::Child c;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return c;
  std::string self = "/proc/self/exe", flag = "--mp-child", nm = name, fdarg = std::to_string(sv[1]);
  char* argv[] = {self.data(), flag.data(), nm.data(), fdarg.data(), nullptr};
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(120);
    if (getuid() != uid || geteuid() != uid) _exit(121);
    fcntl(sv[1], F_SETFD, 0);  // the child's end survives exec
    execve("/proc/self/exe", argv, environ);
    _exit(127);
  }
  close(sv[1]);
  c.pid = pid;
  c.ch = mp::Channel(sv[0]);
  return c;
}

void send_str(mp::Channel& ch, const std::string& s) {
  ch.send_int(static_cast<int64_t>(s.size()));
  ch.send(s.data(), s.size());
}
std::string recv_str(mp::Channel& ch) {
  int64_t n = ch.recv_int();
  if (n < 0 || n > (1 << 20)) return "<nothing>";
  std::string s(static_cast<size_t>(n), '\0');
  ch.recv(s.data(), s.size());
  return s;
}

}  // namespace

// The other user's side: errno of opening the parent's segment and memfds, then what the
// emulator answers for the parent's legacy IPC handle (code and explanation).
MP_CHILD(other_user) {
  ch.send_int(static_cast<int64_t>(getuid()));
  const std::string seg = "/dev/shm/" + recv_str(ch);
  for (int flags : {O_RDWR, O_RDONLY}) {
    int fd = open(seg.c_str(), flags | O_CLOEXEC);
    ch.send_int(fd >= 0 ? 0 : errno);
    if (fd >= 0) close(fd);
  }
  const int parent = static_cast<int>(ch.recv_int());
  const int n = static_cast<int>(ch.recv_int());
  for (int i = 0; i < n; ++i) {
    const int num = static_cast<int>(ch.recv_int());
    const std::string path = "/proc/" + std::to_string(parent) + "/fd/" + std::to_string(num);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    ch.send_int(fd >= 0 ? 0 : errno);
    if (fd >= 0) close(fd);
  }
  // Nothing of the parent's crossed exec but the channel (every emulator descriptor is CLOEXEC).
  ch.send_int(static_cast<int64_t>(fds_with_link("/memfd:").size() + fds_with_link("/dev/shm/").size()));
  auto h = ch.recv_pod<CUipcMemHandle>();
  CUcontext ctx = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
      cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
    return 99;
  CUdeviceptr d = 0;
  ch.send_int(cuIpcOpenMemHandle(&d, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  send_str(ch, last_why());
  return 0;
}

TEST_CASE("the registry segment is this user's, mode 0600", "[security]") {
  primary();
  // A legacy IPC export attaches the registry.
  CUdeviceptr d = 0;
  REQUIRE(cuMemAlloc(&d, 4096) == CUDA_SUCCESS);
  CUipcMemHandle h;
  REQUIRE(cuIpcGetMemHandle(&h, d) == CUDA_SUCCESS);
  const std::string name = registry_name();
  REQUIRE(!name.empty());
  const char* env = std::getenv("CUDA_SHIM_REGISTRY");
  REQUIRE(env != nullptr);  // the test main gives every test binary its own (PID-suffixed)
  CHECK(name == env);
  struct stat st {};
  REQUIRE(stat(("/dev/shm/" + name).c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(st.st_uid == getuid());
  CHECK(cuMemFree(d) == CUDA_SUCCESS);
}

TEST_CASE("every memfd the emulator creates is mode 0600", "[security]") {
  primary();
  // Memory of every kind that lives in a memfd.
  CUdeviceptr dev = 0, managed = 0, pooled = 0;
  void* pinned = nullptr;
  REQUIRE(cuMemAlloc(&dev, 1 << 16) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocHost(&pinned, 1 << 16) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocManaged(&managed, 1 << 16, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocAsync(&pooled, 4096, nullptr) == CUDA_SUCCESS);  // the default pool's window

  // Exported POSIX descriptors: a cuMemCreate allocation and a pool.
  int vmm_fd = -1;
  CUmemGenericAllocationHandle vmm = exported_vmm(vmm_fd);
  CHECK(mode_of(vmm_fd) == 0600);
  int pool_fd = -1;
  CUmemoryPool pool = exported_pool(pool_fd);
  CHECK(mode_of(pool_fd) == 0600);

  int sem_fd = -1;
  REQUIRE(cuShimExportableSemaphoreCreate(&sem_fd, 0, 0) == CUDA_SUCCESS);
  CHECK(mode_of(sem_fd) == 0600);

  // Every emulator memfd this process holds, however it came to be.
  auto ours = fds_with_link("/memfd:cuda-shim");
  bool device = false, host = false, man = false, pool_window = false, vmm_obj = false;
  for (auto& f : ours) {
    INFO("fd " << f.fd << " -> " << f.link);
    CHECK(mode_of(f.fd) == 0600);
    device |= f.link.rfind("/memfd:cuda-shim-device", 0) == 0;
    host |= f.link.rfind("/memfd:cuda-shim-host", 0) == 0;
    man |= f.link.rfind("/memfd:cuda-shim-managed", 0) == 0;
    pool_window |= f.link.rfind("/memfd:cuda-shim:pool:", 0) == 0;
    vmm_obj |= f.link.rfind("/memfd:cuda-shim:vmm:", 0) == 0;
  }
  std::printf("security: %zu emulator memfds checked, all mode 0600\n", ours.size());
  CHECK(device);  // the scan saw each kind (so it checked what it should)
  CHECK(host);
  CHECK(man);
  CHECK(pool_window);
  CHECK(vmm_obj);

  close(vmm_fd);
  close(pool_fd);
  close(sem_fd);
  CHECK(cuMemRelease(vmm) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  CHECK(cuMemFreeAsync(pooled, nullptr) == CUDA_SUCCESS);
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(cuMemFree(managed) == CUDA_SUCCESS);
  CHECK(cuMemFreeHost(pinned) == CUDA_SUCCESS);
  CHECK(cuMemFree(dev) == CUDA_SUCCESS);
}

// Issue 22, item 1: a process given an exported descriptor (or reopening one through
// /proc/<pid>/fd) used to be able to ftruncate it, and the exporter then died of SIGBUS at its
// next access to its own memory. Every emulator memfd now has a sealed size.
TEST_CASE("no holder of an emulator memfd can truncate it under its owner", "[security]") {
  primary();
  CUdeviceptr dev = 0, managed = 0;
  void* pinned = nullptr;
  REQUIRE(cuMemAlloc(&dev, 1 << 16) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocHost(&pinned, 1 << 16) == CUDA_SUCCESS);
  REQUIRE(cuMemAllocManaged(&managed, 1 << 16, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
  int pool_fd = -1;
  CUmemoryPool pool = exported_pool(pool_fd);
  CUdeviceptr pooled = 0;
  REQUIRE(cuMemAllocFromPoolAsync(&pooled, 1 << 20, pool, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);

  // The attack, on every emulator memfd this process holds: the exported pool's descriptor
  // and the ones an importer could reopen through /proc.
  auto ours = fds_with_link("/memfd:cuda-shim");
  REQUIRE(ours.size() >= 4);
  for (auto& f : ours) {
    INFO("fd " << f.fd << " -> " << f.link);
    struct stat before {};
    REQUIRE(fstat(f.fd, &before) == 0);
    errno = 0;
    CHECK(ftruncate(f.fd, 0) == -1);
    CHECK(errno == EPERM);
    CHECK(ftruncate(f.fd, before.st_size + (1 << 20)) == -1);  // nor grown
    CHECK(fcntl(f.fd, F_ADD_SEALS, F_SEAL_WRITE) == -1);        // nor sealed further
    struct stat after {};
    REQUIRE(fstat(f.fd, &after) == 0);
    CHECK(after.st_size == before.st_size);
  }
  // The owner goes on using all of it (it would have died of SIGBUS here).
  std::vector<unsigned char> host(1 << 16, 0x5a), back(1 << 16, 0);
  CHECK(cuMemcpyHtoD(dev, host.data(), host.size()) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoD(pooled, host.data(), host.size()) == CUDA_SUCCESS);
  CHECK(cuMemcpyDtoH(back.data(), pooled, back.size()) == CUDA_SUCCESS);
  CHECK(back == host);
  std::memset(pinned, 1, 1 << 16);
  std::memset(reinterpret_cast<void*>(managed), 2, 1 << 16);

  close(pool_fd);
  CHECK(cuMemFreeAsync(pooled, nullptr) == CUDA_SUCCESS);
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
  CHECK(cuMemFree(managed) == CUDA_SUCCESS);
  CHECK(cuMemFreeHost(pinned) == CUDA_SUCCESS);
  CHECK(cuMemFree(dev) == CUDA_SUCCESS);
}

// Issue 22, item 2: imports trusted a memfd's name. A copy of an exported descriptor's name on
// a memfd of another process's making (unsealed, or sealed but shorter than the pool's window)
// is a descriptor no driver exported: CUDA_ERROR_UNKNOWN, as for any foreign memfd. (Had it the
// right size and seals, its inode would still give it away: the next test case.)
TEST_CASE("a memfd that copies an export's name is refused at import", "[security]") {
  primary();
  int pool_fd = -1;
  CUmemoryPool pool = exported_pool(pool_fd, 64 << 20);
  int vmm_fd = -1;
  CUmemGenericAllocationHandle vmm = exported_vmm(vmm_fd);

  auto name_of = [](int fd) {
    char path[64], link[512];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, link, sizeof link - 1);
    REQUIRE(n > 0);
    std::string l(link, static_cast<size_t>(n));
    l = l.substr(std::strlen("/memfd:"));
    return l.substr(0, l.find(" (deleted)"));
  };
  auto forge = [](const std::string& name, off_t size, bool seal) {
    int fd = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, size) == 0);
    if (seal) REQUIRE(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0);
    return fd;
  };
  struct stat pst {}, vst {};
  REQUIRE(fstat(pool_fd, &pst) == 0);
  REQUIRE(fstat(vmm_fd, &vst) == 0);

  CUmemoryPool imported = nullptr;
  const int unsealed_pool = forge(name_of(pool_fd), pst.st_size, false);
  CHECK(cuMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t(unsealed_pool)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_ERROR_UNKNOWN);
  CHECK(last_why().find("not sealed") != std::string::npos);
  const int short_pool = forge(name_of(pool_fd), 4096, true);
  CHECK(cuMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t(short_pool)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == CUDA_ERROR_UNKNOWN);
  // Its identity is checked first (the next test case): no record names this inode.
  CHECK(last_why().find("not the object exported under that name") != std::string::npos);
  CUmemGenericAllocationHandle h = 0;
  const int unsealed_vmm = forge(name_of(vmm_fd), vst.st_size, false);
  CHECK(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(intptr_t(unsealed_vmm)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == CUDA_ERROR_UNKNOWN);
  CHECK(last_why().find("not sealed") != std::string::npos);

  // The real exports still import (the checks refuse only what no driver made).
  CHECK(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(intptr_t(vmm_fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == CUDA_SUCCESS);
  CHECK(cuMemRelease(h) == CUDA_SUCCESS);

  for (int fd : {unsealed_pool, short_pool, unsealed_vmm, pool_fd, vmm_fd}) close(fd);
  CHECK(cuMemRelease(vmm) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

namespace {

// The name of the memfd behind fd, as any process of the user reads it (readlink of /proc/<pid>/fd).
std::string memfd_name(int fd) {
  char path[64], link[512];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, link, sizeof link - 1);
  REQUIRE(n > 0);
  std::string l(link, static_cast<size_t>(n));
  REQUIRE(l.rfind("/memfd:", 0) == 0);
  l = l.substr(std::strlen("/memfd:"));
  return l.substr(0, l.find(" (deleted)"));
}

// A perfect copy of what an export shows: its name, its size and its seals, and its bytes.
int forge_copy(int real, const std::string& name) {
  struct stat st {};
  REQUIRE(fstat(real, &st) == 0);
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  REQUIRE(fd >= 0);
  REQUIRE(fchmod(fd, 0600) == 0);
  REQUIRE(ftruncate(fd, st.st_size) == 0);
  std::vector<char> buf(1 << 16);
  for (off_t at = 0; at < st.st_size; at += static_cast<off_t>(buf.size())) {
    ssize_t n = pread(real, buf.data(), buf.size(), at);
    REQUIRE(n > 0);
    REQUIRE(pwrite(fd, buf.data(), static_cast<size_t>(n), at) == n);
  }
  REQUIRE(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0);
  return fd;
}

CUresult import_pool_fd(int fd, CUmemoryPool& out) {
  return cuMemPoolImportFromShareableHandle(&out, reinterpret_cast<void*>(intptr_t(fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
}
CUresult import_vmm_fd(int fd, CUmemGenericAllocationHandle& out) {
  return cuMemImportFromShareableHandle(&out, reinterpret_cast<void*>(intptr_t(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
}
// cuImportExternalMemory owns the descriptor once it looked at it (closed, refused or not).
CUresult import_external_memory(int fd, size_t size, CUexternalMemory& out) {
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  d.size = size;
  return cuImportExternalMemory(&out, &d);
}
CUresult import_external_semaphore(int fd, CUexternalSemaphore& out) {
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d;
  std::memset(&d, 0, sizeof d);
  d.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  return cuImportExternalSemaphore(&out, &d);
}

}  // namespace

// Issue 22, item 2: an import proves that what it was handed IS the exporter's object. A
// forger that copies everything an export shows (the name, readable through /proc; the size;
// the seals; even the bytes) still makes a memfd of its own, with an inode of its own, and the
// registry record of the export names the real one (ipc/identity.hpp).
TEST_CASE("a memfd that copies an export's name, size, seals and bytes is refused at every import", "[security]") {
  primary();
  int pool_fd = -1, vmm_fd = -1, sem_fd = -1;
  CUmemoryPool pool = exported_pool(pool_fd, 64 << 20);
  CUmemGenericAllocationHandle vmm = exported_vmm(vmm_fd);
  REQUIRE(cuShimExportableSemaphoreCreate(&sem_fd, 1, 5) == CUDA_SUCCESS);

  CUmemoryPool ip = nullptr;
  CUmemGenericAllocationHandle ih = 0;
  CUexternalMemory em = nullptr;
  CUexternalSemaphore es = nullptr;
  const std::string copied = "not the object exported under that name";
  {
    const int forged = forge_copy(pool_fd, memfd_name(pool_fd));
    CHECK(import_pool_fd(forged, ip) == CUDA_ERROR_UNKNOWN);
    INFO(last_why());
    CHECK(last_why().find(copied) != std::string::npos);
    close(forged);
  }
  {
    const int forged = forge_copy(vmm_fd, memfd_name(vmm_fd));
    CHECK(import_vmm_fd(forged, ih) == CUDA_ERROR_UNKNOWN);
    INFO(last_why());
    CHECK(last_why().find(copied) != std::string::npos);
    CHECK(import_external_memory(forged, 2 << 20, em) == CUDA_ERROR_UNKNOWN);  // closes it
    CHECK(last_why().find(copied) != std::string::npos);
  }
  {
    const int forged = forge_copy(sem_fd, memfd_name(sem_fd));
    CHECK(import_external_semaphore(forged, es) == CUDA_ERROR_UNKNOWN);
    INFO(last_why());
    CHECK(last_why().find(copied) != std::string::npos);
    unsigned long long v = 0;  // nor does the stand-in for the other API take it
    CHECK(cuShimExportableSemaphoreGetValue(forged, &v) == CUDA_ERROR_INVALID_VALUE);
    close(forged);
  }
  {
    // A name of the right shape whose object nobody exported (another token).
    std::string name = memfd_name(vmm_fd);
    const size_t at = std::strlen("cuda-shim:vmm:");
    name[at] = name[at] == '0' ? '1' : '0';
    const int forged = forge_copy(vmm_fd, name);
    CHECK(import_vmm_fd(forged, ih) == CUDA_ERROR_UNKNOWN);
    INFO(last_why());
    CHECK(last_why().find("no process of this user exported it") != std::string::npos);
    close(forged);
  }

  // The real exports still import, every way.
  REQUIRE(import_pool_fd(pool_fd, ip) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(ip) == CUDA_SUCCESS);
  REQUIRE(import_vmm_fd(vmm_fd, ih) == CUDA_SUCCESS);
  CHECK(cuMemRelease(ih) == CUDA_SUCCESS);
  REQUIRE(import_external_memory(dup(vmm_fd), 2 << 20, em) == CUDA_SUCCESS);
  CHECK(cuDestroyExternalMemory(em) == CUDA_SUCCESS);
  REQUIRE(import_external_semaphore(dup(sem_fd), es) == CUDA_SUCCESS);
  CHECK(cuDestroyExternalSemaphore(es) == CUDA_SUCCESS);
  unsigned long long v = 0;
  CHECK(cuShimExportableSemaphoreGetValue(sem_fd, &v) == CUDA_SUCCESS);
  CHECK(v == 5);

  for (int fd : {pool_fd, vmm_fd, sem_fd}) close(fd);
  CHECK(cuMemRelease(vmm) == CUDA_SUCCESS);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

// Object records outlive their exporter's hold on the object (a descriptor in flight keeps it
// alive), so they pile up: when the registry's table fills, those of objects no exporter holds
// any more give way, oldest first, and exports go on.
TEST_CASE("records of exports nobody holds any more give way when the registry fills", "[security]") {
  primary();
  auto export_released = [](int& fd) {
    CUmemGenericAllocationHandle h = exported_vmm(fd);
    REQUIRE(cuMemRelease(h) == CUDA_SUCCESS);  // the exporter no longer holds it; fd does
  };
  int oldest = -1, held_fd = -1;
  export_released(oldest);
  CUmemGenericAllocationHandle held = exported_vmm(held_fd);  // still its exporter's
  const int kExports = 32768;  // the table's size: without eviction, the last ones would fail
  for (int i = 0; i < kExports; ++i) {
    int fd = -1;
    export_released(fd);
    close(fd);
  }
  int newest = -1;
  export_released(newest);
  CUmemGenericAllocationHandle h = 0;
  CHECK(import_vmm_fd(newest, h) == CUDA_SUCCESS);
  CHECK(cuMemRelease(h) == CUDA_SUCCESS);
  // The oldest record went first: its descriptor, kept this long, is no longer vouched for.
  CHECK(import_vmm_fd(oldest, h) == CUDA_ERROR_UNKNOWN);
  CHECK(last_why().find("no process of this user exported it") != std::string::npos);
  CHECK(import_vmm_fd(held_fd, h) == CUDA_SUCCESS);  // held by its exporter: kept
  CHECK(cuMemRelease(h) == CUDA_SUCCESS);
  CHECK(cuMemRelease(held) == CUDA_SUCCESS);
  std::string report(1 << 16, '\0');
  CHECK(cuShimRegistryCheck(report.data(), report.size()) == 0);
  INFO(report.c_str());
  for (int fd : {oldest, newest, held_fd}) close(fd);
}

// The other user's forger: a copy of an export's name, size and seals, made as uid 65534 and
// handed over a socket (what a victim that accepts descriptors from others would receive).
MP_CHILD(forger) {
  const std::string name = recv_str(ch);
  const int64_t size = ch.recv_int();
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  bool ok = fd >= 0 && ftruncate(fd, size) == 0 &&
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0;
  ch.send_int(ok ? 0 : errno);
  if (ok) ch.send_fd(fd);
  return 0;
}

TEST_CASE("another user's copy of an export is refused at import", "[security]") {
  if (geteuid() != 0) {
    WARN("SKIPPED: switching to uid " << kNobody << " needs root (CI runs as root); this section asserted nothing");
    return;
  }
  primary();
  int pool_fd = -1;
  CUmemoryPool pool = exported_pool(pool_fd, 64 << 20);
  struct stat st {};
  REQUIRE(fstat(pool_fd, &st) == 0);
  auto c = spawn_as(kNobody, "forger");
  send_str(c.ch, memfd_name(pool_fd));
  c.ch.send_int(st.st_size);
  REQUIRE(c.ch.recv_int() == 0);
  const int forged = c.ch.recv_fd();
  REQUIRE(forged >= 0);
  CHECK(c.wait() == 0);
  CUmemoryPool ip = nullptr;
  CHECK(import_pool_fd(forged, ip) == CUDA_ERROR_UNKNOWN);
  INFO(last_why());
  CHECK(last_why().find("made by uid 65534") != std::string::npos);
  close(forged);
  close(pool_fd);
  CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

TEST_CASE("another user reaches neither the registry, nor our memory, nor our IPC handles", "[security]") {
  if (geteuid() != 0) {
    WARN("SKIPPED: switching to uid " << kNobody << " needs root (CI runs as root); this section asserted nothing");
    return;
  }
  primary();
  CUdeviceptr d = 0;
  REQUIRE(cuMemAlloc(&d, 1 << 16) == CUDA_SUCCESS);
  REQUIRE(cuMemsetD8(d, 0x5e, 1 << 16) == CUDA_SUCCESS);
  CUipcMemHandle h;
  REQUIRE(cuIpcGetMemHandle(&h, d) == CUDA_SUCCESS);
  const std::string name = registry_name();
  REQUIRE(!name.empty());
  auto memfds = fds_with_link("/memfd:cuda-shim");
  REQUIRE(!memfds.empty());

  auto c = spawn_as(kNobody, "other_user");
  REQUIRE(c.ch.recv_int() == kNobody);  // it really runs as the other user
  send_str(c.ch, name);
  int e_rw = static_cast<int>(c.ch.recv_int()), e_ro = static_cast<int>(c.ch.recv_int());
  CHECK(e_rw == EACCES);  // the segment: mode 0600, root's
  CHECK(e_ro == EACCES);
  c.ch.send_int(getpid());
  c.ch.send_int(static_cast<int64_t>(memfds.size()));
  for (auto& f : memfds) c.ch.send_int(f.fd);
  for (auto& f : memfds) {
    int e = static_cast<int>(c.ch.recv_int());
    INFO("/proc/" << getpid() << "/fd/" << f.fd << " -> " << f.link << ": errno " << e);
    CHECK((e == EACCES || e == EPERM));
  }
  CHECK(c.ch.recv_int() == 0);  // no emulator descriptor leaked across exec
  c.ch.send_pod(h);
  const auto code = c.ch.recv_int();
  const std::string why = recv_str(c.ch);
  INFO("the other user's cuIpcOpenMemHandle: " << code << ": " << why);
  CHECK(code == CUDA_ERROR_INVALID_VALUE);  // what a handle naming nothing reachable is
  CHECK(why.find("cannot attach the shared registry segment '" + name + "'") != std::string::npos);
  CHECK(why.find("Permission denied") != std::string::npos);
  CHECK(why.find("belongs to uid 0") != std::string::npos);
  CHECK(c.wait() == 0);

  // Our own memory is untouched and still ours.
  std::vector<unsigned char> back(1 << 16);
  REQUIRE(cuMemcpyDtoH(back.data(), d, back.size()) == CUDA_SUCCESS);
  CHECK(back[0] == 0x5e);
  CHECK(back.back() == 0x5e);
  CHECK(cuMemFree(d) == CUDA_SUCCESS);
}
