// Managed memory written by kernels and read by the host, within the rules every device obeys
// (also those without concurrent managed access, where the host may touch managed memory only
// while no kernel that could see it runs):
//  1. __managed__ variables: the host sets an array, a kernel squares it and counts with
//     atomicAdd into a __managed__ counter; after cudaDeviceSynchronize the host reads both.
//  2. The CUDA programming guide's stream-association example: y attached to the host
//     (cudaStreamAttachMemAsync, cudaMemAttachHost), a kernel on stream1 writes x, and the host
//     writes y while that kernel may still run; then both are checked.
//  3. cudaMallocManaged buffers attached to one stream each (cudaMemAttachSingle): kernels on
//     two streams write their own buffer, and the host reads a buffer once its stream is
//     synchronized, even while the other stream's kernel may run.
#include "kernel_test.h"

constexpr int kN = 1000;
__managed__ float mvals[kN];
__managed__ int mcount;
__device__ __managed__ int x, y = 2;

__global__ void square_count(int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    mvals[i] = mvals[i] * mvals[i];
    atomicAdd(&mcount, 1);
  }
}

__global__ void set_x() { x = 10; }

__global__ void affine(int* p, int n, int mul, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * mul + add;
}

int main() {
  g_prog = "managed";
  require_shim_if_asked();
  OK(cudaSetDevice(0));

  // 1. __managed__ variables.
  for (int i = 0; i < kN; ++i) mvals[i] = static_cast<float>(i - 500);
  mcount = 7;
  square_count<<<(kN + 127) / 128, 128>>>(kN);
  if (LAUNCHED("square_count")) {
    OK(cudaDeviceSynchronize());
    std::vector<float> got(mvals, mvals + kN), want(kN);
    for (int i = 0; i < kN; ++i) want[i] = static_cast<float>((i - 500) * (i - 500));
    expect_equal_floats("__managed__ mvals", got, want);
    if (mcount != 7 + kN) {
      std::fprintf(stderr, "%s: FAILED: __managed__ mcount = %d, want %d\n", g_prog, mcount, 7 + kN);
      ++g_failures;
    }
  }
  OK(cudaDeviceSynchronize());

  // 2. y attached to the host; x written by a kernel on stream1 while the host writes y.
  cudaStream_t stream1 = nullptr;
  OK(cudaStreamCreate(&stream1));
  OK(cudaStreamAttachMemAsync(stream1, &y, 0, cudaMemAttachHost));
  OK(cudaDeviceSynchronize());  // wait for the host attachment
  set_x<<<1, 1, 0, stream1>>>();
  bool xl = LAUNCHED("set_x");
  y = 20;  // allowed: y belongs to no stream a kernel runs on
  OK(cudaStreamSynchronize(stream1));
  if (xl && x != 10) {
    std::fprintf(stderr, "%s: FAILED: __managed__ x = %d after set_x, want 10\n", g_prog, x);
    ++g_failures;
  }
  CHECK(y == 20);

  // 3. cudaMallocManaged, one buffer per stream.
  const int n = 100003;
  cudaStream_t sa = nullptr, sb = nullptr;
  OK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  OK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  int *a = nullptr, *b = nullptr;
  OK(cudaMallocManaged(&a, n * sizeof(int), cudaMemAttachHost));
  OK(cudaMallocManaged(&b, n * sizeof(int)));  // cudaMemAttachGlobal
  if (!a || !b) return finish("no managed memory");
  for (int i = 0; i < n; ++i) a[i] = i;
  OK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) b[i] = -i;
  OK(cudaStreamAttachMemAsync(sa, a, 0, cudaMemAttachSingle));
  OK(cudaStreamAttachMemAsync(sb, b, 0, cudaMemAttachSingle));
  OK(cudaStreamSynchronize(sa));
  OK(cudaStreamSynchronize(sb));
  affine<<<(n + 255) / 256, 256, 0, sa>>>(a, n, 3, 1);
  bool al = LAUNCHED("affine on stream a");
  affine<<<(n + 255) / 256, 256, 0, sb>>>(b, n, 2, 5);
  bool bl = LAUNCHED("affine on stream b");
  affine<<<(n + 255) / 256, 256, 0, sb>>>(b, n, 1, 1);  // queued behind: sb stays busy a while
  bl = LAUNCHED("affine on stream b, again") && bl;
  OK(cudaStreamSynchronize(sa));
  if (al) {
    // a is attached to sa alone, which is idle: the host may read it whatever sb does.
    std::vector<int> got(a, a + n), want(n);
    for (int i = 0; i < n; ++i) want[i] = 3 * i + 1;
    expect_equal_ints("managed a after its stream", got, want);
  }
  OK(cudaStreamSynchronize(sb));
  if (bl) {
    std::vector<int> got(b, b + n), want(n);
    for (int i = 0; i < n; ++i) want[i] = -2 * i + 6;
    expect_equal_ints("managed b after its stream", got, want);
  }
  // Back to global: a kernel on the legacy stream sees the host's last writes.
  OK(cudaStreamAttachMemAsync(sa, a, 0, cudaMemAttachGlobal));
  OK(cudaStreamSynchronize(sa));
  for (int i = 0; i < n; ++i) a[i] = 2 * i;
  affine<<<(n + 255) / 256, 256>>>(a, n, 1, -1);
  if (LAUNCHED("affine on the legacy stream")) {
    OK(cudaDeviceSynchronize());
    std::vector<int> got(a, a + n), want(n);
    for (int i = 0; i < n; ++i) want[i] = 2 * i - 1;
    expect_equal_ints("managed a attached global", got, want);
  }
  OK(cudaDeviceSynchronize());
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaStreamDestroy(sa));
  OK(cudaStreamDestroy(sb));
  OK(cudaStreamDestroy(stream1));
  return finish("__managed__ variables and cudaMallocManaged memory written by kernels, stream-attached");
}
