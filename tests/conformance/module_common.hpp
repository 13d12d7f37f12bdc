// Helpers shared by the module conformance tests (test_module*.cpp): the nvcc-built images of
// module_kernels.cu (their paths come from tests/CMakeLists.txt), the kernels' names as the images
// hold them, modules and libraries loaded for a scope, and a launch fixture. NVIDIA's API only, so
// they also run on the real driver (tools/probe/run_module_probe.sh).
#pragma once
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common.hpp"


#if !defined(CONF_MODULE_FATBIN) || !defined(CONF_MODULE_CUBIN_SM90) || !defined(CONF_MODULE_CUBIN_SM100) || \
    !defined(CONF_MODULE_PTX)
#error "tests/CMakeLists.txt passes the paths of the nvcc-built images"
#endif

// Both drivers run the kernels (the emulator from the fat binary's PTX).
constexpr CUresult kLaunched = CUDA_SUCCESS;

// Kernel names as the images hold them (C++ names mangled).
constexpr const char* kPlain = "_Z7k_plaincid3S24Pi";  // (char, int, double, S24, int*)
constexpr const char* kBounded = "_Z9k_boundedPi";     // __launch_bounds__(256)
constexpr const char* kShared = "_Z8k_sharedPi";       // 4096 bytes of static shared memory
constexpr const char* kTmplInt = "_Z6k_tmplIiEvPT_S0_";
constexpr const char* kTmplFloat = "_Z6k_tmplIfEvPT_S0_";
constexpr const char* kExternC = "k_extern_c";  // (int* out, int n): out[0] = n
constexpr const char* kGlobals = "_Z9k_globalsPi";
constexpr const char* kEmpty = "_Z7k_emptyv";
const char* const kAll[] = {kPlain, kBounded, kShared, kTmplInt, kTmplFloat, kExternC, kGlobals, kEmpty};

// A file's bytes, followed by NULs (PTX must be NUL-terminated; reads past a damaged
// image's end see zeros).
inline std::vector<char> slurp(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(!v.empty());
  v.resize(v.size() + 256, 0);
  return v;
}
inline size_t file_size(const char* path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  return static_cast<size_t>(f.tellg());
}
inline const std::vector<char>& fatbin() {
  static const std::vector<char> v = slurp(CONF_MODULE_FATBIN);
  return v;
}
inline const std::vector<char>& cubin90() {
  static const std::vector<char> v = slurp(CONF_MODULE_CUBIN_SM90);
  return v;
}
inline const std::vector<char>& cubin100() {
  static const std::vector<char> v = slurp(CONF_MODULE_CUBIN_SM100);
  return v;
}
inline const std::vector<char>& ptx() {
  static const std::vector<char> v = slurp(CONF_MODULE_PTX);
  return v;
}

struct S24 {  // k_plain's by-value parameter, as module_kernels.cu declares it
  double a;
  int b;
  char c[12];
};
static_assert(sizeof(S24) == 24, "S24 is 24 bytes");

struct FatbinWrapper {  // what nvcc puts in a host object (__fatBinC_Wrapper_t)
  int magic;
  int version;
  const void* data;
  void* filename_or_fatbins;
};

const char* const kBadPtx =
    ".version 9.0\n.target sm_90\n.address_size 64\n\n"
    ".visible .entry broken(\n)\n{\n  bogus_instruction %r1, 7;\n  ret;\n}\n";

template <class T>
T sentinel() {
  return reinterpret_cast<T>(uintptr_t(0x5e47e1));
}

// A module loaded from an image, unloaded at the end of the scope.
struct Module {
  CUmodule m = nullptr;
  explicit Module(const void* image) { REQUIRE_CU(cuModuleLoadData(&m, image), CUDA_SUCCESS); }
  ~Module() {
    if (m) cuModuleUnload(m);
  }
  CUfunction fn(const char* name) const {
    CUfunction f = nullptr;
    REQUIRE_CU(cuModuleGetFunction(&f, m, name), CUDA_SUCCESS);
    return f;
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
};

struct Library {
  CUlibrary l = nullptr;
  explicit Library(const void* image) {
    REQUIRE_CU(cuLibraryLoadData(&l, image, nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
  }
  ~Library() {
    if (l) cuLibraryUnload(l);
  }
  CUkernel kernel(const char* name) const {
    CUkernel k = nullptr;
    REQUIRE_CU(cuLibraryGetKernel(&k, l, name), CUDA_SUCCESS);
    return k;
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
};

inline std::string fname(CUfunction f) {
  const char* n = nullptr;
  REQUIRE_CU(cuFuncGetName(&n, f), CUDA_SUCCESS);
  REQUIRE(n != nullptr);
  return n;
}
inline std::string kname(CUkernel k) {
  const char* n = nullptr;
  REQUIRE_CU(cuKernelGetName(&n, k), CUDA_SUCCESS);
  REQUIRE(n != nullptr);
  return n;
}

inline int fattr(CUfunction f, int a) {
  int v = -7777;
  REQUIRE_CU(cuFuncGetAttribute(&v, CUfunction_attribute(a), f), CUDA_SUCCESS);
  return v;
}

// After a refused call the context is still usable: nothing was sticky.
inline void context_still_works() {
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  CHECK_CU(cuMemAlloc(&p, 256), CUDA_SUCCESS);
  CHECK_CU(cuMemFree(p), CUDA_SUCCESS);
}

// A device buffer and k_extern_c's arguments (out, n).
struct LaunchFixture {
  Module mod{fatbin().data()};
  CUfunction ext = mod.fn(kExternC);
  CUdeviceptr buf = 0;
  int n = 1234;
  void* args[2] = {&buf, &n};
  LaunchFixture() {
    REQUIRE_CU(cuMemAlloc(&buf, 4096), CUDA_SUCCESS);
    REQUIRE_CU(cuMemsetD8(buf, 0, 4096), CUDA_SUCCESS);
  }
  ~LaunchFixture() { cuMemFree(buf); }
  CUresult launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem = 0) {
    return cuLaunchKernel(ext, gx, gy, gz, bx, by, bz, shmem, nullptr, args, nullptr);
  }
  int out0() {
    int v = -1;
    REQUIRE_CU(cuMemcpyDtoH(&v, buf, 4), CUDA_SUCCESS);
    return v;
  }
};
