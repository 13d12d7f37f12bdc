// A kernel that stores outside every allocation (the first page, never mapped on a GPU): the
// launch is accepted, the fault comes at the next synchronization as cudaErrorIllegalAddress,
// and it is sticky, as NVIDIA documents it ("This leaves the process in an inconsistent state
// and any further CUDA work will return the same error."): later synchronizations, allocations,
// copies and launches all return it, and cudaGetLastError returns it without clearing it.
// A well-behaved kernel runs first, so a driver that faults everything fails here too.
#include "kernel_test.h"

__global__ void store(int* p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

int main() {
  g_prog = "illegal_address";
  require_shim_if_asked();
  const int n = 300;
  int* good = nullptr;
  OK(cudaMalloc(&good, n * sizeof(int)));
  if (!good) return finish("no memory");
  store<<<3, 128>>>(good, n, 1000);
  if (!LAUNCHED("store (in bounds)")) return finish("the first launch failed");
  std::vector<int> got(n), want(n);
  OK(cudaMemcpy(got.data(), good, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = 1000 + i;
  expect_equal_ints("store (in bounds)", got, want);

  // Through a pointer the compiler cannot see: address 0x100, in no allocation.
  int* bad = reinterpret_cast<int*>(static_cast<uintptr_t>(0x100));
  store<<<3, 128>>>(bad, n, 7);
  // Accepted; the fault may already have happened by the time cudaGetLastError looks (it reports
  // errors of earlier asynchronous work too), so that is the only other answer allowed.
  cudaError_t launched_as = cudaGetLastError();
  if (launched_as != cudaSuccess && launched_as != cudaErrorIllegalAddress) {
    std::fprintf(stderr, "%s: FAILED: launching store (to 0x100) returned %d (%s)\n", g_prog,
                 static_cast<int>(launched_as), cudaGetErrorName(launched_as));
    return finish("the faulting launch was not accepted");
  }
  EXPECT_ERR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  // cudaGetLastError reads the error once, then resets it, sticky or not: on an H200 (driver 580,
  // runtime 13.0) the second read is cudaSuccess. Every call that needs the context fails anew.
  EXPECT_ERR(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_ERR(cudaGetLastError(), cudaSuccess);
  EXPECT_ERR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  void* more = nullptr;
  EXPECT_ERR(cudaMalloc(&more, 4096), cudaErrorIllegalAddress);
  EXPECT_ERR(cudaMemcpy(got.data(), good, n * sizeof(int), cudaMemcpyDeviceToHost), cudaErrorIllegalAddress);
  store<<<1, 1>>>(good, 1, 0);
  EXPECT_ERR(cudaGetLastError(), cudaErrorIllegalAddress);
  EXPECT_ERR(cudaStreamSynchronize(nullptr), cudaErrorIllegalAddress);
  return finish("a store to an unmapped address is cudaErrorIllegalAddress at the next sync, sticky");
}
