// A user's program built against an installed cuda-shim (tests/install/test_install.sh):
// driver API (cuInit, cuDeviceGet, cuMemAlloc, a copy round trip) and runtime API (cudaMalloc,
// cudaMemcpy, cudaMemGetInfo). Exits non-zero on any failure. It prints the files libcuda and
// libcudart were loaded from, so the test can prove the installed emulator ran, not NVIDIA's.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_shim_ext.h>  // installed next to cuda.h; cuShimGetVersion exists only in ours
#include <dlfcn.h>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                   \
  do {                                                                             \
    if (!(x)) {                                                                    \
      std::fprintf(stderr, "sample: FAILED at line %d: %s\n", __LINE__, #x);       \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

// The real path of the library that defines symbol (as the dynamic loader resolved it).
static const char *library_of(const char *symbol) {
  static char path[PATH_MAX];
  Dl_info info{};
  void *p = dlsym(RTLD_DEFAULT, symbol);
  if (!p || !dladdr(p, &info) || !info.dli_fname || !realpath(info.dli_fname, path)) return "?";
  return path;
}

int main() {
  const size_t n = 4096, bytes = n * sizeof(unsigned);
  std::vector<unsigned> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = unsigned(i * 2654435761u);

  // Driver API.
  int version = 0;
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr d = 0;
  CHECK(cuInit(0) == CUDA_SUCCESS);
  CHECK(cuDriverGetVersion(&version) == CUDA_SUCCESS && version >= CUDA_VERSION);
  CHECK(cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS);
  CHECK(cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
  CHECK(cuMemAlloc(&d, bytes) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoD(d, in.data(), bytes) == CUDA_SUCCESS);
  CHECK(cuMemcpyDtoH(out.data(), d, bytes) == CUDA_SUCCESS);
  CHECK(out == in);
  CHECK(cuMemFree(d) == CUDA_SUCCESS);

  // Runtime API, through a device-to-device copy too.
  void *a = nullptr, *b = nullptr;
  size_t free_mem = 0, total_mem = 0;
  std::fill(out.begin(), out.end(), 0u);
  CHECK(cudaMalloc(&a, bytes) == cudaSuccess && cudaMalloc(&b, bytes) == cudaSuccess);
  CHECK(cudaMemGetInfo(&free_mem, &total_mem) == cudaSuccess);
  CHECK(total_mem > 0 && free_mem + 2 * bytes <= total_mem);
  CHECK(cudaMemcpy(a, in.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess);
  CHECK(cudaMemcpy(out.data(), b, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out == in);
  CHECK(cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess);
  CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS);

  std::printf("sample: libcuda %s\n", library_of("cuInit"));
  std::printf("sample: libcudart %s\n", library_of("cudaMalloc"));
  std::printf("sample: cuda-shim %d, driver %d\n", cuShimGetVersion(), version);
  std::printf("sample: OK\n");
  return 0;
}
