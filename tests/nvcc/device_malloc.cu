// Device-side malloc and free: every thread of 64 blocks allocates a buffer of its own size,
// fills it, reads it back into a sum and frees it; a second kernel checks that freed memory is
// given out again (the heap is not used up by 64 rounds of it). A request larger than the heap
// (cudaLimitMallocHeapSize, 8 MiB by default) is NULL. Every value is checked on the host.
#include "kernel_test.h"

constexpr int kBlocks = 64, kThreads = 128;

__global__ void alloc_fill_sum(long long* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = 1 + t % 37;
  int* p = static_cast<int*>(malloc(n * sizeof(int)));
  if (!p) {
    out[t] = -1;
    return;
  }
  for (int i = 0; i < n; ++i) p[i] = t + i;
  long long s = 0;
  for (int i = 0; i < n; ++i) s += p[i];
  out[t] = s;
  free(p);
}

__global__ void rounds(int* ok, int times) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  int good = 1;
  for (int r = 0; r < times; ++r) {
    char* p = static_cast<char*>(malloc(512));
    if (!p) {
      good = 0;
      break;
    }
    p[0] = static_cast<char>(r);
    p[511] = static_cast<char>(r);
    good &= p[0] == p[511];
    free(p);
  }
  ok[t] = good;
}

__global__ void too_big(unsigned long long* out) { out[0] = reinterpret_cast<unsigned long long>(malloc(size_t{1} << 40)); }

int main() {
  g_prog = "device_malloc";
  require_shim_if_asked();
  const int n = kBlocks * kThreads;
  long long* dsum = nullptr;
  int* dok = nullptr;
  unsigned long long* dbig = nullptr;
  OK(cudaMalloc(&dsum, n * sizeof(long long)));
  OK(cudaMalloc(&dok, n * sizeof(int)));
  OK(cudaMalloc(&dbig, sizeof(unsigned long long)));
  size_t heap = 0;
  OK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  CHECK(heap == 8388608);
  alloc_fill_sum<<<kBlocks, kThreads>>>(dsum);
  if (LAUNCHED("alloc_fill_sum")) {
    std::vector<long long> got(n), want(n);
    OK(cudaMemcpy(got.data(), dsum, n * sizeof(long long), cudaMemcpyDeviceToHost));
    for (int t = 0; t < n; ++t) {
      const long long k = 1 + t % 37;
      want[t] = k * t + k * (k - 1) / 2;
    }
    expect_equal_ints("per-thread sums of malloc'd buffers", got, want);
  }
  // 8192 threads x 64 rounds x 512 bytes is 256 MiB: only reuse fits that in 8 MiB.
  rounds<<<kBlocks, kThreads>>>(dok, 64);
  if (LAUNCHED("rounds")) {
    std::vector<int> got(n), want(n, 1);
    OK(cudaMemcpy(got.data(), dok, n * sizeof(int), cudaMemcpyDeviceToHost));
    expect_equal_ints("malloc/free rounds", got, want);
  }
  too_big<<<1, 1>>>(dbig);
  if (LAUNCHED("too_big")) {
    unsigned long long p = 1;
    OK(cudaMemcpy(&p, dbig, sizeof p, cudaMemcpyDeviceToHost));
    CHECK(p == 0);
  }
  OK(cudaDeviceSynchronize());
  return finish("malloc/free in kernels: 8192 buffers filled and summed, 64 reuse rounds, an oversized request");
}
