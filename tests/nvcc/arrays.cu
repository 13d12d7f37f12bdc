// CUDA arrays, the way programs fill and read them: cudaMallocArray and cudaMalloc3DArray with
// channel descriptors, 2D copies in and out at offsets, the linear copies that run on from row
// to row, array to array, cudaMemcpy3D with positions in elements, a mipmapped array's levels,
// device memory a kernel wrote copied into an array and back, cudaArrayGetInfo, and the errors
// a program meets (a bad channel format, a copy past the end, a wrong direction). Every value is
// checked on the host.
// cudaMemcpyToArray / FromArray are deprecated, and still what many programs call.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "kernel_test.h"

constexpr int kW = 64, kH = 48;

__global__ void ramp(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.5f * static_cast<float>(i);
}

static std::vector<float> pattern(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return v;
}

// A 2D float array: a whole copy in and out, a region at an offset, and the array's info.
static void two_d() {
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaArray_t a = nullptr;
  OK(cudaMallocArray(&a, &f, kW, kH));
  cudaChannelFormatDesc got{};
  cudaExtent ext{};
  unsigned flags = 99;
  OK(cudaArrayGetInfo(&got, &ext, &flags, a));
  CHECK(got.x == 32 && got.y == 0 && got.f == cudaChannelFormatKindFloat);
  CHECK(ext.width == kW && ext.height == kH && ext.depth == 0 && flags == 0);

  std::vector<float> in = pattern(kW * kH, 1.0f), out(kW * kH, -1.0f);
  OK(cudaMemcpy2DToArray(a, 0, 0, in.data(), kW * sizeof(float), kW * sizeof(float), kH, cudaMemcpyHostToDevice));
  OK(cudaMemcpy2DFromArray(out.data(), kW * sizeof(float), a, 0, 0, kW * sizeof(float), kH, cudaMemcpyDeviceToHost));
  expect_equal("2D round trip", out.data(), in.data(), in.size(), [](float x) { return std::to_string(x); });

  // A 4x3 region at (8 elements, 5 rows) from a host buffer with a wider pitch.
  std::vector<float> patch = pattern(10 * 3, 1000.0f);
  OK(cudaMemcpy2DToArray(a, 8 * sizeof(float), 5, patch.data(), 10 * sizeof(float), 4 * sizeof(float), 3,
                         cudaMemcpyHostToDevice));
  OK(cudaMemcpy2DFromArray(out.data(), kW * sizeof(float), a, 0, 0, kW * sizeof(float), kH, cudaMemcpyDeviceToHost));
  std::vector<float> want = in;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) want[(5 + r) * kW + 8 + c] = patch[r * 10 + c];
  expect_equal("2D region", out.data(), want.data(), want.size(), [](float x) { return std::to_string(x); });

  // cudaMemcpyToArray runs on into the next rows: 100 floats from element 60 of row 2.
  std::vector<float> run = pattern(100, 5000.0f);
  OK(cudaMemcpyToArray(a, 60 * sizeof(float), 2, run.data(), run.size() * sizeof(float), cudaMemcpyHostToDevice));
  for (int i = 0; i < 100; ++i) want[2 * kW + 60 + i] = run[i];
  std::vector<float> back(want.size(), -1.0f);
  OK(cudaMemcpyFromArray(back.data(), a, 0, 0, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("linear copy across rows", back.data(), want.data(), want.size(),
               [](float x) { return std::to_string(x); });

  // Array to array, then the errors: a copy past the last row, the wrong direction.
  cudaArray_t b = nullptr;
  OK(cudaMallocArray(&b, &f, kW, kH));
  OK(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, kW * sizeof(float), kH, cudaMemcpyDeviceToDevice));
  OK(cudaMemcpy2DFromArray(out.data(), kW * sizeof(float), b, 0, 0, kW * sizeof(float), kH, cudaMemcpyDeviceToHost));
  expect_equal("array to array", out.data(), want.data(), want.size(), [](float x) { return std::to_string(x); });
  CHECK(cudaMemcpy2DToArray(a, 0, kH - 1, in.data(), kW * sizeof(float), kW * sizeof(float), 2,
                            cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy2DToArray(a, 0, 0, in.data(), kW * sizeof(float), kW * sizeof(float), 1, cudaMemcpyDeviceToHost) ==
        cudaErrorInvalidMemcpyDirection);
  cudaGetLastError();  // the runtime's last error, which those failures set
  OK(cudaFreeArray(b));
  OK(cudaFreeArray(a));
}

// A kernel's output copied into an array (device to device) and read back.
static void from_kernel() {
  float* d = nullptr;
  OK(cudaMalloc(&d, kW * kH * sizeof(float)));
  ramp<<<(kW * kH + 255) / 256, 256>>>(d, kW * kH);
  if (!LAUNCHED("ramp")) return;
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaArray_t a = nullptr;
  OK(cudaMallocArray(&a, &f, kW, kH));
  OK(cudaMemcpy2DToArray(a, 0, 0, d, kW * sizeof(float), kW * sizeof(float), kH, cudaMemcpyDeviceToDevice));
  std::vector<float> out(kW * kH, -1.0f), want(kW * kH);
  for (int i = 0; i < kW * kH; ++i) want[i] = 0.5f * static_cast<float>(i);
  OK(cudaMemcpy2DFromArray(out.data(), kW * sizeof(float), a, 0, 0, kW * sizeof(float), kH, cudaMemcpyDeviceToHost));
  expect_equal("kernel output through an array", out.data(), want.data(), want.size(),
               [](float x) { return std::to_string(x); });
  OK(cudaFreeArray(a));
  OK(cudaFree(d));
}

// A 3D array of uchar4: cudaMemcpy3D in and out with positions and extents in elements.
static void three_d() {
  const size_t w = 16, h = 8, dep = 4;
  cudaChannelFormatDesc f = cudaCreateChannelDesc<uchar4>();
  cudaArray_t a = nullptr;
  OK(cudaMalloc3DArray(&a, &f, make_cudaExtent(w, h, dep)));
  std::vector<uchar4> in(w * h * dep), out(w * h * dep);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = make_uchar4(static_cast<unsigned char>(i), static_cast<unsigned char>(i >> 8), 7, 9);
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(in.data(), w * sizeof(uchar4), w, h);
  p.dstArray = a;
  p.extent = make_cudaExtent(w, h, dep);
  p.kind = cudaMemcpyHostToDevice;
  OK(cudaMemcpy3D(&p));
  // Read back a 5x3x2 box at (4, 2, 1).
  std::vector<uchar4> box(5 * 3 * 2);
  cudaMemcpy3DParms q{};
  q.srcArray = a;
  q.srcPos = make_cudaPos(4, 2, 1);
  q.dstPtr = make_cudaPitchedPtr(box.data(), 5 * sizeof(uchar4), 5, 3);
  q.extent = make_cudaExtent(5, 3, 2);
  q.kind = cudaMemcpyDeviceToHost;
  OK(cudaMemcpy3D(&q));
  size_t bad = 0;
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 5; ++x) {
        const uchar4 g = box[(z * 3 + y) * 5 + x], e = in[((z + 1) * h + y + 2) * w + x + 4];
        bad += g.x != e.x || g.y != e.y || g.z != e.z || g.w != e.w;
      }
  CHECK(bad == 0);
  OK(cudaFreeArray(a));
}

