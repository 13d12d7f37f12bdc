// Three mistakes with a memory pool, the codes NVIDIA's driver returns for them, and the
// explanation cuda-shim records for each (cuShimGetLastExplanation; cuda-shim only, hence
// the #ifdef: the same program builds and runs on the real driver).
#include <cuda_runtime_api.h>
#include <cuda_shim_ext.h>

#include <cstdio>

// Prints a call's result by name and, on failure, why it failed.
static void show(const char* call, cudaError_t e) {
  std::printf("%s -> %s\n", call, cudaGetErrorName(e));
#ifdef CUDA_SHIM_EXT
  char why[512];
  if (e != cudaSuccess && cuShimGetLastExplanation(why, sizeof why)) std::printf("  why: %s\n", why);
#endif
}

int main() {
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location = {cudaMemLocationTypeDevice, 0};
  props.maxSize = 64 << 20;  // a pool that may never hold more than 64 MiB
  cudaMemPool_t pool;
  show("cudaMemPoolCreate(maxSize 64 MiB)", cudaMemPoolCreate(&pool, &props));
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

  // 1. More than the pool's capacity: an out-of-memory error, although the device has plenty.
  void* big = nullptr;
  show("cudaMallocFromPoolAsync(100 MiB)", cudaMallocFromPoolAsync(&big, 100 << 20, pool, s));

  // 2. Freeing an address inside an allocation instead of the one the allocation returned.
  char* p = nullptr;
  show("cudaMallocFromPoolAsync(4 KiB)", cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p), 4096, pool, s));
  show("cudaFreeAsync(p + 256)", cudaFreeAsync(p + 256, s));

  // 3. Freeing it twice: the second free finds no live allocation there.
  show("cudaFreeAsync(p)", cudaFreeAsync(p, s));
  show("cudaFreeAsync(p) again", cudaFreeAsync(p, s));

  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  show("cudaMemPoolDestroy", cudaMemPoolDestroy(pool));
  return 0;
}
