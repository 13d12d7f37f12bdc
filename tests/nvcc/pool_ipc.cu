// An nvcc-built program (its fat binary is registered at load, its kernel never launched) that
// shares stream-ordered pool memory with a child process: a pool with POSIX-fd handles, an
// allocation from it, the pool's fd (SCM_RIGHTS over a socketpair) and the pointer's export data
// go to this binary re-run as a child (fork + exec of /proc/self/exe), which imports both, checks
// the parent's bytes and writes a pattern with cudaMemcpy; the parent reads the pattern back.
#include "nvcc_test.h"
#include "ipc_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

extern char** environ;

// In the fat binary only: the point is that registering a module leaves IPC alone.
__global__ void fill(unsigned char* p, size_t n, unsigned char v) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = v;
}

constexpr size_t kBytes = (1 << 20) + 4096;
constexpr unsigned char kParentByte = 0x5a;

static unsigned char pattern(size_t i) { return static_cast<unsigned char>((i * 7 + 3) & 0xff); }

// ---- the child ---------------------------------------------------------------------------

static int child_main(int sock) {
  g_prog = "pool_ipc[child]";
  alarm(50);  // never outlives a hung test
  int driver = 0;
  OK(cudaDriverGetVersion(&driver));  // NVIDIA's runtime loads libcuda.so.1 at its first call
  int32_t shim = on_cuda_shim() ? 1 : 0;
  send_all(sock, &shim, sizeof shim);
  int fd = recv_fd(sock);
  CHECK(fd >= 0);
  cudaMemPoolPtrExportData ed;
  std::memset(&ed, 0, sizeof ed);
  CHECK(recv_all(sock, &ed, sizeof ed));
  OK(cudaSetDevice(0));
  cudaMemPool_t pool = nullptr;
  OK(cudaMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                          cudaMemHandleTypePosixFileDescriptor, 0));
  if (fd >= 0) ::close(fd);  // the imported pool does not need the descriptor
  void* p = nullptr;
  if (pool) OK(cudaMemPoolImportPointer(&p, pool, &ed));
  int32_t wrote = 0;
  if (p) {
    std::vector<unsigned char> got(kBytes, 0);
    OK(cudaMemcpy(got.data(), p, kBytes, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (unsigned char c : got) bad += c != kParentByte;
    if (bad) std::fprintf(stderr, "%s: %zu bytes differ from the parent's 0x%02x\n", g_prog, bad, kParentByte);
    CHECK(bad == 0);
    std::vector<unsigned char> src(kBytes);
    for (size_t i = 0; i < kBytes; ++i) src[i] = pattern(i);
    OK(cudaMemcpy(p, src.data(), kBytes, cudaMemcpyHostToDevice));
    OK(cudaDeviceSynchronize());
    wrote = g_failures == 0 ? 1 : 0;
  }
  CHECK(send_all(sock, &wrote, sizeof wrote));
  int32_t done = -1;
  CHECK(recv_all(sock, &done, sizeof done) && done == 0);  // the parent has read the pattern
  // The importer lets go first: the pointer, then the pool.
  if (p) OK(cudaFree(p));
  if (pool) OK(cudaMemPoolDestroy(pool));
  return finish("imported the pool and the pointer, checked and wrote");
}

// ---- the parent --------------------------------------------------------------------------

static int wait_child(pid_t pid) {
  for (int i = 0; i < kTimeoutMs / 10; ++i) {
    int st = 0;
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (r < 0) return -1;
    ::usleep(10000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return child_main(std::atoi(argv[2]));
  g_prog = "pool_ipc";
  require_shim_if_asked();

  int count = 0;
  OK(cudaGetDeviceCount(&count));
  CHECK(count >= 1);
  if (count < 1) return finish("no device");
  OK(cudaSetDevice(0));
  cudaStream_t s = nullptr;
  OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  cudaMemPoolProps pp;
  std::memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = 0;
  cudaMemPool_t pool = nullptr;
  OK(cudaMemPoolCreate(&pool, &pp));
  void* p = nullptr;
  if (pool) OK(cudaMallocFromPoolAsync(&p, kBytes, pool, s));
  if (!p) return finish("no pool allocation");
  OK(cudaMemsetAsync(p, kParentByte, kBytes, s));
  OK(cudaStreamSynchronize(s));  // written before the child looks

  int fd = -1;
  OK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  CHECK(fd >= 0);
  cudaMemPoolPtrExportData ed;
  std::memset(&ed, 0, sizeof ed);
  OK(cudaMemPoolExportPointer(&ed, p));

  bool child_on_shim = false;
  if (fd >= 0) {
    int sv[2];
    CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    std::string fdarg = std::to_string(sv[1]);
    char self[] = "/proc/self/exe", flag[] = "--child";
    char* cargv[] = {self, flag, &fdarg[0], nullptr};
    pid_t pid = ::fork();
    if (pid == 0) {
      ::fcntl(sv[1], F_SETFD, 0);  // only the child's end survives exec
      ::execve("/proc/self/exe", cargv, environ);
      ::_exit(127);
    }
    ::close(sv[1]);
    CHECK(pid > 0);
    if (pid > 0) {
      int sock = sv[0];
      int32_t shim = -1;
      CHECK(recv_all(sock, &shim, sizeof shim));
      child_on_shim = shim == 1;
      CHECK(send_fd(sock, fd));
      CHECK(send_all(sock, &ed, sizeof ed));
      int32_t wrote = 0;
      CHECK(recv_all(sock, &wrote, sizeof wrote) && wrote == 1);
      if (wrote == 1) {
        std::vector<unsigned char> got(kBytes, 0);
        OK(cudaMemcpy(got.data(), p, kBytes, cudaMemcpyDeviceToHost));
        size_t bad = 0, first = kBytes;
        for (size_t i = 0; i < kBytes; ++i)
          if (got[i] != pattern(i)) {
            if (!bad) first = i;
            ++bad;
          }
        if (bad)
          std::fprintf(stderr, "pool_ipc: %zu bytes differ from the child's pattern, first at %zu (0x%02x, want 0x%02x)\n",
                       bad, first, got[first], pattern(first));
        CHECK(bad == 0);
      }
      int32_t done = 0;
      send_all(sock, &done, sizeof done);
      ::close(sock);
      int rc = wait_child(pid);
      if (rc != 0) std::fprintf(stderr, "pool_ipc: the child exited with %d\n", rc);
      CHECK(rc == 0);
    }
    ::close(fd);
  }
  if (expect_shim()) CHECK(child_on_shim);

  OK(cudaFreeAsync(p, s));
  OK(cudaStreamSynchronize(s));
  OK(cudaMemPoolDestroy(pool));
  OK(cudaStreamDestroy(s));
  return finish(child_on_shim ? "pool IPC with a child process on cuda-shim" : "pool IPC with a child process");
}
