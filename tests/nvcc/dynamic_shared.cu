// Dynamic shared memory (extern __shared__) beyond the 48 KiB a kernel gets by default: the
// launch with 100 KiB is refused (cudaErrorInvalidValue) until
// cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) opts in; then each block
// stages 25600 ints in shared memory, synchronizes, and writes them out reversed. A second
// kernel has 4 KiB of static __shared__ next to 60 KiB of dynamic: both are filled, synchronized
// and read back by other threads, so an overlap of the two, or a block seeing another block's
// shared memory, shows as a wrong value. Setting the attribute past the device's opt-in maximum
// is refused.
#include "kernel_test.h"

__global__ void reverse_block(const int* in, int* out, int per_block) {
  extern __shared__ int buf[];
  const int* src = in + static_cast<size_t>(blockIdx.x) * per_block;
  for (int j = threadIdx.x; j < per_block; j += blockDim.x) buf[j] = src[j];
  __syncthreads();
  int* dst = out + static_cast<size_t>(blockIdx.x) * per_block;
  for (int j = threadIdx.x; j < per_block; j += blockDim.x) dst[j] = buf[per_block - 1 - j];
}

constexpr int kStatic = 1024;  // ints: 4 KiB
__global__ void static_and_dynamic(int* out, int dyn_ints) {
  __shared__ int fixed[kStatic];
  extern __shared__ int dyn[];
  const int t = threadIdx.x, nt = blockDim.x, b = blockIdx.x;
  for (int j = t; j < kStatic; j += nt) fixed[j] = b * 1000000 + j;
  for (int j = t; j < dyn_ints; j += nt) dyn[j] = -(b * 1000000 + j);
  __syncthreads();
  // Thread t checks what the next thread (mod nt) wrote.
  int bad = 0;
  long long sum = 0;
  for (int j = (t + 1) % nt; j < kStatic; j += nt) bad += fixed[j] != b * 1000000 + j;
  for (int j = (t + 1) % nt; j < dyn_ints; j += nt) {
    bad += dyn[j] != -(b * 1000000 + j);
    sum += dyn[j];
  }
  atomicAdd(&out[2 * b], bad);
  atomicAdd(reinterpret_cast<unsigned long long*>(out + 2 * gridDim.x) + b, static_cast<unsigned long long>(sum));
}

int main() {
  g_prog = "dynamic_shared";
  require_shim_if_asked();
  OK(cudaSetDevice(0));
  int optin = 0;
  OK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CHECK(optin >= 64 * 1024);

  const int dyn_bytes = 100 * 1024, per_block = dyn_bytes / sizeof(int), blocks = 8;
  if (optin < dyn_bytes) return finish("the device's opt-in shared memory is below 100 KiB");
  const size_t n = static_cast<size_t>(per_block) * blocks;
  std::vector<int> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = static_cast<int>(i * 2654435761u);
  int *din = nullptr, *dout = nullptr;
  OK(cudaMalloc(&din, n * sizeof(int)));
  OK(cudaMalloc(&dout, n * sizeof(int)));
  if (!din || !dout) return finish("no memory");
  OK(cudaMemcpy(din, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  cudaFuncAttributes fa{};
  OK(cudaFuncGetAttributes(&fa, reverse_block));
  CHECK(fa.sharedSizeBytes == 0);
  CHECK(fa.maxDynamicSharedSizeBytes == 48 * 1024);
  // Not opted in: refused before it runs.
  reverse_block<<<blocks, 512, dyn_bytes>>>(din, dout, per_block);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  // Past the device's maximum: refused.
  EXPECT_ERR(cudaFuncSetAttribute(reverse_block, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1),
             cudaErrorInvalidValue);
  OK(cudaFuncSetAttribute(reverse_block, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_bytes));
  OK(cudaFuncGetAttributes(&fa, reverse_block));
  CHECK(fa.maxDynamicSharedSizeBytes == dyn_bytes);
  reverse_block<<<blocks, 512, dyn_bytes>>>(din, dout, per_block);
  if (LAUNCHED("reverse_block with 100 KiB")) {
    std::vector<int> got(n), want(n);
    OK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; ++b)
      for (int j = 0; j < per_block; ++j)
        want[static_cast<size_t>(b) * per_block + j] = h[static_cast<size_t>(b) * per_block + per_block - 1 - j];
    expect_equal_ints("reverse_block out", got, want);
  }

  // 4 KiB static + 60 KiB dynamic.
  const int dyn2 = 60 * 1024, dyn_ints = dyn2 / sizeof(int), blocks2 = 6;
  OK(cudaFuncGetAttributes(&fa, static_and_dynamic));
  CHECK(fa.sharedSizeBytes == kStatic * sizeof(int));
  CHECK(fa.maxDynamicSharedSizeBytes == 48 * 1024 - static_cast<int>(kStatic * sizeof(int)));
  OK(cudaFuncSetAttribute(static_and_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn2));
  int* dres = nullptr;
  const size_t res_bytes = 2 * blocks2 * sizeof(int) + blocks2 * sizeof(long long);
  OK(cudaMalloc(&dres, res_bytes));
  OK(cudaMemset(dres, 0, res_bytes));
  static_and_dynamic<<<blocks2, 256, dyn2>>>(dres, dyn_ints);
  if (LAUNCHED("static_and_dynamic with 4 KiB + 60 KiB")) {
    std::vector<char> raw(res_bytes);
    OK(cudaMemcpy(raw.data(), dres, res_bytes, cudaMemcpyDeviceToHost));
    const int* bad = reinterpret_cast<const int*>(raw.data());
    const long long* sums = reinterpret_cast<const long long*>(raw.data() + 2 * blocks2 * sizeof(int));
    for (int b = 0; b < blocks2; ++b) {
      long long want = 0;
      for (int j = 0; j < dyn_ints; ++j) want -= b * 1000000LL + j;
      if (bad[2 * b] != 0 || sums[b] != want) {
        std::fprintf(stderr, "%s: FAILED: block %d saw %d wrong shared values, dynamic sum %lld (want %lld)\n", g_prog,
                     b, bad[2 * b], sums[b], want);
        ++g_failures;
      }
    }
  }
  OK(cudaFree(dres));
  OK(cudaFree(din));
  OK(cudaFree(dout));
  return finish("100 KiB of dynamic shared memory after opting in; static and dynamic side by side");
}
