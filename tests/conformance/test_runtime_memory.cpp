// Runtime API: allocation, pinned host memory, every memcpy/memset form, pointer
// attributes, and the failure codes measured on a real H200 (.probe/out/facts.txt).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "common.hpp"

namespace {
std::vector<unsigned char> pattern(size_t n, unsigned seed = 1) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + seed);
  return v;
}
// cuda_runtime_api.h alone has no make_cudaPitchedPtr / make_cudaExtent.
cudaPitchedPtr pitched(void* p, size_t pitch, size_t xsize, size_t ysize) {
  cudaPitchedPtr r;
  r.ptr = p, r.pitch = pitch, r.xsize = xsize, r.ysize = ysize;
  return r;
}
cudaExtent extent(size_t w, size_t h, size_t d) {
  cudaExtent e;
  e.width = w, e.height = h, e.depth = d;
  return e;
}
}  // namespace

TEST_CASE("runtime memory: cudaFree(0) initializes and succeeds") {
  CHECK_RT(cudaFree(nullptr), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMalloc of 0 bytes") {
  void* p = reinterpret_cast<void*>(0xdeadbeef);
  CHECK_RT(cudaMalloc(&p, 0), cudaSuccess);  // measured
  CHECK(p == nullptr);
}

TEST_CASE("runtime memory: cudaMalloc beyond the device") {
  void* p = reinterpret_cast<void*>(0xdeadbeef);
  CHECK_RT(cudaMalloc(&p, 1ull << 62), cudaErrorMemoryAllocation);  // measured
  CHECK(p == nullptr);
  CHECK_RT(cudaGetLastError(), cudaErrorMemoryAllocation);
  CHECK_RT(cudaDeviceSynchronize(), cudaSuccess);  // not sticky
}

TEST_CASE("runtime memory: cudaMalloc with NULL devPtr") {
  CHECK_RT(cudaMalloc(nullptr, 16), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime memory: cudaFree of a garbage pointer") {
  CHECK_RT(cudaFree(reinterpret_cast<void*>(0x1234)), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime memory: cudaFree twice") {
  void* p = nullptr;
  REQUIRE_RT(cudaMalloc(&p, 64), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaSuccess);
  CHECK_RT(cudaFree(p), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime memory: cudaFree of a host pointer") {
  int x = 0;
  CHECK_RT(cudaFree(&x), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime memory: cudaFreeHost of malloc'd memory") {
  void* m = std::malloc(64);
  CHECK_RT(cudaFreeHost(m), cudaErrorInvalidValue);  // measured
  std::free(m);
  cudaGetLastError();
}

TEST_CASE("runtime memory: cudaMemGetInfo") {
  size_t free = 0, total = 0;
  CHECK_RT(cudaMemGetInfo(&free, &total), cudaSuccess);
  size_t cu_total = 0;
  REQUIRE_CU(cuDeviceTotalMem(&cu_total, 0), CUDA_SUCCESS);
  CHECK(total == cu_total);
  CHECK(free <= total);
  CHECK(free > 0);
}

TEST_CASE("runtime memory: pinned host memory") {
  void* h = nullptr;
  REQUIRE_RT(cudaMallocHost(&h, 4096), cudaSuccess);
  unsigned f = 77;
  CHECK_RT(cudaHostGetFlags(&f, h), cudaSuccess);
  void* d = nullptr;
  CHECK_RT(cudaHostGetDevicePointer(&d, h, 0), cudaSuccess);
  CHECK(d == h);  // unified addressing
  CHECK_RT(cudaFreeHost(h), cudaSuccess);

  REQUIRE_RT(cudaHostAlloc(&h, 4096, cudaHostAllocMapped | cudaHostAllocPortable), cudaSuccess);
  CHECK_RT(cudaHostGetFlags(&f, h), cudaSuccess);
  CHECK((f & (cudaHostAllocMapped | cudaHostAllocPortable)) == (cudaHostAllocMapped | cudaHostAllocPortable));
  CHECK_RT(cudaFreeHost(h), cudaSuccess);
}

TEST_CASE("runtime memory: cudaHostAlloc with unknown flags") {
  void* h = nullptr;
  CHECK_RT(cudaHostAlloc(&h, 64, 0xFF), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime memory: registered host memory") {
  std::vector<unsigned char> buf(1 << 16);
  REQUIRE_RT(cudaHostRegister(buf.data(), buf.size(), cudaHostRegisterDefault), cudaSuccess);
  cudaPointerAttributes a;
  CHECK_RT(cudaPointerGetAttributes(&a, buf.data()), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeHost);
  CHECK(a.hostPointer == buf.data());
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 4096), cudaSuccess);
  auto src = pattern(4096);
  REQUIRE_RT(cudaMemcpy(d, src.data(), 4096, cudaMemcpyHostToDevice), cudaSuccess);
  REQUIRE_RT(cudaMemcpy(buf.data(), d, 4096, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(std::memcmp(buf.data(), src.data(), 4096) == 0);
  CHECK_RT(cudaHostUnregister(buf.data()), cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
}

TEST_CASE("runtime memory: cudaHostRegister of an unaligned range") {
  void* m = std::malloc(1000);
  CHECK_RT(cudaHostRegister(static_cast<char*>(m) + 1, 100, 0), cudaSuccess);  // measured
  CHECK_RT(cudaHostUnregister(static_cast<char*>(m) + 1), cudaSuccess);
  std::free(m);
}

TEST_CASE("runtime memory: pointer attributes per kind") {
  void* d = nullptr;
  void* h = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 256), cudaSuccess);
  REQUIRE_RT(cudaMallocHost(&h, 256), cudaSuccess);
  cudaPointerAttributes a;

  std::memset(&a, 0x77, sizeof a);
  CHECK_RT(cudaPointerGetAttributes(&a, d), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeDevice);
  CHECK(a.device == 0);
  CHECK(a.devicePointer == d);
  CHECK(a.hostPointer == nullptr);

  std::memset(&a, 0x77, sizeof a);
  CHECK_RT(cudaPointerGetAttributes(&a, static_cast<char*>(d) + 8), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeDevice);
  CHECK(a.devicePointer == static_cast<char*>(d) + 8);

  std::memset(&a, 0x77, sizeof a);
  CHECK_RT(cudaPointerGetAttributes(&a, h), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeHost);
  CHECK(a.device == 0);
  CHECK(a.devicePointer == h);
  CHECK(a.hostPointer == h);

  // Measured: unknown memory is "unregistered", device -2, the pointer as host pointer.
  void* m = std::malloc(64);
  std::memset(&a, 0x77, sizeof a);
  CHECK_RT(cudaPointerGetAttributes(&a, m), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeUnregistered);
  CHECK(a.device == -2);
  CHECK(a.devicePointer == nullptr);
  CHECK(a.hostPointer == m);
  std::free(m);

  std::memset(&a, 0x77, sizeof a);
  CHECK_RT(cudaPointerGetAttributes(&a, nullptr), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeUnregistered);
  CHECK(a.device == -2);
  CHECK(a.devicePointer == nullptr);
  CHECK(a.hostPointer == nullptr);

  std::memset(&a, 0x77, sizeof a);
  CHECK_RT(cudaPointerGetAttributes(&a, reinterpret_cast<void*>(0x1234)), cudaSuccess);
  CHECK(a.type == cudaMemoryTypeUnregistered);

  CHECK_RT(cudaFree(d), cudaSuccess);
  std::memset(&a, 0x77, sizeof a);
  CHECK_RT(cudaPointerGetAttributes(&a, d), cudaSuccess);  // freed: unregistered now
  CHECK(a.type == cudaMemoryTypeUnregistered);
  CHECK(a.devicePointer == nullptr);
  CHECK_RT(cudaFreeHost(h), cudaSuccess);
  CHECK_RT(cudaGetLastError(), cudaSuccess);
}

TEST_CASE("runtime memory: cudaPointerGetAttributes with NULL attributes") {
  int x;
  CHECK_RT(cudaPointerGetAttributes(nullptr, &x), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

TEST_CASE("runtime memory: cudaMemcpy round trips, every kind") {
  const size_t n = 1 << 16;
  auto src = pattern(n);
  std::vector<unsigned char> back(n), host2(n);
  void *d1 = nullptr, *d2 = nullptr;
  REQUIRE_RT(cudaMalloc(&d1, n), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&d2, n), cudaSuccess);
  CHECK_RT(cudaMemcpy(d1, src.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  CHECK_RT(cudaMemcpy(d2, d1, n, cudaMemcpyDeviceToDevice), cudaSuccess);
  CHECK_RT(cudaMemcpy(back.data(), d2, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(back == src);
  CHECK_RT(cudaMemcpy(host2.data(), back.data(), n, cudaMemcpyHostToHost), cudaSuccess);
  CHECK(host2 == src);
  std::fill(back.begin(), back.end(), 0);
  CHECK_RT(cudaMemcpy(d2, src.data() + 1, n - 1, cudaMemcpyDefault), cudaSuccess);
  CHECK_RT(cudaMemcpy(back.data(), d2, n - 1, cudaMemcpyDefault), cudaSuccess);
  CHECK(std::memcmp(back.data(), src.data() + 1, n - 1) == 0);
  CHECK_RT(cudaFree(d1), cudaSuccess);
  CHECK_RT(cudaFree(d2), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpy with an invalid kind") {
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 256), cudaSuccess);
  char h[256] = "abc";
  CHECK_RT(cudaMemcpy(d, h, 64, static_cast<cudaMemcpyKind>(7)), cudaErrorInvalidMemcpyDirection);   // measured
  CHECK_RT(cudaMemcpy(d, h, 64, static_cast<cudaMemcpyKind>(-1)), cudaErrorInvalidMemcpyDirection);  // measured
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
  CHECK_RT(cudaMemcpy(d, h, 0, static_cast<cudaMemcpyKind>(7)), cudaSuccess);  // measured: size 0 first
  CHECK_RT(cudaFree(d), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpy with a kind that contradicts the pointers") {
  void *d1 = nullptr, *d2 = nullptr;
  REQUIRE_RT(cudaMalloc(&d1, 256), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&d2, 256), cudaSuccess);
  char a[256] = "abc", b[256] = {};
  // Measured: the stated kind is honoured, not replaced by what UVA would infer.
  CHECK_RT(cudaMemcpy(b, a, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  CHECK(b[0] == 0);
  CHECK_RT(cudaMemcpy(b, d1, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  CHECK_RT(cudaMemcpy(d2, a, 64, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  CHECK_RT(cudaMemcpy(b, a, 64, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
  CHECK(b[0] == 0);
  cudaGetLastError();
  CHECK_RT(cudaFree(d1), cudaSuccess);
  CHECK_RT(cudaFree(d2), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpy past the end of an allocation") {
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 256), cudaSuccess);
  std::vector<char> h(1024);
  CHECK_RT(cudaMemcpy(d, h.data(), 1024, cudaMemcpyHostToDevice), cudaErrorInvalidValue);  // measured
  CHECK_RT(cudaMemcpy(nullptr, h.data(), 16, cudaMemcpyHostToDevice), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
  CHECK_RT(cudaFree(d), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpyAsync on streams") {
  const size_t n = 1 << 20;
  auto src = pattern(n, 3);
  void* h = nullptr;
  void* d = nullptr;
  REQUIRE_RT(cudaMallocHost(&h, n), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&d, n), cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  CHECK_RT(cudaMemcpyAsync(d, src.data(), n, cudaMemcpyHostToDevice, s), cudaSuccess);
  CHECK_RT(cudaMemsetAsync(h, 0, n, s), cudaSuccess);
  CHECK_RT(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(std::memcmp(h, src.data(), n) == 0);
  // Default stream, pageable memory (measured: fine).
  std::vector<unsigned char> back(n);
  CHECK_RT(cudaMemcpyAsync(back.data(), d, n, cudaMemcpyDefault, nullptr), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(nullptr), cudaSuccess);
  CHECK(back == src);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
  CHECK_RT(cudaFreeHost(h), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMallocPitch + cudaMemcpy2D + cudaMemset2D") {
  const size_t w = 100, hgt = 7;
  void* d = nullptr;
  size_t pitch = 0;
  REQUIRE_RT(cudaMallocPitch(&d, &pitch, w, hgt), cudaSuccess);
  CHECK(pitch >= w);
  auto src = pattern(w * hgt);
  CHECK_RT(cudaMemset2D(d, pitch, 0xEE, w, hgt), cudaSuccess);
  // Copy the middle 50 columns of each row.
  CHECK_RT(cudaMemcpy2D(static_cast<char*>(d) + 10, pitch, src.data() + 10, w, 50, hgt, cudaMemcpyHostToDevice),
           cudaSuccess);
  std::vector<unsigned char> back(w * hgt);
  CHECK_RT(cudaMemcpy2D(back.data(), w, d, pitch, w, hgt, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t y = 0; y < hgt; ++y)
    for (size_t x = 0; x < w; ++x) {
      unsigned char want = (x >= 10 && x < 60) ? src[y * w + x] : 0xEE;
      if (back[y * w + x] != want) {
        FAIL_CHECK("mismatch at " << x << "," << y);
        y = hgt;
        break;
      }
    }
  // Async forms, then read back.
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  CHECK_RT(cudaMemset2DAsync(d, pitch, 0x11, w, hgt, s), cudaSuccess);
  CHECK_RT(cudaMemcpy2DAsync(back.data(), w, d, pitch, w, hgt, cudaMemcpyDeviceToHost, s), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0x11; }));
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpy2D with a width larger than the pitch") {
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 4096), cudaSuccess);
  std::vector<char> h(4096);
  CHECK_RT(cudaMemcpy2D(d, 16, h.data(), 64, 32, 4, cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);
  cudaGetLastError();
  CHECK_RT(cudaFree(d), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpy3D + cudaMemset3D") {
  const size_t w = 40, hgt = 5, depth = 3;
  cudaPitchedPtr dp{};
  void* d = nullptr;
  size_t pitch = 0;
  REQUIRE_RT(cudaMallocPitch(&d, &pitch, w, hgt * depth), cudaSuccess);
  dp = pitched(d, pitch, w, hgt);
  cudaExtent ext = extent(w, hgt, depth);
  CHECK_RT(cudaMemset3D(dp, 0x5A, ext), cudaSuccess);
  std::vector<unsigned char> back(w * hgt * depth);
  cudaMemcpy3DParms p{};
  p.srcPtr = dp;
  p.dstPtr = pitched(back.data(), w, w, hgt);
  p.extent = ext;
  p.kind = cudaMemcpyDeviceToHost;
  CHECK_RT(cudaMemcpy3D(&p), cudaSuccess);
  CHECK(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0x5A; }));

  auto src = pattern(w * hgt * depth, 9);
  cudaMemcpy3DParms up{};
  up.srcPtr = pitched(src.data(), w, w, hgt);
  up.dstPtr = dp;
  up.extent = ext;
  up.kind = cudaMemcpyHostToDevice;
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  CHECK_RT(cudaMemcpy3DAsync(&up, s), cudaSuccess);
  std::fill(back.begin(), back.end(), 0);
  CHECK_RT(cudaMemcpy3DAsync(&p, s), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(back == src);

  CHECK_RT(cudaMemset3DAsync(dp, 0x22, ext, s), cudaSuccess);
  CHECK_RT(cudaMemcpy3DAsync(&p, s), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0x22; }));
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpy3DPeer and cudaMemcpyPeer on one device") {
  const size_t n = 4096;
  void *a = nullptr, *b = nullptr;
  REQUIRE_RT(cudaMalloc(&a, n), cudaSuccess);
  REQUIRE_RT(cudaMalloc(&b, n), cudaSuccess);
  auto src = pattern(n, 5);
  REQUIRE_RT(cudaMemcpy(a, src.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  CHECK_RT(cudaMemcpyPeer(b, 0, a, 0, n), cudaSuccess);
  std::vector<unsigned char> back(n);
  REQUIRE_RT(cudaMemcpy(back.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(back == src);

  REQUIRE_RT(cudaMemset(b, 0, n), cudaSuccess);
  CHECK_RT(cudaMemcpyPeerAsync(b, 0, a, 0, n, nullptr), cudaSuccess);
  CHECK_RT(cudaDeviceSynchronize(), cudaSuccess);
  REQUIRE_RT(cudaMemcpy(back.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(back == src);

  REQUIRE_RT(cudaMemset(b, 0, n), cudaSuccess);
  cudaMemcpy3DPeerParms p{};
  p.srcPtr = pitched(a, 64, 64, 8);
  p.srcDevice = 0;
  p.dstPtr = pitched(b, 64, 64, 8);
  p.dstDevice = 0;
  p.extent = extent(64, 8, 8);
  CHECK_RT(cudaMemcpy3DPeer(&p), cudaSuccess);
  REQUIRE_RT(cudaMemcpy(back.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(back == src);
  REQUIRE_RT(cudaMemset(b, 0, n), cudaSuccess);
  CHECK_RT(cudaMemcpy3DPeerAsync(&p, nullptr), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(nullptr), cudaSuccess);
  REQUIRE_RT(cudaMemcpy(back.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(back == src);
  CHECK_RT(cudaFree(a), cudaSuccess);
  CHECK_RT(cudaFree(b), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemcpyPeer with an out-of-range device") {
  int n = 0;
  REQUIRE_RT(cudaGetDeviceCount(&n), cudaSuccess);
  void* a = nullptr;
  REQUIRE_RT(cudaMalloc(&a, 64), cudaSuccess);
  CHECK_RT(cudaMemcpyPeer(a, n, a, 0, 64), cudaErrorInvalidDevice);
  cudaGetLastError();
  CHECK_RT(cudaFree(a), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemset values and targets") {
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, 1000), cudaSuccess);
  CHECK_RT(cudaMemset(d, 0x1AB, 1000), cudaSuccess);  // only the low byte counts
  std::vector<unsigned char> back(1000);
  REQUIRE_RT(cudaMemcpy(back.data(), d, 1000, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0xAB; }));
  void* h = nullptr;
  REQUIRE_RT(cudaMallocHost(&h, 64), cudaSuccess);
  CHECK_RT(cudaMemset(h, 0x3C, 64), cudaSuccess);  // measured: pinned memory is a valid target
  CHECK_RT(cudaDeviceSynchronize(), cudaSuccess);
  CHECK(static_cast<unsigned char*>(h)[63] == 0x3C);
  CHECK_RT(cudaFreeHost(h), cudaSuccess);
  CHECK_RT(cudaFree(d), cudaSuccess);
}

TEST_CASE("runtime memory: cudaMemset of malloc'd host memory") {
  void* m = std::malloc(64);
  CHECK_RT(cudaMemset(m, 0, 64), cudaErrorInvalidValue);  // measured
  std::free(m);
  cudaGetLastError();
}

TEST_CASE("runtime memory: cudaMemset of NULL") {
  CHECK_RT(cudaMemset(nullptr, 0, 64), cudaErrorInvalidValue);  // measured
  cudaGetLastError();
}

extern "C" cudaError_t CUDARTAPI cudaMemcpy_ptds(void*, const void*, size_t, cudaMemcpyKind);
extern "C" cudaError_t CUDARTAPI cudaMemset_ptds(void*, int, size_t);
extern "C" cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);

TEST_CASE("runtime memory: _ptds/_ptsz copy and fill entries") {
  const size_t n = 4096;
  void* d = nullptr;
  REQUIRE_RT(cudaMalloc(&d, n), cudaSuccess);
  auto src = pattern(n, 11);
  std::vector<unsigned char> back(n);
  CHECK_RT(cudaMemcpy_ptds(d, src.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  CHECK_RT(cudaMemcpyAsync_ptsz(back.data(), d, n, cudaMemcpyDeviceToHost, nullptr), cudaSuccess);
  CHECK_RT(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  CHECK(back == src);
  CHECK_RT(cudaMemset_ptds(d, 0x42, n), cudaSuccess);
  CHECK_RT(cudaMemcpy_ptds(back.data(), d, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(std::all_of(back.begin(), back.end(), [](unsigned char c) { return c == 0x42; }));
  CHECK_RT(cudaMemcpy_ptds(d, src.data(), 64, static_cast<cudaMemcpyKind>(9)), cudaErrorInvalidMemcpyDirection);
  cudaGetLastError();
  CHECK_RT(cudaFree(d), cudaSuccess);
}
