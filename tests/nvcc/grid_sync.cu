// Cooperative groups' grid-wide barrier: a cooperative launch (cudaLaunchCooperativeKernel and
// cudaLaunchKernelExC with cudaLaunchAttributeCooperative) whose blocks all wait for each other
// at grid.sync() three times, each phase reading what other blocks wrote in the one before. The
// grid is as large as the device holds at once (occupancy x SMs) and every value is checked; one
// block more is cudaErrorCooperativeLaunchTooLarge. A plain launch of the same kernel whose grid
// fits on the device at once works too (measured on an H200: the driver gives every launch a grid
// workspace, and all its blocks run at once).
#include <cooperative_groups.h>

#include "kernel_test.h"

namespace cg = cooperative_groups;

constexpr int kBlock = 128;

// Phase 1: each thread writes its rank. Phase 2: each thread adds its mirror's value (another
// block's). Phase 3: block 0 sums the blocks' first elements.
__global__ void phases(int* a, long long* total, int n) {
  cg::grid_group g = cg::this_grid();
  const int i = static_cast<int>(g.thread_rank());
  a[i] = i;
  g.sync();
  const int mirror = a[n - 1 - i];
  g.sync();
  a[i] += mirror;
  g.sync();
  if (i == 0) {
    long long s = 0;
    for (int b = 0; b < n; b += kBlock) s += a[b];
    *total = s;
  }
}

static void check(const char* what, int* da, long long* dt, int n) {
  std::vector<int> got(n), want(n, n - 1);  // i + (n - 1 - i)
  long long total = -1;
  OK(cudaMemcpy(got.data(), da, n * sizeof(int), cudaMemcpyDeviceToHost));
  OK(cudaMemcpy(&total, dt, sizeof total, cudaMemcpyDeviceToHost));
  expect_equal_ints(what, got, want);
  const long long want_total = static_cast<long long>(n / kBlock) * (n - 1);
  if (total != want_total) {
    std::fprintf(stderr, "%s: FAILED: %s total %lld, want %lld\n", g_prog, what, total, want_total);
    ++g_failures;
  }
}

int main() {
  g_prog = "grid_sync";
  require_shim_if_asked();
  int dev = 0, coop = 0, sms = 0, per_sm = 0;
  OK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, phases, kBlock, 0));
  CHECK(coop == 1);
  CHECK(per_sm > 0);
  const int blocks = per_sm * sms, n = blocks * kBlock;
  int* da = nullptr;
  long long* dt = nullptr;
  OK(cudaMalloc(&da, (n + kBlock) * sizeof(int)));
  OK(cudaMalloc(&dt, sizeof(long long)));
  int nn = n;
  void* args[] = {&da, &dt, &nn};
  OK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(phases), blocks, kBlock, args, 0, nullptr));
  OK(cudaDeviceSynchronize());
  check("cudaLaunchCooperativeKernel", da, dt, n);

  OK(cudaMemset(da, 0, n * sizeof(int)));
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kBlock);
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  OK(cudaLaunchKernelExC(&cfg, reinterpret_cast<void*>(phases), args));
  OK(cudaDeviceSynchronize());
  check("cudaLaunchKernelExC (cooperative)", da, dt, n);

  int more = n + kBlock;
  void* args2[] = {&da, &dt, &more};
  EXPECT_ERR(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(phases), blocks + 1, kBlock, args2, 0, nullptr),
             cudaErrorCooperativeLaunchTooLarge);
  cudaGetLastError();

  // Not cooperative, but small enough to be resident at once: the barrier works.
  OK(cudaMemset(da, 0, n * sizeof(int)));
  phases<<<2 * sms, kBlock>>>(da, dt, 2 * sms * kBlock);
  if (LAUNCHED("phases<<<2 x SMs, 128>>>")) {
    OK(cudaDeviceSynchronize());
    check("a plain launch that fits", da, dt, 2 * sms * kBlock);
  }
  return finish("three grid-wide barriers across a full cooperative grid, launched three ways");
}
