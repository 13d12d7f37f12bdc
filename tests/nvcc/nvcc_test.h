// Shared by the nvcc-built test programs (tests/nvcc/*.cu). Only NVIDIA's headers and plain POSIX:
// the same programs build with any nvcc 13 and run on cuda-shim or on a real GPU. cuda-shim's own
// entry points (cuShim*) are looked up with dlsym, never linked.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static int g_failures = 0;
static const char* g_prog = "nvcc-test";

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "%s: FAILED line %d: %s\n", g_prog, __LINE__, #cond); \
      ++g_failures;                                                              \
    }                                                                            \
  } while (0)

// A CUDA call that must return `want` (a cudaError_t).
#define EXPECT_ERR(call, want)                                                                     \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    cudaError_t w_ = (want);                                                                       \
    if (e_ != w_) {                                                                                \
      std::fprintf(stderr, "%s: FAILED line %d: %s returned %d (%s), want %d (%s)\n", g_prog,      \
                   __LINE__, #call, static_cast<int>(e_), cudaGetErrorName(e_), static_cast<int>(w_), \
                   cudaGetErrorName(w_));                                                          \
      ++g_failures;                                                                                \
    }                                                                                              \
  } while (0)
#define OK(call) EXPECT_ERR(call, cudaSuccess)

// A symbol of the libcuda.so.1 this process loaded: NVIDIA's static runtime dlopens it
// privately, so look in that library as well as in the global scope.
static inline void* cuda_symbol(const char* name) {
  if (void* p = dlsym(RTLD_DEFAULT, name)) return p;
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  return h ? dlsym(h, name) : nullptr;
}

// Which libcuda this process runs on: only cuda-shim's exports cuShimGetVersion.
static inline bool on_cuda_shim() { return cuda_symbol("cuShimGetVersion") != nullptr; }

// A cuda-shim extension entry point (nullptr on NVIDIA's driver).
template <class F>
static inline F shim_fn(const char* name) {
  return reinterpret_cast<F>(cuda_symbol(name));
}

// CTest sets NVCC_TEST_EXPECT_SHIM=1: then running on anything but cuda-shim (NVIDIA's
// libcudart found first, say through /usr/local/lib) is a failure, not a quiet pass.
static inline bool expect_shim() {
  const char* want = std::getenv("NVCC_TEST_EXPECT_SHIM");
  return want && std::strcmp(want, "1") == 0;
}
static inline void require_shim_if_asked() {
  // NVIDIA's static runtime loads libcuda.so.1 at its first call: make one.
  int driver = 0;
  (void)cudaDriverGetVersion(&driver);
  // NVCC_TEST_RUNTIME_FROM=DIR: the runtime must be the libcudart in DIR (NVIDIA's, say).
  if (const char* from = std::getenv("NVCC_TEST_RUNTIME_FROM")) {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) || !info.dli_fname ||
        std::strstr(info.dli_fname, from) != info.dli_fname) {
      std::fprintf(stderr, "%s: FAILED: the runtime came from %s, not from %s\n", g_prog,
                   info.dli_fname ? info.dli_fname : "?", from);
      std::exit(2);
    }
  }
  if (expect_shim() && !on_cuda_shim()) {
    std::fprintf(stderr, "%s: FAILED: NVCC_TEST_EXPECT_SHIM=1 but this process did not load cuda-shim's libraries\n",
                 g_prog);
    std::exit(2);
  }
}

static inline int finish(const char* what) {
  std::printf("%s: %s (%s; libcuda %s; %d failure%s)\n", g_prog, g_failures ? "FAIL" : "PASS", what,
              on_cuda_shim() ? "cuda-shim" : "NVIDIA", g_failures, g_failures == 1 ? "" : "s");
  return g_failures ? 1 : 0;
}
