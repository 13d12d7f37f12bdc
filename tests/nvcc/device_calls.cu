// Calls and parameters: recursive __device__ functions kept out of line (__noinline__: real
// .func calls with parameters, return values and a stack, the stack raised with
// cudaDeviceSetLimit), one with a local array in every frame; and a kernel taking many kinds
// of parameter by value: structs with mixed members and padding, a 256-byte struct, an int4
// (16-byte aligned), double, char, signed char, short, unsigned short, bool, int, unsigned,
// long long, unsigned long long, float and pointers. Every value the device reports is
// compared exactly with the host's.
#include "kernel_test.h"

__device__ __noinline__ unsigned long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

// n + (n-1) + ... + 1 through a local array in each frame (local memory the compiler keeps).
__device__ __noinline__ long long tri(int n) {
  volatile int frame[8];
  for (int k = 0; k < 8; ++k) frame[k] = n * (k + 1);
  if (n == 0) return 0;
  return frame[0] + tri(n - 1);
}

__global__ void recursion(unsigned long long* fibs, long long* tris, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    fibs[i] = fib(i % 21);
    tris[i] = tri(i % 100);
  }
}

struct Mixed {
  char c;      // 7 bytes of padding after it
  double d;
  int i[3];
  short s;
  float3 f;
  unsigned long long u;
};
struct Big {
  int v[64];
};

__global__ void params(Mixed m, double d, char c, signed char sc, short sh, unsigned short us, bool b, int i,
                       unsigned u, long long ll, unsigned long long ull, float f, int4 v4, const int* ptr, Big big,
                       double* out_d, long long* out_i) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int k = 0;
  out_i[k++] = m.c;
  out_i[k++] = m.i[0];
  out_i[k++] = m.i[1];
  out_i[k++] = m.i[2];
  out_i[k++] = m.s;
  out_i[k++] = static_cast<long long>(m.u);
  out_i[k++] = c;
  out_i[k++] = sc;
  out_i[k++] = sh;
  out_i[k++] = us;
  out_i[k++] = b ? 1 : 0;
  out_i[k++] = i;
  out_i[k++] = u;
  out_i[k++] = ll;
  out_i[k++] = static_cast<long long>(ull);
  out_i[k++] = v4.x;
  out_i[k++] = v4.y;
  out_i[k++] = v4.z;
  out_i[k++] = v4.w;
  out_i[k++] = ptr[0] + ptr[1] * 10 + ptr[2] * 100;
  long long sum = 0;
  for (int j = 0; j < 64; ++j) sum += static_cast<long long>(big.v[j]) * (j + 1);
  out_i[k++] = sum;
  int j = 0;
  out_d[j++] = m.d;
  out_d[j++] = m.f.x;
  out_d[j++] = m.f.y;
  out_d[j++] = m.f.z;
  out_d[j++] = d;
  out_d[j++] = f;
}

int main() {
  g_prog = "device_calls";
  require_shim_if_asked();
  OK(cudaSetDevice(0));
  OK(cudaDeviceSetLimit(cudaLimitStackSize, 16 * 1024));

  // Recursion: 200 threads, fib(i % 21) and tri(i % 100) (up to 100 frames deep).
  const int n = 200;
  unsigned long long* dfib = nullptr;
  long long* dtri = nullptr;
  OK(cudaMalloc(&dfib, n * sizeof(*dfib)));
  OK(cudaMalloc(&dtri, n * sizeof(*dtri)));
  if (!dfib || !dtri) return finish("no memory");
  recursion<<<4, 64>>>(dfib, dtri, n);
  if (LAUNCHED("recursion")) {
    std::vector<unsigned long long> fibs(n), want_fib(n);
    std::vector<long long> tris(n), want_tri(n);
    OK(cudaMemcpy(fibs.data(), dfib, n * sizeof(*dfib), cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(tris.data(), dtri, n * sizeof(*dtri), cudaMemcpyDeviceToHost));
    unsigned long long f[21] = {0, 1};
    for (int k = 2; k < 21; ++k) f[k] = f[k - 1] + f[k - 2];
    for (int k = 0; k < n; ++k) {
      want_fib[k] = f[k % 21];
      want_tri[k] = static_cast<long long>(k % 100) * (k % 100 + 1) / 2;
    }
    expect_equal_ints("fib", fibs, want_fib);
    expect_equal_ints("tri", tris, want_tri);
  }

  // Parameters.
  Mixed m{};
  m.c = -5;
  m.d = 3.141592653589793;
  m.i[0] = -7;
  m.i[1] = 1 << 30;
  m.i[2] = 12345;
  m.s = -32000;
  m.f = make_float3(1.5f, -2.25f, 1e-30f);
  m.u = 0xfedcba9876543210ull;
  Big big{};
  for (int j = 0; j < 64; ++j) big.v[j] = (j % 2 ? -1 : 1) * (j * j + 3);
  const int hp[3] = {4, 5, 6};
  int* dptr = nullptr;
  double* dd = nullptr;
  long long* di = nullptr;
  OK(cudaMalloc(&dptr, sizeof hp));
  OK(cudaMalloc(&dd, 6 * sizeof(double)));
  OK(cudaMalloc(&di, 21 * sizeof(long long)));
  if (!dptr || !dd || !di) return finish("no memory");
  OK(cudaMemcpy(dptr, hp, sizeof hp, cudaMemcpyHostToDevice));
  OK(cudaMemset(dd, 0xff, 6 * sizeof(double)));
  OK(cudaMemset(di, 0xff, 21 * sizeof(long long)));
  const double d = -2.718281828459045e200;
  const char c = 'Z';
  const signed char sc = -128;
  const short sh = -1234;
  const unsigned short us = 65535;
  const bool b = true;
  const int i = -2147483647 - 1;
  const unsigned u = 4000000000u;
  const long long ll = -9000000000000000000LL;
  const unsigned long long ull = 18000000000000000000ull;
  const float f = 6.5e-39f;  // subnormal: must pass through a parameter unchanged
  const int4 v4 = make_int4(1, -2, 3, -4);
  params<<<1, 32>>>(m, d, c, sc, sh, us, b, i, u, ll, ull, f, v4, dptr, big, dd, di);
  if (LAUNCHED("params")) {
    std::vector<long long> got_i(21), want_i;
    std::vector<double> got_d(6);
    OK(cudaMemcpy(got_i.data(), di, 21 * sizeof(long long), cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(got_d.data(), dd, 6 * sizeof(double), cudaMemcpyDeviceToHost));
    long long sum = 0;
    for (int j = 0; j < 64; ++j) sum += static_cast<long long>(big.v[j]) * (j + 1);
    want_i = {m.c, m.i[0], m.i[1], m.i[2], m.s, static_cast<long long>(m.u), c, sc, sh, us, 1, i, u, ll,
              static_cast<long long>(ull), 1, -2, 3, -4, 4 + 50 + 600, sum};
    expect_equal_ints("integer parameters", got_i, want_i);
    std::vector<double> want_d = {m.d, m.f.x, m.f.y, m.f.z, d, f};
    expect_equal(
        "floating parameters", got_d.data(), want_d.data(), 6, [](double v) { return show_float(v); });
  }
  OK(cudaFree(dfib));
  OK(cudaFree(dtri));
  OK(cudaFree(dptr));
  OK(cudaFree(dd));
  OK(cudaFree(di));
  return finish("recursive __noinline__ device functions and a kernel with many parameter types");
}