// A mipmapped array: each level is an array of its own size.
static void mipmapped() {
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  cudaMipmappedArray_t m = nullptr;
  OK(cudaMallocMipmappedArray(&m, &f, make_cudaExtent(64, 32, 0), 4));
  for (unsigned l = 0; l < 4; ++l) {
    cudaArray_t a = nullptr;
    OK(cudaGetMipmappedArrayLevel(&a, m, l));
    cudaExtent e{};
    OK(cudaArrayGetInfo(nullptr, &e, nullptr, a));
    CHECK(e.width == (64u >> l) && e.height == (32u >> l));
    std::vector<float> in = pattern(e.width * e.height, 10.0f * l), out(in.size(), -1.0f);
    OK(cudaMemcpy2DToArray(a, 0, 0, in.data(), e.width * 4, e.width * 4, e.height, cudaMemcpyHostToDevice));
    OK(cudaMemcpy2DFromArray(out.data(), e.width * 4, a, 0, 0, e.width * 4, e.height, cudaMemcpyDeviceToHost));
    expect_equal("mipmap level", out.data(), in.data(), in.size(), [](float x) { return std::to_string(x); });
  }
  cudaArray_t none = nullptr;
  CHECK(cudaGetMipmappedArrayLevel(&none, m, 4) == cudaErrorInvalidValue);
  cudaGetLastError();
  OK(cudaFreeMipmappedArray(m));
}

