// Kernels on both sides of a memory pool shared with another process (pool_ipc.cu's pattern,
// with kernels where that one copies): the parent fills a pool allocation with a kernel, exports
// the pool (POSIX fd over a socketpair, SCM_RIGHTS) and the pointer to this binary re-run as a
// child; the child imports both and launches a kernel that counts, on the device, the bytes that
// differ from the parent's fill and writes a pattern through the imported pointer; the parent
// reads the pattern back with cudaMemcpy and checks every byte. A kernel in one process writes
// what another process reads through a pool export (issue 38, item 4).
#include "kernel_test.h"
#include "ipc_socket.h"

#include <sys/socket.h>

constexpr size_t kBytes = (1 << 20) + 4093;  // not a multiple of the block: the tail is partial
constexpr unsigned char kParentByte = 0x5a;

__host__ __device__ static unsigned char pattern(size_t i) { return static_cast<unsigned char>((i * 7 + 3) & 0xff); }

__global__ void fill(unsigned char* p, size_t n, unsigned char v) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = v;
}

// Counts the bytes that are not `want`, then writes the pattern over them.
__global__ void check_and_write(unsigned char* p, size_t n, unsigned char want, unsigned long long* differ) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  if (p[i] != want) atomicAdd(differ, 1ull);
  p[i] = pattern(i);
}

static unsigned grid_for(size_t n, unsigned block) { return static_cast<unsigned>((n + block - 1) / block); }

// ---- the child ---------------------------------------------------------------------------

static int child_main(int sock) {
  g_prog = "pool_ipc_kernel[child]";
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
  if (fd >= 0) ::close(fd);
  void* p = nullptr;
  if (pool) OK(cudaMemPoolImportPointer(&p, pool, &ed));
  int32_t wrote = 0;
  unsigned long long* differ = nullptr;
  OK(cudaMalloc(&differ, sizeof *differ));
  if (p && differ) {
    OK(cudaMemset(differ, 0, sizeof *differ));
    cudaStream_t s = nullptr;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    check_and_write<<<grid_for(kBytes, 256), 256, 0, s>>>(static_cast<unsigned char*>(p), kBytes, kParentByte, differ);
    bool ok = LAUNCHED("check_and_write");
    OK(cudaStreamSynchronize(s));
    unsigned long long bad = ~0ull;
    OK(cudaMemcpy(&bad, differ, sizeof bad, cudaMemcpyDeviceToHost));
    if (ok && bad != 0)
      std::fprintf(stderr, "%s: FAILED: the kernel found %llu of %zu bytes differing from the parent's 0x%02x\n", g_prog,
                   bad, kBytes, kParentByte);
    CHECK(!ok || bad == 0);
    OK(cudaStreamDestroy(s));
    wrote = ok && g_failures == 0 ? 1 : 0;
  }
  CHECK(send_all(sock, &wrote, sizeof wrote));
  int32_t done = -1;
  CHECK(recv_all(sock, &done, sizeof done) && done == 0);  // the parent has read the pattern
  if (differ) OK(cudaFree(differ));
  if (p) OK(cudaFree(p));
  if (pool) OK(cudaMemPoolDestroy(pool));
  return finish("imported the pool and the pointer; a kernel checked and wrote them");
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
  g_prog = "pool_ipc_kernel";
  require_shim_if_asked();
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
  OK(cudaMemsetAsync(p, 0, kBytes, s));
  fill<<<grid_for(kBytes, 512), 512, 0, s>>>(static_cast<unsigned char*>(p), kBytes, kParentByte);
  if (!LAUNCHED("fill")) return finish("the parent's fill kernel did not launch");
  OK(cudaStreamSynchronize(s));  // written before the child looks
  {
    std::vector<unsigned char> got(kBytes, 0);
    OK(cudaMemcpy(got.data(), p, kBytes, cudaMemcpyDeviceToHost));
    expect_equal_ints("the parent's fill", got, std::vector<unsigned char>(kBytes, kParentByte));
  }

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
        std::vector<unsigned char> got(kBytes, 0), want(kBytes);
        for (size_t i = 0; i < kBytes; ++i) want[i] = pattern(i);
        OK(cudaMemcpy(got.data(), p, kBytes, cudaMemcpyDeviceToHost));
        expect_equal_ints("bytes the child's kernel wrote", got, want);
      }
      int32_t done = 0;
      send_all(sock, &done, sizeof done);
      ::close(sock);
      int rc = wait_child(pid);
      if (rc != 0) std::fprintf(stderr, "pool_ipc_kernel: the child exited with %d\n", rc);
      CHECK(rc == 0);
    }
    ::close(fd);
  }
  if (expect_shim()) CHECK(child_on_shim);
  OK(cudaFreeAsync(p, s));
  OK(cudaStreamSynchronize(s));
  OK(cudaMemPoolDestroy(pool));
  OK(cudaStreamDestroy(s));
  return finish("a kernel in a child process wrote a pool allocation the parent exported");
}
