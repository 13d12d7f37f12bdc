// Tiled matrix multiply, C = A B in float, 16x16 tiles staged in __shared__ with __syncthreads
// before and after each tile's use: 256x256x256, then 100x75 by 75x50 (no dimension a multiple
// of 16: partial tiles, whose threads outside the matrix load zeros and write nothing).
//
// The product accumulates with explicit fmaf (fma.rn.f32: one rounding per step) in k order, so
// the answer is known to the bit: the host repeats the same fmaf sequence with std::fmaf (the
// zero padding of a partial tile included) and every element must match exactly.
// Each element must also lie within the rounding-error bound of the mathematically exact
// product: a K-term recursive sum with one rounding per step (FMA) is off by at most
// gamma_K * sum_k |a_ik b_kj|, gamma_K = K u / (1 - K u), u = 2^-24 (Higham, "Accuracy and
// Stability of Numerical Algorithms", 3.1): about 1.53e-5 for K = 256. The host's reference is
// the double sum of the products (each exact in double: 24 + 24 significand bits), itself off by
// at most K 2^-53 sum|a b|, which the bound adds.
#include "kernel_test.h"

constexpr int kTile = 16;

__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int K, int N) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float sum = 0.0f;
  for (int t = 0; t < (K + kTile - 1) / kTile; ++t) {
    const int ak = t * kTile + tx, bk = t * kTile + ty;
    As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum = fmaf(As[ty][k], Bs[k][tx], sum);
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = sum;
}

static void run(int M, int K, int N, uint32_t seed) {
  std::vector<float> A(static_cast<size_t>(M) * K), B(static_cast<size_t>(K) * N);
  Lcg r(seed);
  for (auto& v : A) v = r.unit();
  for (auto& v : B) v = r.unit();
  // The kernel's sequence, and the exact product and sum|a b| in double.
  std::vector<float> want(static_cast<size_t>(M) * N);
  std::vector<double> exact(want.size()), absdot(want.size());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      double e = 0.0, m = 0.0;
      for (int k = 0; k < K; ++k) {
        s = std::fmaf(A[i * K + k], B[k * N + j], s);
        double p = static_cast<double>(A[i * K + k]) * B[k * N + j];  // exact: 24 + 24 bits
        e += p;
        m += std::fabs(p);
      }
      // Padding terms of the last partial tile: fmaf(0, 0, s).
      for (int k = K; k % kTile; ++k) s = std::fmaf(0.0f, 0.0f, s);
      want[i * N + j] = s;
      exact[i * N + j] = e;
      absdot[i * N + j] = m;
    }
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  OK(cudaMalloc(&dA, A.size() * sizeof(float)));
  OK(cudaMalloc(&dB, B.size() * sizeof(float)));
  OK(cudaMalloc(&dC, want.size() * sizeof(float)));
  if (!dA || !dB || !dC) return;
  OK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
  OK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  OK(cudaMemset(dC, 0xff, want.size() * sizeof(float)));
  dim3 block(kTile, kTile), grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  matmul_tiled<<<grid, block>>>(dA, dB, dC, M, K, N);
  char what[96];
  std::snprintf(what, sizeof what, "matmul_tiled %dx%d * %dx%d", M, K, K, N);
  if (LAUNCHED(what)) {
    std::vector<float> C(want.size());
    OK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    // Bit for bit against the same fmaf sequence on the host.
    expect_equal_floats(what, C, want);
    // Within the rounding-error bound of the mathematically exact product.
    const double u = std::ldexp(1.0, -24), gamma = K * u / (1 - K * u);
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < C.size(); ++i) {
      // The double reference itself is off by at most K * 2^-53 * absdot: add that.
      double bound = (gamma + K * std::ldexp(1.0, -53)) * absdot[i];
      double err = std::fabs(static_cast<double>(C[i]) - exact[i]);
      if (!(err <= bound)) {
        if (bad < 5)
          std::fprintf(stderr, "%s: FAILED: %s: C[%zu] = %.9g, exact %.17g, error %.3g over the bound %.3g\n", g_prog,
                       what, i, C[i], exact[i], err, bound);
        ++bad;
      }
      if (absdot[i] > 0) worst = std::fmax(worst, err / absdot[i]);
    }
    if (bad) ++g_failures;
    std::printf("%s: %s: largest error %.3g of sum|a b| (bound %.3g)\n", g_prog, what, worst, gamma);
  }
  OK(cudaFree(dA));
  OK(cudaFree(dB));
  OK(cudaFree(dC));
}

int main() {
  g_prog = "matmul";
  require_shim_if_asked();
  run(256, 256, 256, 1);
  run(100, 75, 50, 2);
  return finish("16x16 shared-memory tiles, 256^3 and 100x75x50, bitwise and within the FMA error bound");
}