// A driver entry point, as a program without -lcuda reaches it.
template <class F>
static F entry(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  OK(cudaGetDriverEntryPointByVersion(name, &p, 13000, cudaEnableDefault, &q));
  CHECK(p != nullptr && q == cudaDriverEntryPointSuccess);
  return reinterpret_cast<F>(p);
}

// The driver's 1D arrays and their byte-offset copies.
static void driver_1d() {
  auto cuArrayCreate = entry<decltype(&::cuArrayCreate)>("cuArrayCreate");
  auto cuMemcpyHtoA = entry<decltype(&::cuMemcpyHtoA)>("cuMemcpyHtoA");
  auto cuMemcpyAtoH = entry<decltype(&::cuMemcpyAtoH)>("cuMemcpyAtoH");
  auto cuArray3DGetDescriptor = entry<decltype(&::cuArray3DGetDescriptor)>("cuArray3DGetDescriptor");
  auto cuArrayDestroy = entry<decltype(&::cuArrayDestroy)>("cuArrayDestroy");
  if (!cuArrayCreate || !cuMemcpyHtoA || !cuMemcpyAtoH || !cuArray3DGetDescriptor || !cuArrayDestroy) return;
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 256;
  d.Height = 0;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT16;
  d.NumChannels = 2;
  CUarray a = nullptr;
  CHECK(cuArrayCreate(&a, &d) == CUDA_SUCCESS);
  std::vector<unsigned char> in(256 * 4), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  CHECK(cuMemcpyHtoA(a, 0, in.data(), in.size()) == CUDA_SUCCESS);
  CHECK(cuMemcpyAtoH(out.data(), a, 0, out.size()) == CUDA_SUCCESS);
  CHECK(std::memcmp(in.data(), out.data(), in.size()) == 0);
  CHECK(cuMemcpyHtoA(a, in.size() - 2, in.data(), 4) == CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY3D_DESCRIPTOR back{};
  CHECK(cuArray3DGetDescriptor(&back, a) == CUDA_SUCCESS);
  CHECK(back.Width == 256 && back.Height == 0 && back.Format == CU_AD_FORMAT_UNSIGNED_INT16 && back.NumChannels == 2);
  CHECK(cuArrayDestroy(a) == CUDA_SUCCESS);
}

int main(int, char** argv) {
  g_prog = argv[0];
  OK(cudaFree(nullptr));
  two_d();
  from_kernel();
  three_d();
  mipmapped();
  driver_1d();
  // A channel format no array holds.
  cudaChannelFormatDesc bad = cudaCreateChannelDesc(24, 0, 0, 0, cudaChannelFormatKindUnsigned);
  cudaArray_t a = reinterpret_cast<cudaArray_t>(1);
  CHECK(cudaMallocArray(&a, &bad, 16, 16) == cudaErrorInvalidChannelDescriptor && a == nullptr);
  cudaGetLastError();
  return finish("arrays: 2D, 3D and mipmapped arrays filled and read back at offsets, a kernel's output through an "
                "array, the driver's 1D copies, and the errors");
}
