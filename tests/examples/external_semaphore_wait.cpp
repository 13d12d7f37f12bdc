// An external semaphore holds a stream: a wait runs in stream order and the stream goes no
// further until the other API signals. The other side here is cuda-shim's exportable semaphore
// (cuda_shim_ext.h), standing in for Vulkan's vkGetSemaphoreFdKHR, which lavapipe lacks.
// A timeline semaphore is a counter: a wait for 2 holds until the value reaches 2.
// The mistake: importing an fd that is no semaphore. A refused semaphore import leaves its fd
// open (a successful one closes it; external memory's import closes it either way).
#include <cuda.h>
#include <cuda_shim_ext.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

static void show(const char* call, CUresult r) {
  const char* name = "?";
  cuGetErrorName(r, &name);
  std::printf("%s -> %s\n", call, name);
  char why[512];  // NOT_READY is a query's answer ("work pending"), not a mistake to explain
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY && cuShimGetLastExplanation(why, sizeof why))
    std::printf("  why: %s\n", why);
}

int main() {
  CUcontext ctx;
  CUstream s;
  cuInit(0);
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);

  int fd = -1;  // the other API's timeline semaphore, at 0
  cuShimExportableSemaphoreCreate(&fd, 1, 0);
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc = {};
  desc.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  desc.handle.fd = dup(fd);  // a successful import takes (closes) its fd; we keep the original
  CUexternalSemaphore sem;
  show("cuImportExternalSemaphore(timeline fd)", cuImportExternalSemaphore(&sem, &desc));

  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wait = {};
  wait.params.fence.value = 2;
  show("cuWaitExternalSemaphoresAsync(value 2)", cuWaitExternalSemaphoresAsync(&sem, &wait, 1, s));
  show("cuStreamQuery", cuStreamQuery(s));
  cuShimExportableSemaphoreSignal(fd, 1);
  std::printf("the other API signals 1\n");
  show("cuStreamQuery", cuStreamQuery(s));
  cuShimExportableSemaphoreSignal(fd, 2);
  std::printf("the other API signals 2\n");
  show("cuStreamSynchronize", cuStreamSynchronize(s));

  // The other direction: the stream signals, the other API sees the value.
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sig = {};
  sig.params.fence.value = 5;
  show("cuSignalExternalSemaphoresAsync(value 5)", cuSignalExternalSemaphoresAsync(&sem, &sig, 1, s));
  cuStreamSynchronize(s);
  unsigned long long v = 0;
  cuShimExportableSemaphoreGetValue(fd, &v);
  std::printf("the other API reads %llu\n", v);
  show("cuDestroyExternalSemaphore", cuDestroyExternalSemaphore(sem));

  // The mistake: a plain memfd is no semaphore.
  desc.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  int plain = memfd_create("not-a-semaphore", 0);
  desc.handle.fd = fcntl(plain, F_DUPFD, 100);  // a fixed number: the explanation names it
  close(plain);
  show("cuImportExternalSemaphore(a plain memfd)", cuImportExternalSemaphore(&sem, &desc));
  std::printf("the memfd after the refusal: %s\n", fcntl(desc.handle.fd, F_GETFD) == -1 ? "closed" : "still open");
  close(desc.handle.fd);
  close(fd);
  cuStreamDestroy(s);
  cuDevicePrimaryCtxRelease(0);
  return 0;
}
