// Vector add, the first kernel anyone runs: c = a + b over 1M + 37 floats (the last block is
// partial: its threads past n must not write), then the same with a grid-stride loop on a grid
// smaller than the data. Every output element is checked exactly: one IEEE single add per
// element (add.rn.f32), the same on the host (SSE, no excess precision).
#include "kernel_test.h"

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void vector_add_strided(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                   size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    c[i] = a[i] + b[i];
}

int main() {
  g_prog = "vector_add";
  require_shim_if_asked();
  const int n = (1 << 20) + 37;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a(n), b(n), want(n);
  Lcg r(12345);
  for (int i = 0; i < n; ++i) {
    a[i] = r.unit() * 1000.0f;
    b[i] = r.unit();
    want[i] = a[i] + b[i];
  }
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  OK(cudaMalloc(&da, bytes));
  OK(cudaMalloc(&db, bytes));
  // 64 elements past n: a canary the last block must leave as set.
  OK(cudaMalloc(&dc, bytes + 64 * sizeof(float)));
  if (!da || !db || !dc) return finish("no memory");
  OK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
  OK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
  OK(cudaMemset(dc, 0xff, bytes + 64 * sizeof(float)));  // NaNs: an element never written shows

  const int block = 256;
  const int grid = (n + block - 1) / block;  // 4097 blocks, the last with 37 live threads
  vector_add<<<grid, block>>>(da, db, dc, n);
  if (LAUNCHED("vector_add")) {
    OK(cudaDeviceSynchronize());
    std::vector<float> c(n + 64);
    OK(cudaMemcpy(c.data(), dc, bytes + 64 * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> tail(c.begin() + n, c.end());
    c.resize(n);
    expect_equal_floats("vector_add c", c, want);
    // The threads of the last block past n wrote nothing.
    std::vector<uint32_t> tail_bits(64), canary(64, 0xffffffffu);
    std::memcpy(tail_bits.data(), tail.data(), 64 * sizeof(float));
    expect_equal_ints("vector_add bytes past n", tail_bits, canary);
  }

  // Grid-stride: 120 blocks of 128 threads walk the whole vector (size_t indices).
  OK(cudaMemset(dc, 0, bytes));
  vector_add_strided<<<120, 128>>>(da, db, dc, static_cast<size_t>(n));
  if (LAUNCHED("vector_add_strided")) {
    std::vector<float> c(n);
    OK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));  // synchronizes with the launch
    expect_equal_floats("vector_add_strided c", c, want);
  }
  OK(cudaFree(da));
  OK(cudaFree(db));
  OK(cudaFree(dc));
  return finish("1M + 37 floats added, every element checked");
}
