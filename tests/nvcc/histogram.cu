// A 256-bin byte histogram with atomics, both ways the CUDA samples do it: every thread
// atomicAdds into the global bins directly; and per-block private bins in __shared__ (zeroed,
// __syncthreads, shared atomicAdd, __syncthreads, then one global atomicAdd per bin). Inputs are
// 1M + 333 bytes, skewed so that some bins take many colliding updates from every block at
// once. Bins are compared exactly with the host's count; a 64-bit atomicAdd total and an
// atomicMax / atomicMin over the input ride along.
#include "kernel_test.h"

constexpr int kBins = 256;

__global__ void hist_global(const unsigned char* in, int n, unsigned int* bins, unsigned long long* total) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&bins[in[i]], 1u);
    atomicAdd(total, static_cast<unsigned long long>(in[i]));
  }
}

__global__ void hist_shared(const unsigned char* in, int n, unsigned int* bins, int* maxv, int* minv) {
  __shared__ unsigned int local[kBins];
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  int hi = -1, lo = 1 << 30;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local[in[i]], 1u);
    hi = max(hi, static_cast<int>(in[i]));
    lo = min(lo, static_cast<int>(in[i]));
  }
  atomicMax(maxv, hi);
  atomicMin(minv, lo);
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}

int main() {
  g_prog = "histogram";
  require_shim_if_asked();
  const int n = (1 << 20) + 333;
  std::vector<unsigned char> in(n);
  Lcg r(4242);
  for (int i = 0; i < n; ++i) {
    uint32_t x = r.next() >> 8;
    // Half the bytes fall in bins 100..103: heavy contention there.
    in[i] = static_cast<unsigned char>((x & 1) ? 100 + ((x >> 1) & 3) : (x >> 1) & 0xff);
  }
  in[n / 2] = 255;  // the maximum is present; the minimum is whatever 0 the generator made
  std::vector<unsigned int> want(kBins, 0);
  unsigned long long want_total = 0;
  int want_max = 0, want_min = 255;
  for (unsigned char c : in) {
    ++want[c];
    want_total += c;
    want_max = std::max(want_max, static_cast<int>(c));
    want_min = std::min(want_min, static_cast<int>(c));
  }

  unsigned char* din = nullptr;
  unsigned int* dbins = nullptr;
  unsigned long long* dtotal = nullptr;
  int* dext = nullptr;
  OK(cudaMalloc(&din, n));
  OK(cudaMalloc(&dbins, 2 * kBins * sizeof(unsigned int)));
  OK(cudaMalloc(&dtotal, sizeof(unsigned long long)));
  OK(cudaMalloc(&dext, 2 * sizeof(int)));
  if (!din || !dbins || !dtotal || !dext) return finish("no memory");
  OK(cudaMemcpy(din, in.data(), n, cudaMemcpyHostToDevice));
  OK(cudaMemset(dbins, 0, 2 * kBins * sizeof(unsigned int)));
  OK(cudaMemset(dtotal, 0, sizeof(unsigned long long)));
  int ext0[2] = {-1, 1 << 30};
  OK(cudaMemcpy(dext, ext0, sizeof ext0, cudaMemcpyHostToDevice));

  // More blocks than the data needs per thread, and a block size that is not a multiple of 256.
  hist_global<<<600, 192>>>(din, n, dbins, dtotal);
  bool g = LAUNCHED("hist_global");
  hist_shared<<<150, 320>>>(din, n, dbins + kBins, dext, dext + 1);
  bool s = LAUNCHED("hist_shared");
  OK(cudaDeviceSynchronize());
  std::vector<unsigned int> bins(2 * kBins);
  OK(cudaMemcpy(bins.data(), dbins, bins.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  if (g) {
    expect_equal_ints("hist_global bins", std::vector<unsigned int>(bins.begin(), bins.begin() + kBins), want);
    unsigned long long total = 0;
    OK(cudaMemcpy(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost));
    if (total != want_total) {
      std::fprintf(stderr, "%s: FAILED: 64-bit atomicAdd total %llu, want %llu\n", g_prog, total, want_total);
      ++g_failures;
    }
  }
  if (s) {
    expect_equal_ints("hist_shared bins", std::vector<unsigned int>(bins.begin() + kBins, bins.end()), want);
    int ext[2] = {0, 0};
    OK(cudaMemcpy(ext, dext, sizeof ext, cudaMemcpyDeviceToHost));
    if (ext[0] != want_max || ext[1] != want_min) {
      std::fprintf(stderr, "%s: FAILED: atomicMax/atomicMin gave %d/%d, want %d/%d\n", g_prog, ext[0], ext[1], want_max,
                   want_min);
      ++g_failures;
    }
  }
  OK(cudaFree(din));
  OK(cudaFree(dbins));
  OK(cudaFree(dtotal));
  OK(cudaFree(dext));
  return finish("256-bin histogram of 1M + 333 bytes with global and shared atomicAdd");
}
