// A sum reduction as the CUDA samples write it: each block loads (two elements per thread), a
// shared-memory tree halves the active threads with __syncthreads between steps until one warp
// is left, and that warp finishes with __shfl_down_sync; block partial sums go to global memory
// and a second launch (one block) reduces those. Run for int (exact in any order) and for float
// holding small integers (every partial sum is an integer below 2^24, so exact too): the total
// and every block's partial sum are compared exactly with the host's.
#include "kernel_test.h"

constexpr int kBlock = 256;  // a power of two, at least 64

template <class T>
__device__ T warp_sum(T v) {
  // Lanes 0..31 all active: full mask. Lane 0 ends with the warp's total.
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <class T>
__global__ void block_sums(const T* in, T* out, int n) {
  __shared__ T s[kBlock];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * (2 * kBlock) + tid;
  T v = 0;
  if (i < n) v = in[i];
  if (i + kBlock < n) v += in[i + kBlock];
  s[tid] = v;
  __syncthreads();
  for (int half = kBlock / 2; half > 32; half >>= 1) {
    if (tid < half) s[tid] += s[tid + half];
    __syncthreads();
  }
  if (tid < 32) {
    T w = s[tid] + s[tid + 32];
    w = warp_sum(w);
    if (tid == 0) out[blockIdx.x] = w;
  }
}

template <class T>
static void run(const char* type, const std::vector<T>& host) {
  const int n = static_cast<int>(host.size());
  const int blocks = (n + 2 * kBlock - 1) / (2 * kBlock);
  std::vector<T> want_partial(blocks, 0);
  T want_total = 0;
  for (int b = 0; b < blocks; ++b) {
    for (int i = b * 2 * kBlock; i < n && i < (b + 1) * 2 * kBlock; ++i) want_partial[b] += host[i];
    want_total += want_partial[b];
  }
  T *din = nullptr, *dpart = nullptr, *dtotal = nullptr;
  OK(cudaMalloc(&din, n * sizeof(T)));
  OK(cudaMalloc(&dpart, blocks * sizeof(T)));
  OK(cudaMalloc(&dtotal, sizeof(T)));
  if (!din || !dpart || !dtotal) return;
  OK(cudaMemcpy(din, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  OK(cudaMemset(dpart, 0xff, blocks * sizeof(T)));
  OK(cudaMemset(dtotal, 0xff, sizeof(T)));
  std::string what = std::string("block_sums<") + type + ">";
  block_sums<T><<<blocks, kBlock>>>(din, dpart, n);
  bool first = LAUNCHED(what.c_str());
  // The partial sums fit in one block's two-per-thread load when blocks <= 2 * kBlock.
  CHECK(blocks <= 2 * kBlock);
  block_sums<T><<<1, kBlock>>>(dpart, dtotal, blocks);
  bool second = LAUNCHED((what + " of the partial sums").c_str());
  OK(cudaDeviceSynchronize());
  if (first) {
    std::vector<T> part(blocks);
    OK(cudaMemcpy(part.data(), dpart, blocks * sizeof(T), cudaMemcpyDeviceToHost));
    expect_equal_ints((what + " partial sums").c_str(), part, want_partial);
  }
  if (first && second) {
    T total = 0;
    OK(cudaMemcpy(&total, dtotal, sizeof(T), cudaMemcpyDeviceToHost));
    if (total != want_total) {
      std::fprintf(stderr, "%s: FAILED: %s total %.17g, want %.17g\n", g_prog, what.c_str(), static_cast<double>(total),
                   static_cast<double>(want_total));
      ++g_failures;
    }
  }
  OK(cudaFree(din));
  OK(cudaFree(dpart));
  OK(cudaFree(dtotal));
}

int main() {
  g_prog = "reduction";
  require_shim_if_asked();
  // One second-pass block reduces at most 2 * kBlock partial sums, so at most 262144
  // elements: 200003 (odd: the last block partial, 67 of its threads loading two elements).
  const int n = 200003;
  std::vector<int> ints(n);
  std::vector<float> floats(n);
  Lcg r(777);
  for (int i = 0; i < n; ++i) {
    ints[i] = static_cast<int>(r.next() % 2001) - 1000;  // signed, so a lost term shows
    floats[i] = static_cast<float>(r.next() % 64);       // total < 64 * n < 2^24: exact
  }
  run<int>("int", ints);
  run<float>("float", floats);
  return finish("block tree + warp shuffle sums of 200003 ints and floats, every partial checked");
}
