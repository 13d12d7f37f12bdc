// Sharing a memory pool with another process: the parent exports the pool as a POSIX fd and an
// allocation as 64 bytes of export data; a child process (this program again, run with "child")
// receives both over a Unix socket (the fd travels as SCM_RIGHTS), imports them and uses the
// memory. Also two mistakes: exporting a pointer before its pool, allocating from an import.
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static void show(const char* who, const char* call, cudaError_t e) {
  std::printf("%s: %s -> %s\n", who, call, cudaGetErrorName(e));
#ifdef CUDA_SHIM_EXT
  char why[512];
  if (e != cudaSuccess && cuShimGetLastExplanation(why, sizeof why)) std::printf("  why: %s\n", why);
#endif
}

static int child(int sock) {
  cudaMemPoolPtrExportData data;  // the pool's fd comes with it, as ancillary data
  char ctl[CMSG_SPACE(sizeof(int))];
  iovec iov = {&data, sizeof data};
  msghdr m = {};
  m.msg_iov = &iov, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof ctl;
  if (recvmsg(sock, &m, MSG_WAITALL) != sizeof data) return 1;
  int fd;
  std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);

  cudaMemPool_t pool;
  void* p = nullptr;
  show("child", "cudaMemPoolImportFromShareableHandle", cudaMemPoolImportFromShareableHandle(
      &pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)), cudaMemHandleTypePosixFileDescriptor, 0));
  show("child", "cudaMemPoolImportPointer", cudaMemPoolImportPointer(&p, pool, &data));
  int value = 0;
  cudaMemcpy(&value, p, sizeof value, cudaMemcpyDeviceToHost);
  std::printf("child: reads %d; writes %d\n", value, value + 1);
  value += 1;
  cudaMemcpy(p, &value, sizeof value, cudaMemcpyHostToDevice);
  void* mine = nullptr;  // the mistake: an imported pool only holds what was imported into it
  show("child", "cudaMallocFromPoolAsync(imported pool)", cudaMallocFromPoolAsync(&mine, 256, pool, 0));
  cudaFree(p);  // the importer's cudaFree ends its mapping; the exporter still owns the memory
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);  // one line at a time: both processes share the output
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) return child(std::atoi(argv[2]));

  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location = {cudaMemLocationTypeDevice, 0};
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;  // exportable, as an fd
  cudaMemPool_t pool;
  void* p = nullptr;
  cudaMemPoolCreate(&pool, &props);
  cudaMallocFromPoolAsync(&p, 4096, pool, 0);
  int value = 41;
  cudaMemcpy(p, &value, sizeof value, cudaMemcpyHostToDevice);

  cudaMemPoolPtrExportData data;
  show("parent", "cudaMemPoolExportPointer (pool not exported yet)", cudaMemPoolExportPointer(&data, p));
  int fd = -1;
  show("parent", "cudaMemPoolExportToShareableHandle",
       cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  show("parent", "cudaMemPoolExportPointer", cudaMemPoolExportPointer(&data, p));

  int sv[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  pid_t pid = fork();
  if (pid == 0) execl("/proc/self/exe", argv[0], "child", std::to_string(sv[1]).c_str(), (char*)nullptr);
  char ctl[CMSG_SPACE(sizeof(int))] = {};
  iovec iov = {&data, sizeof data};
  msghdr m = {};
  m.msg_iov = &iov, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof ctl;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof fd);
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  sendmsg(sv[0], &m, 0);
  int status = 0;
  waitpid(pid, &status, 0);
  cudaMemcpy(&value, p, sizeof value, cudaMemcpyDeviceToHost);
  std::printf("parent: child exited with %d; reads %d\n", WEXITSTATUS(status), value);
  cudaFreeAsync(p, 0);
  cudaStreamSynchronize(0);
  cudaMemPoolDestroy(pool);
  return 0;
}
