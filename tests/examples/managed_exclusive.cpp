// Managed memory on a GPU without concurrent managed access (CONCURRENT_MANAGED_ACCESS = 0:
// pre-Pascal GPUs, Windows, some embedded platforms), run on cuda-shim's profile of one:
//   CUDA_SHIM_CONCURRENT_MANAGED_ACCESS=0 cuda-shim run -- managed_exclusive
// While the device runs work, managed memory it may use belongs to it; host code that touches it
// dies of SIGSEGV on such a GPU. cuda-shim reports the access instead, says which rule and which
// stream, and lets the program go on. A host function stands in for a kernel here.
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

std::atomic<bool> g_go{false};

// The "kernel": holds its stream busy until the host lets it finish, then doubles the data.
void CUDART_CB kernel(void* p) {
  while (!g_go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto* v = static_cast<int*>(p);
  for (int i = 0; i < 256; ++i) v[i] *= 2;
}

int check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("%s failed: %s\n", what, cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  int concurrent = -1;
  if (check(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0), "cudaDeviceGetAttribute"))
    return 1;
  std::printf("device 0: cudaDevAttrConcurrentManagedAccess = %d\n", concurrent);

  int *data = nullptr, *scratch = nullptr;
  cudaStream_t work = nullptr, other = nullptr;
  if (check(cudaMallocManaged(reinterpret_cast<void**>(&data), 256 * sizeof(int), cudaMemAttachGlobal), "alloc") ||
      check(cudaMallocManaged(reinterpret_cast<void**>(&scratch), 256 * sizeof(int), cudaMemAttachGlobal), "alloc") ||
      check(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking), "stream") ||
      check(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), "stream"))
    return 1;
  for (int i = 0; i < 256; ++i) data[i] = i;  // the device is idle: the host may write

  // 1. The mistake: reading the results before the kernel is done.
  std::printf("\n1. launch, then read data[1] without synchronizing (memory attached GLOBAL):\n");
  cudaLaunchHostFunc(work, kernel, data);
  int early = data[1];  // on such a GPU: SIGSEGV; here: explained below
  std::printf("   read %d; violations so far: %llu\n", early, cuShimManagedViolations());
  g_go = true;
  cudaStreamSynchronize(work);
  std::printf("   after cudaStreamSynchronize, data[1] = %d (no violation: the device is idle)\n", data[1]);

  // 2. Attaching memory to one stream frees it from the others' work.
  std::printf("\n2. attach 'scratch' to stream 'other', keep 'work' busy, use 'scratch' from the host:\n");
  cudaStreamAttachMemAsync(other, scratch, 0, cudaMemAttachSingle);
  cudaStreamSynchronize(other);
  g_go = false;
  cudaLaunchHostFunc(work, kernel, data);
  for (int i = 0; i < 256; ++i) scratch[i] = -i;  // fine: only 'other' may use it, and it is idle
  std::printf("   scratch[5] = %d; violations so far: %llu\n", scratch[5], cuShimManagedViolations());
  g_go = true;
  cudaStreamSynchronize(work);

  char why[1024];
  cuShimGetLastManagedViolation(why, sizeof why);
  std::printf("\nthe violation, explained:\n  %s\n", why);
  cudaFree(data);
  cudaFree(scratch);
  cudaStreamDestroy(work);
  cudaStreamDestroy(other);
  return cuShimManagedViolations() == 1 ? 0 : 2;
}
