// Modules, libraries, kernels and functions, and launches: cuModuleLoad*, cuModuleGet*,
// cuLibrary*, cuKernel*, cuFunc*, cuLaunchKernel[Ex]. The images are module_kernels.cu built by
// nvcc (tests/CMakeLists.txt): a fat binary (sm_90 code + compute_90 PTX), an sm_90 cubin, an
// sm_100 cubin and PTX. Expected codes and outputs are those NVIDIA's driver gave on an H100
// (driver 580, CUDA 13.0) and an H200: tools/probe/module/, output in probe_module.h200.txt;
// tools/probe/run_module_probe.sh runs this test against the real driver too.
// Launches that would run a kernel succeed on the real driver; the emulator runs no device
// code and refuses them with CUDA_ERROR_NOT_SUPPORTED, after the same argument checks.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

#if !defined(CONF_MODULE_FATBIN) || !defined(CONF_MODULE_CUBIN_SM90) || !defined(CONF_MODULE_CUBIN_SM100) || \
    !defined(CONF_MODULE_PTX)
#error "tests/CMakeLists.txt passes the paths of the nvcc-built images"
#endif

namespace {

#if CUDA_SHIM_REAL_BACKEND
constexpr CUresult kLaunched = CUDA_SUCCESS;
#else
constexpr CUresult kLaunched = CUDA_ERROR_NOT_SUPPORTED;  // no device code runs here
#endif

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
std::vector<char> slurp(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(!v.empty());
  v.resize(v.size() + 256, 0);
  return v;
}
size_t file_size(const char* path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  return static_cast<size_t>(f.tellg());
}
const std::vector<char>& fatbin() {
  static const std::vector<char> v = slurp(CONF_MODULE_FATBIN);
  return v;
}
const std::vector<char>& cubin90() {
  static const std::vector<char> v = slurp(CONF_MODULE_CUBIN_SM90);
  return v;
}
const std::vector<char>& cubin100() {
  static const std::vector<char> v = slurp(CONF_MODULE_CUBIN_SM100);
  return v;
}
const std::vector<char>& ptx() {
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

std::string fname(CUfunction f) {
  const char* n = nullptr;
  REQUIRE_CU(cuFuncGetName(&n, f), CUDA_SUCCESS);
  REQUIRE(n != nullptr);
  return n;
}
std::string kname(CUkernel k) {
  const char* n = nullptr;
  REQUIRE_CU(cuKernelGetName(&n, k), CUDA_SUCCESS);
  REQUIRE(n != nullptr);
  return n;
}

int fattr(CUfunction f, int a) {
  int v = -7777;
  REQUIRE_CU(cuFuncGetAttribute(&v, CUfunction_attribute(a), f), CUDA_SUCCESS);
  return v;
}

// After a refused call the context is still usable: nothing was sticky.
void context_still_works() {
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

}  // namespace

// ---- loading ------------------------------------------------------------------------------

TEST_CASE("cuModuleLoadData takes a fat binary, a cubin for the device and PTX", "[module][load]") {
  conformance_primary_ctx();
  struct {
    const char* what;
    const void* image;
  } good[] = {{"fatbin", fatbin().data()}, {"cubin sm_90", cubin90().data()}, {"ptx", ptx().data()}};
  for (auto& c : good) {
    INFO(c.what);
    CUmodule m = nullptr;
    REQUIRE_CU(cuModuleLoadData(&m, c.image), CUDA_SUCCESS);
    CHECK(m != nullptr);
    unsigned n = 0;
    CHECK_CU(cuModuleGetFunctionCount(&n, m), CUDA_SUCCESS);
    CHECK(n == 8);
    CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  }
}

TEST_CASE("cuModuleLoadData refuses what the device cannot run and what is not an image", "[module][load]") {
  conformance_primary_ctx();
  std::vector<char> garbage(64 + 256, 0);
  for (int i = 0; i < 64; ++i) garbage[i] = char(0xA0 + (i * 37) % 64);
  const size_t fsz = file_size(CONF_MODULE_FATBIN);
  std::vector<char> half(fsz + 256, 0);
  std::memcpy(half.data(), fatbin().data(), fsz / 2);
  std::vector<char> header_only(fsz + 256, 0);
  std::memcpy(header_only.data(), fatbin().data(), 16);
  FatbinWrapper w{0x466243b1, 1, fatbin().data(), nullptr};
  struct {
    const char* what;
    const void* image;
    CUresult expected;
  } bad[] = {
      {"cubin sm_100", cubin100().data(), CUDA_ERROR_NO_BINARY_FOR_GPU},
      {"NULL", nullptr, CUDA_ERROR_INVALID_VALUE},
      {"64 bytes of garbage", garbage.data(), CUDA_ERROR_INVALID_IMAGE},
      // nvcc's wrapper: the module loaders take only the container it points at.
      {"fat binary wrapper", &w, CUDA_ERROR_INVALID_IMAGE},
#if !CUDA_SHIM_REAL_BACKEND
      // NVIDIA's driver 580 hangs on these (measured): the emulator gives the documented error.
      {"fat binary, first half", half.data(), CUDA_ERROR_INVALID_IMAGE},
      {"fat binary, header only", header_only.data(), CUDA_ERROR_INVALID_IMAGE},
#endif
      {"empty string", "", CUDA_ERROR_INVALID_IMAGE},
      {"PTX with a syntax error", kBadPtx, CUDA_ERROR_INVALID_PTX},
  };
  for (auto& c : bad) {
    INFO(c.what);
    CUmodule m = sentinel<CUmodule>();
    CHECK_CU(cuModuleLoadData(&m, c.image), c.expected);
    CHECK(m == sentinel<CUmodule>());
  }
  CHECK_CU(cuModuleLoadData(nullptr, fatbin().data()), CUDA_ERROR_INVALID_VALUE);
  context_still_works();
}

TEST_CASE("cuModuleLoadFatBinary and cuModuleLoadDataEx with no options", "[module][load]") {
  conformance_primary_ctx();
  CUmodule m = nullptr;
  CHECK_CU(cuModuleLoadFatBinary(&m, fatbin().data()), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  m = sentinel<CUmodule>();
  CHECK_CU(cuModuleLoadFatBinary(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuModuleLoadDataEx(&m, fatbin().data(), 0, nullptr, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  CHECK_CU(cuModuleLoadDataEx(&m, ptx().data(), 0, nullptr, nullptr), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_CASE("cuModuleLoad reads a file; a missing one is CUDA_ERROR_FILE_NOT_FOUND", "[module][load]") {
  conformance_primary_ctx();
  CUmodule m = nullptr;
  CHECK_CU(cuModuleLoad(&m, CONF_MODULE_FATBIN), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  CHECK_CU(cuModuleLoad(&m, CONF_MODULE_CUBIN_SM90), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  CHECK_CU(cuModuleLoad(&m, CONF_MODULE_PTX), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  m = sentinel<CUmodule>();
  CHECK_CU(cuModuleLoad(&m, CONF_MODULE_CUBIN_SM100), CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK_CU(cuModuleLoad(&m, "/nonexistent/dir/kernels.fatbin"), CUDA_ERROR_FILE_NOT_FOUND);
  CHECK(m == sentinel<CUmodule>());
  CHECK_CU(cuModuleLoad(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuModuleUnload: once, then the handle is gone; NULL is refused", "[module][load]") {
  conformance_primary_ctx();
  CUmodule m = nullptr;
  REQUIRE_CU(cuModuleLoadData(&m, fatbin().data()), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  CHECK_CU(cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuModuleUnload(nullptr), CUDA_ERROR_INVALID_HANDLE);
}

// ---- module contents ------------------------------------------------------------------------

TEST_CASE("cuModuleGetFunction finds kernels by their image names", "[module][function]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  for (const char* n : kAll) {
    INFO(n);
    CUfunction f = nullptr;
    CHECK_CU(cuModuleGetFunction(&f, mod.m, n), CUDA_SUCCESS);
    CHECK(fname(f) == n);
  }
  // A name the module lacks clears the output; invalid arguments leave it.
  for (const char* missing : {"no_such_kernel", "k_plain" /* not demangled */, "dvar"}) {
    INFO(missing);
    CUfunction f = sentinel<CUfunction>();
    CHECK_CU(cuModuleGetFunction(&f, mod.m, missing), CUDA_ERROR_NOT_FOUND);
    CHECK(f == nullptr);
  }
  CUfunction f = sentinel<CUfunction>();
  CHECK_CU(cuModuleGetFunction(&f, mod.m, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK(f == sentinel<CUfunction>());
  CHECK_CU(cuModuleGetFunction(&f, mod.m, ""), CUDA_ERROR_INVALID_VALUE);
  CHECK(f == sentinel<CUfunction>());
  CHECK_CU(cuModuleGetFunction(nullptr, mod.m, kExternC), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuModuleGetFunction(&f, nullptr, kExternC), CUDA_ERROR_INVALID_HANDLE);
  CHECK(f == sentinel<CUfunction>());
  CUfunction a = nullptr, b = nullptr;
  CHECK_CU(cuModuleGetFunction(&a, mod.m, kExternC), CUDA_SUCCESS);
  CHECK_CU(cuModuleGetFunction(&b, mod.m, kExternC), CUDA_SUCCESS);
  CHECK(a == b);
}

TEST_CASE("cuModuleGetFunction on an unloaded module is CUDA_ERROR_INVALID_HANDLE", "[module][function]") {
  conformance_primary_ctx();
  CUmodule m = nullptr;
  REQUIRE_CU(cuModuleLoadData(&m, fatbin().data()), CUDA_SUCCESS);
  REQUIRE_CU(cuModuleUnload(m), CUDA_SUCCESS);
  CUfunction f = sentinel<CUfunction>();
  CHECK_CU(cuModuleGetFunction(&f, m, kExternC), CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("cuModuleGetFunctionCount and cuModuleEnumerateFunctions", "[module][function]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  unsigned count = 0;
  REQUIRE_CU(cuModuleGetFunctionCount(&count, mod.m), CUDA_SUCCESS);
  CHECK(count == 8);
  CHECK_CU(cuModuleGetFunctionCount(nullptr, mod.m), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuModuleGetFunctionCount(&count, nullptr), CUDA_ERROR_INVALID_HANDLE);
  std::vector<CUfunction> fs(count, sentinel<CUfunction>());
  REQUIRE_CU(cuModuleEnumerateFunctions(fs.data(), count, mod.m), CUDA_SUCCESS);
  std::vector<std::string> names;
  for (CUfunction f : fs) names.push_back(fname(f));
  for (const char* n : kAll) CHECK(std::count(names.begin(), names.end(), std::string(n)) == 1);
  // The handles are those cuModuleGetFunction gives.
  CHECK(std::count(fs.begin(), fs.end(), mod.fn(kExternC)) == 1);
  CHECK_CU(cuModuleEnumerateFunctions(nullptr, count, mod.m), CUDA_ERROR_INVALID_VALUE);
  // Fewer slots than functions: the first ones, the rest of the array untouched.
  std::vector<CUfunction> two(3, sentinel<CUfunction>());
  CHECK_CU(cuModuleEnumerateFunctions(two.data(), 2, mod.m), CUDA_SUCCESS);
  CHECK(two[0] == fs[0]);
  CHECK(two[1] == fs[1]);
  CHECK(two[2] == sentinel<CUfunction>());
  // More slots than functions: the functions, the rest untouched.
  std::vector<CUfunction> more(count + 2, sentinel<CUfunction>());
  CHECK_CU(cuModuleEnumerateFunctions(more.data(), count + 2, mod.m), CUDA_SUCCESS);
  CHECK(more[count] == sentinel<CUfunction>());
  CHECK_CU(cuModuleEnumerateFunctions(fs.data(), 2, nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("cuModuleGetLoadingMode", "[module]") {
  conformance_primary_ctx();
  CUmoduleLoadingMode mode = CUmoduleLoadingMode(0);
  CHECK_CU(cuModuleGetLoadingMode(&mode), CUDA_SUCCESS);
  CHECK(mode == CU_MODULE_LAZY_LOADING);
#if !CUDA_SHIM_REAL_BACKEND  // NVIDIA's driver 580 dereferences NULL here (measured)
  CHECK_CU(cuModuleGetLoadingMode(nullptr), CUDA_ERROR_INVALID_VALUE);
#endif
}

TEST_CASE("cuModuleGetGlobal gives each variable's address, size and initial contents", "[module][global]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  CUdeviceptr dvar = 0, cvar = 0, mvar = 0;
  size_t bytes = 0;
  REQUIRE_CU(cuModuleGetGlobal(&dvar, &bytes, mod.m, "dvar"), CUDA_SUCCESS);
  CHECK(bytes == 16);
  REQUIRE_CU(cuModuleGetGlobal(&cvar, &bytes, mod.m, "cvar"), CUDA_SUCCESS);
  CHECK(bytes == 32);
  REQUIRE_CU(cuModuleGetGlobal(&mvar, &bytes, mod.m, "mvar"), CUDA_SUCCESS);
  CHECK(bytes == 4);
  int d[4] = {0};
  CHECK_CU(cuMemcpyDtoH(d, dvar, 16), CUDA_SUCCESS);
  CHECK((d[0] == 1 && d[1] == 2 && d[2] == 3 && d[3] == 4));
  float c[8] = {0};
  CHECK_CU(cuMemcpyDtoH(c, cvar, 32), CUDA_SUCCESS);
  for (int i = 0; i < 8; ++i) CHECK(c[i] == 0.5f + float(i));
  int mv = 0;
  CHECK_CU(cuMemcpyDtoH(&mv, mvar, 4), CUDA_SUCCESS);
  CHECK(mv == 42);
  // Memory types: device memory for __device__ and __constant__, managed for __managed__.
  unsigned type = 0, managed = 7;
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dvar), CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CHECK_CU(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, dvar), CUDA_SUCCESS);
  CHECK(managed == 0);
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cvar), CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, mvar), CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CHECK_CU(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, mvar), CUDA_SUCCESS);
  CHECK(managed == 1);
  // Writable through the driver, __constant__ included.
  int nv[2] = {10, 20};
  CHECK_CU(cuMemcpyHtoD(dvar + 4, nv, 8), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(d, dvar, 16), CUDA_SUCCESS);
  CHECK((d[0] == 1 && d[1] == 10 && d[2] == 20 && d[3] == 4));
  float fv = 9.25f;
  CHECK_CU(cuMemcpyHtoD(cvar, &fv, 4), CUDA_SUCCESS);
  CHECK_CU(cuMemcpyDtoH(c, cvar, 4), CUDA_SUCCESS);
  CHECK(c[0] == 9.25f);
  // A second load of the image has its own variables, with their initial values.
  Module mod2(fatbin().data());
  CUdeviceptr dvar2 = 0;
  REQUIRE_CU(cuModuleGetGlobal(&dvar2, nullptr, mod2.m, "dvar"), CUDA_SUCCESS);
  CHECK(dvar2 != dvar);
  CHECK_CU(cuMemcpyDtoH(d, dvar2, 16), CUDA_SUCCESS);
  CHECK((d[0] == 1 && d[1] == 2 && d[2] == 3 && d[3] == 4));
}

TEST_CASE("cuModuleGetGlobal: unknown names, kernels, optional outputs", "[module][global]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  CUdeviceptr d = 0x5e47e1;
  size_t bytes = 12345;
  // A name that is no variable zeroes both outputs; a kernel's name is CUDA_ERROR_INVALID_VALUE.
  CHECK_CU(cuModuleGetGlobal(&d, &bytes, mod.m, "no_such_var"), CUDA_ERROR_NOT_FOUND);
  CHECK(d == 0);
  CHECK(bytes == 0);
  d = 0x5e47e1, bytes = 12345;
  CHECK_CU(cuModuleGetGlobal(&d, &bytes, mod.m, kExternC), CUDA_ERROR_INVALID_VALUE);
  CHECK(d == 0);
  CHECK(bytes == 0);
  CHECK_CU(cuModuleGetGlobal(&d, &bytes, mod.m, ""), CUDA_ERROR_INVALID_VALUE);
  d = 0x5e47e1, bytes = 12345;
  CHECK_CU(cuModuleGetGlobal(&d, nullptr, mod.m, "dvar"), CUDA_SUCCESS);
  CHECK(d != 0x5e47e1);
  CHECK_CU(cuModuleGetGlobal(nullptr, &bytes, mod.m, "dvar"), CUDA_SUCCESS);
  CHECK(bytes == 16);
  CHECK_CU(cuModuleGetGlobal(nullptr, nullptr, mod.m, "dvar"), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuModuleGetGlobal(&d, &bytes, mod.m, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuModuleGetGlobal(&d, &bytes, nullptr, "dvar"), CUDA_ERROR_INVALID_HANDLE);
}

// ---- functions ---------------------------------------------------------------------------

TEST_CASE("cuFuncGetName, cuFuncGetModule, cuFuncIsLoaded", "[module][function]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  for (const char* n : kAll) {
    INFO(n);
    CUfunction f = mod.fn(n);
    CHECK(fname(f) == n);
    CUmodule fm = nullptr;
    CHECK_CU(cuFuncGetModule(&fm, f), CUDA_SUCCESS);
    CHECK(fm == mod.m);
  }
  const char* name = nullptr;
  CHECK_CU(cuFuncGetName(nullptr, mod.fn(kExternC)), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncGetName(&name, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncGetModule(nullptr, mod.fn(kExternC)), CUDA_ERROR_INVALID_VALUE);
  CUmodule fm = sentinel<CUmodule>();
  CHECK_CU(cuFuncGetModule(&fm, nullptr), CUDA_ERROR_INVALID_VALUE);
  // cuModuleGetFunction loads the function, lazy loading or not.
  CUfunction f = mod.fn(kEmpty);
  CUfunctionLoadingState st = CUfunctionLoadingState(99);
  CHECK_CU(cuFuncIsLoaded(&st, f), CUDA_SUCCESS);
  CHECK(st == CU_FUNCTION_LOADING_STATE_LOADED);
  CHECK_CU(cuFuncLoad(f), CUDA_SUCCESS);
  CHECK_CU(cuFuncIsLoaded(&st, f), CUDA_SUCCESS);
  CHECK(st == CU_FUNCTION_LOADING_STATE_LOADED);
  CHECK_CU(cuFuncIsLoaded(nullptr, f), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncIsLoaded(&st, nullptr), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuFuncLoad(nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("cuFuncGetParamInfo: each parameter's offset and size, then CUDA_ERROR_INVALID_VALUE", "[module][function]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  CUfunction f = mod.fn(kPlain);
  const size_t expect[5][2] = {{0, 1}, {4, 4}, {8, 8}, {16, 24}, {40, 8}};
  for (size_t i = 0; i < 5; ++i) {
    INFO("param " << i);
    size_t off = 777, sz = 777;
    CHECK_CU(cuFuncGetParamInfo(f, i, &off, &sz), CUDA_SUCCESS);
    CHECK(off == expect[i][0]);
    CHECK(sz == expect[i][1]);
  }
  size_t off = 777, sz = 777;
  CHECK_CU(cuFuncGetParamInfo(f, 5, &off, &sz), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncGetParamInfo(f, size_t(1) << 40, &off, &sz), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncGetParamInfo(mod.fn(kEmpty), 0, &off, &sz), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncGetParamInfo(mod.fn(kExternC), 1, &off, &sz), CUDA_SUCCESS);
  CHECK(off == 8);
  CHECK(sz == 4);
  // paramOffset is required, paramSize optional; a NULL function is an invalid value.
  CHECK_CU(cuFuncGetParamInfo(f, 3, nullptr, &sz), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncGetParamInfo(f, 3, &off, nullptr), CUDA_SUCCESS);
  CHECK(off == 16);
  CHECK_CU(cuFuncGetParamInfo(nullptr, 0, &off, &sz), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuFuncGetAttribute: every attribute of every kernel", "[module][function][attribute]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  for (const char* n : kAll) {
    INFO(n);
    CUfunction f = mod.fn(n);
    const bool bounded = !std::strcmp(n, kBounded), shared = !std::strcmp(n, kShared);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == (bounded ? 256 : 1024));
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == (shared ? 4096 : 0));
    // The module's user constant bank (its one 32-byte __constant__ variable), for every kernel.
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES) == 32);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) == 0);
    const int regs = fattr(f, CU_FUNC_ATTRIBUTE_NUM_REGS);  // the compiler's choice
    CHECK(regs > 0);
    CHECK(regs <= 255);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_PTX_VERSION) == 90);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_BINARY_VERSION) == 90);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA) == 0);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == (shared ? 49152 - 4096 : 49152));
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == -1);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET) == 0);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) == 0);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT) == 0);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH) == 0);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) == 0);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE) == 0);
    int v = -7777;
    CHECK_CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, f), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuFuncGetAttribute(&v, CUfunction_attribute(CU_FUNC_ATTRIBUTE_MAX + 1), f), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuFuncGetAttribute(&v, CUfunction_attribute(-1), f), CUDA_ERROR_INVALID_VALUE);
  }
  int v = 0;
  CHECK_CU(cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, mod.fn(kExternC)), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("cuFuncGetAttribute of the cubin's and the PTX's kernels", "[module][function][attribute]") {
  conformance_primary_ctx();
  Module cub(cubin90().data()), p(ptx().data());
  for (const Module* m : {&cub, &p}) {
    CUfunction f = m->fn(kShared);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 4096);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_PTX_VERSION) == 90);
    CHECK(fattr(f, CU_FUNC_ATTRIBUTE_BINARY_VERSION) == 90);
    CHECK(fattr(m->fn(kBounded), CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 256);
  }
}

TEST_CASE("cuFuncSetAttribute: the settable attributes and their limits", "[module][function][attribute]") {
  conformance_primary_ctx();
  Module mod(fatbin().data());
  CUfunction f = mod.fn(kExternC), fs = mod.fn(kShared);
  const auto dyn = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
  CHECK_CU(cuFuncSetAttribute(f, dyn, 0), CUDA_SUCCESS);
  CHECK(fattr(f, dyn) == 0);
  CHECK_CU(cuFuncSetAttribute(f, dyn, 100000), CUDA_SUCCESS);
  CHECK(fattr(f, dyn) == 100000);
  CHECK_CU(cuFuncSetAttribute(f, dyn, 232448), CUDA_SUCCESS);  // the H100's opt-in maximum
  CHECK(fattr(f, dyn) == 232448);
  CHECK_CU(cuFuncSetAttribute(f, dyn, 232449), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncSetAttribute(f, dyn, -1), CUDA_ERROR_INVALID_VALUE);
  CHECK(fattr(f, dyn) == 232448);
  // Static shared memory counts against the maximum.
  CHECK_CU(cuFuncSetAttribute(fs, dyn, 232448 - 4096), CUDA_SUCCESS);
  CHECK_CU(cuFuncSetAttribute(fs, dyn, 232448 - 4095), CUDA_ERROR_INVALID_VALUE);
  const auto carve = CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
  CHECK_CU(cuFuncSetAttribute(f, carve, 50), CUDA_SUCCESS);
  CHECK(fattr(f, carve) == 50);
  CHECK_CU(cuFuncSetAttribute(f, carve, 100), CUDA_SUCCESS);
  CHECK_CU(cuFuncSetAttribute(f, carve, 101), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncSetAttribute(f, carve, -1), CUDA_SUCCESS);
  CHECK_CU(cuFuncSetAttribute(f, carve, -2), CUDA_ERROR_INVALID_VALUE);
  // Read-only attributes.
  CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 128), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 32), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), CUDA_SUCCESS);
  CHECK(fattr(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) == 1);
  CHECK_CU(cuFuncSetAttribute(nullptr, dyn, 0), CUDA_ERROR_INVALID_HANDLE);
  for (int c = 0; c <= 3; ++c) CHECK_CU(cuFuncSetCacheConfig(f, CUfunc_cache(c)), CUDA_SUCCESS);
  CHECK_CU(cuFuncSetCacheConfig(f, CUfunc_cache(4)), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuFuncSetCacheConfig(nullptr, CU_FUNC_CACHE_PREFER_SHARED), CUDA_ERROR_INVALID_HANDLE);
}

// ---- libraries and kernels -----------------------------------------------------------------

TEST_CASE("cuLibraryLoadData takes the images cuModuleLoadData takes, and nvcc's wrapper", "[library][load]") {
  conformance_primary_ctx();
  FatbinWrapper w{0x466243b1, 1, fatbin().data(), nullptr};
  for (const void* image : {static_cast<const void*>(fatbin().data()), static_cast<const void*>(cubin90().data()),
                            static_cast<const void*>(ptx().data()), static_cast<const void*>(&w)}) {
    CUlibrary l = nullptr;
    REQUIRE_CU(cuLibraryLoadData(&l, image, nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
    unsigned n = 0;
    CHECK_CU(cuLibraryGetKernelCount(&n, l), CUDA_SUCCESS);
    CHECK(n == 8);
    CHECK_CU(cuLibraryUnload(l), CUDA_SUCCESS);
  }
  CUlibrary l = sentinel<CUlibrary>();
  CHECK_CU(cuLibraryLoadData(&l, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(l == sentinel<CUlibrary>());
  CHECK_CU(cuLibraryLoadData(nullptr, fatbin().data(), nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLibraryLoadFromFile(&l, CONF_MODULE_FATBIN, nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
  CHECK_CU(cuLibraryUnload(l), CUDA_SUCCESS);
#if !CUDA_SHIM_REAL_BACKEND  // NVIDIA's driver 580 crashes on an unloaded library (measured)
  CHECK_CU(cuLibraryUnload(l), CUDA_ERROR_INVALID_HANDLE);
#endif
  CHECK_CU(cuLibraryUnload(nullptr), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuLibraryLoadFromFile(&l, "/nonexistent/dir/kernels.fatbin", nullptr, nullptr, 0, nullptr, nullptr, 0),
           CUDA_ERROR_FILE_NOT_FOUND);
  CHECK_CU(cuLibraryLoadFromFile(&l, "", nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLibraryLoadFromFile(&l, "/", nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_ERROR_OUT_OF_MEMORY);
  CHECK_CU(cuLibraryLoadFromFile(&l, "/dev/null", nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_ERROR_INVALID_IMAGE);
  CUmodule m = sentinel<CUmodule>();
  CHECK_CU(cuModuleLoad(&m, "/"), CUDA_ERROR_OUT_OF_MEMORY);
  CHECK_CU(cuModuleLoad(&m, ""), CUDA_ERROR_INVALID_VALUE);
  CHECK(m == sentinel<CUmodule>());
}

TEST_CASE("cuLibraryLoadData defers an unusable image's error to the library's first use", "[library][load]") {
  conformance_primary_ctx();
  struct {
    const char* what;
    const void* image;
    CUresult expected;
  } cases[] = {{"cubin sm_100", cubin100().data(), CUDA_ERROR_NO_BINARY_FOR_GPU},
               {"empty string", "", CUDA_ERROR_INVALID_IMAGE},
               {"PTX with a syntax error", kBadPtx, CUDA_ERROR_INVALID_PTX}};
  for (auto& c : cases) {
    INFO(c.what);
    CUlibrary l = nullptr;
    REQUIRE_CU(cuLibraryLoadData(&l, c.image, nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
    CUkernel k = sentinel<CUkernel>();
    CHECK_CU(cuLibraryGetKernel(&k, l, kExternC), c.expected);
    CHECK(k == sentinel<CUkernel>());
    CUmodule m = sentinel<CUmodule>();
    CHECK_CU(cuLibraryGetModule(&m, l), c.expected);
    CHECK(m == sentinel<CUmodule>());
    CUdeviceptr d = 0x5e47e1;
    size_t bytes = 12345;
    CHECK_CU(cuLibraryGetGlobal(&d, &bytes, l, "dvar"), c.expected);
    CHECK_CU(cuLibraryGetManaged(&d, &bytes, l, "mvar"), c.expected);
    CHECK(d == 0x5e47e1);
    CHECK(bytes == 12345);
    CHECK_CU(cuLibraryUnload(l), CUDA_SUCCESS);
  }
  context_still_works();
}

TEST_CASE("cuLibraryGetKernel, cuLibraryGetKernelCount, cuLibraryEnumerateKernels", "[library][kernel]") {
  conformance_primary_ctx();
  Library lib(fatbin().data());
  for (const char* n : kAll) {
    INFO(n);
    CHECK(kname(lib.kernel(n)) == n);
  }
  CUkernel k = sentinel<CUkernel>();
  CHECK_CU(cuLibraryGetKernel(&k, lib.l, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
  CHECK_CU(cuLibraryGetKernel(&k, lib.l, "dvar"), CUDA_ERROR_NOT_FOUND);
  CHECK_CU(cuLibraryGetKernel(&k, lib.l, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLibraryGetKernel(nullptr, lib.l, kExternC), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLibraryGetKernel(&k, nullptr, kExternC), CUDA_ERROR_INVALID_HANDLE);
  CHECK(k == sentinel<CUkernel>());
  CHECK(lib.kernel(kExternC) == lib.kernel(kExternC));
  unsigned count = 0;
  REQUIRE_CU(cuLibraryGetKernelCount(&count, lib.l), CUDA_SUCCESS);
  CHECK(count == 8);
  CHECK_CU(cuLibraryGetKernelCount(nullptr, lib.l), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLibraryGetKernelCount(&count, nullptr), CUDA_ERROR_INVALID_HANDLE);
  std::vector<CUkernel> ks(count);
  REQUIRE_CU(cuLibraryEnumerateKernels(ks.data(), count, lib.l), CUDA_SUCCESS);
  std::vector<std::string> names;
  for (CUkernel x : ks) names.push_back(kname(x));
  for (const char* n : kAll) CHECK(std::count(names.begin(), names.end(), std::string(n)) == 1);
  CHECK(std::count(ks.begin(), ks.end(), lib.kernel(kExternC)) == 1);
  CHECK_CU(cuLibraryEnumerateKernels(nullptr, count, lib.l), CUDA_ERROR_INVALID_VALUE);
  // Fewer slots than kernels: the first ones, the rest untouched. The driver lists a library's
  // kernels last one of the image first (the module lists them in image order).
  std::vector<CUkernel> two(3, sentinel<CUkernel>());
  CHECK_CU(cuLibraryEnumerateKernels(two.data(), 2, lib.l), CUDA_SUCCESS);
  CHECK(two[0] == ks[0]);
  CHECK(two[1] == ks[1]);
  CHECK(two[2] == sentinel<CUkernel>());
  CHECK(kname(ks[0]) == kEmpty);
  CHECK(kname(ks[count - 1]) == kPlain);
  CHECK_CU(cuLibraryEnumerateKernels(ks.data(), 2, nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("a library without a current context: what needs one and what does not", "[library][context]") {
  conformance_primary_ctx();
  // A thread of its own has no current context (NVIDIA's runtime asks for managed variables
  // before it makes one current).
  std::thread([] {
    CUlibrary l = nullptr;
    REQUIRE_CU(cuLibraryLoadData(&l, fatbin().data(), nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
    unsigned n = 0;
    CHECK_CU(cuLibraryGetKernelCount(&n, l), CUDA_SUCCESS);
    CHECK(n == 8);
    CUkernel k = nullptr;
    REQUIRE_CU(cuLibraryGetKernel(&k, l, kExternC), CUDA_SUCCESS);
    const char* name = nullptr;
    CHECK_CU(cuKernelGetName(&name, k), CUDA_SUCCESS);
    int regs = 0;
    CHECK_CU(cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0), CUDA_SUCCESS);
    CHECK(regs > 0);
    size_t off = 99, sz = 99;
    CHECK_CU(cuKernelGetParamInfo(k, 0, &off, &sz), CUDA_ERROR_INVALID_CONTEXT);
    CUfunction f = sentinel<CUfunction>();
    CHECK_CU(cuKernelGetFunction(&f, k), CUDA_ERROR_INVALID_CONTEXT);
    CHECK(f == sentinel<CUfunction>());
    CUmodule m = sentinel<CUmodule>();
    CHECK_CU(cuLibraryGetModule(&m, l), CUDA_ERROR_INVALID_CONTEXT);
    CUdeviceptr d = 0;
    size_t bytes = 0;
    CHECK_CU(cuLibraryGetGlobal(&d, &bytes, l, "dvar"), CUDA_ERROR_INVALID_CONTEXT);
    // Managed variables need no context.
    CHECK_CU(cuLibraryGetManaged(&d, &bytes, l, "mvar"), CUDA_SUCCESS);
    CHECK(bytes == 4);
    CHECK(d != 0);
    CHECK_CU(cuLibraryUnload(l), CUDA_SUCCESS);
  }).join();
  context_still_works();
}

TEST_CASE("cuLibraryGetModule, cuLibraryGetGlobal, cuLibraryGetManaged", "[library][global]") {
  conformance_primary_ctx();
  Library lib(fatbin().data());
  CUmodule m = nullptr, m2 = nullptr;
  REQUIRE_CU(cuLibraryGetModule(&m, lib.l), CUDA_SUCCESS);
  REQUIRE_CU(cuLibraryGetModule(&m2, lib.l), CUDA_SUCCESS);
  CHECK(m == m2);
  unsigned n = 0;
  CHECK_CU(cuModuleGetFunctionCount(&n, m), CUDA_SUCCESS);
  CHECK(n == 8);
  CHECK_CU(cuLibraryGetModule(nullptr, lib.l), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLibraryGetModule(&m2, nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUdeviceptr d = 0, md = 0;
  size_t bytes = 0;
  REQUIRE_CU(cuLibraryGetGlobal(&d, &bytes, lib.l, "dvar"), CUDA_SUCCESS);
  CHECK(bytes == 16);
  REQUIRE_CU(cuModuleGetGlobal(&md, nullptr, m, "dvar"), CUDA_SUCCESS);
  CHECK(md == d);  // the library's module holds the library's variables
  int v[4] = {0};
  CHECK_CU(cuMemcpyDtoH(v, d, 16), CUDA_SUCCESS);
  CHECK((v[0] == 1 && v[3] == 4));
  CHECK_CU(cuLibraryGetGlobal(&d, &bytes, lib.l, "cvar"), CUDA_SUCCESS);
  CHECK(bytes == 32);
  CHECK_CU(cuLibraryGetGlobal(&d, &bytes, lib.l, "mvar"), CUDA_SUCCESS);
  CHECK(bytes == 4);
  d = 0x5e47e1;
  CHECK_CU(cuLibraryGetGlobal(&d, &bytes, lib.l, "no_such_var"), CUDA_ERROR_NOT_FOUND);
  CHECK_CU(cuLibraryGetGlobal(&d, &bytes, lib.l, kExternC), CUDA_ERROR_INVALID_VALUE);  // a kernel
  CHECK(d == 0x5e47e1);  // unlike cuModuleGetGlobal, the outputs are left as they were
  CHECK_CU(cuLibraryGetGlobal(&d, &bytes, lib.l, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLibraryGetGlobal(&d, &bytes, nullptr, "dvar"), CUDA_ERROR_INVALID_HANDLE);
  // Managed variables only.
  CUdeviceptr mp = 0;
  REQUIRE_CU(cuLibraryGetManaged(&mp, &bytes, lib.l, "mvar"), CUDA_SUCCESS);
  CHECK(bytes == 4);
  int mv = 0;
  CHECK_CU(cuMemcpyDtoH(&mv, mp, 4), CUDA_SUCCESS);
  CHECK(mv == 42);
  CHECK_CU(cuLibraryGetManaged(&mp, &bytes, lib.l, "dvar"), CUDA_ERROR_NOT_FOUND);
  CHECK_CU(cuLibraryGetManaged(&mp, &bytes, lib.l, "no_such_var"), CUDA_ERROR_NOT_FOUND);
}

TEST_CASE("cuKernelGetFunction, cuKernelGetName, cuKernelGetLibrary, cuKernelGetParamInfo", "[library][kernel]") {
  conformance_primary_ctx();
  Library lib(fatbin().data());
  CUkernel k = lib.kernel(kExternC), kp = lib.kernel(kPlain);
  CUfunction f = nullptr, f2 = nullptr;
  REQUIRE_CU(cuKernelGetFunction(&f, k), CUDA_SUCCESS);
  REQUIRE_CU(cuKernelGetFunction(&f2, k), CUDA_SUCCESS);
  CHECK(f == f2);
  CHECK(fname(f) == kExternC);
  CUmodule lm = nullptr, fm = nullptr;
  REQUIRE_CU(cuLibraryGetModule(&lm, lib.l), CUDA_SUCCESS);
  CHECK_CU(cuFuncGetModule(&fm, f), CUDA_SUCCESS);
  CHECK(fm == lm);
  CUfunction viamod = nullptr;
  CHECK_CU(cuModuleGetFunction(&viamod, lm, kExternC), CUDA_SUCCESS);
  CHECK(viamod == f);
  CHECK_CU(cuKernelGetFunction(nullptr, k), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuKernelGetFunction(&f, nullptr), CUDA_ERROR_INVALID_HANDLE);
  CHECK(kname(kp) == kPlain);
  const char* n = nullptr;
  CHECK_CU(cuKernelGetName(nullptr, k), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuKernelGetName(&n, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUlibrary kl = nullptr;
  CHECK_CU(cuKernelGetLibrary(&kl, k), CUDA_SUCCESS);
  CHECK(kl == lib.l);
  CHECK_CU(cuKernelGetLibrary(nullptr, k), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuKernelGetLibrary(&kl, nullptr), CUDA_ERROR_INVALID_HANDLE);
  const size_t expect[5][2] = {{0, 1}, {4, 4}, {8, 8}, {16, 24}, {40, 8}};
  for (size_t i = 0; i < 5; ++i) {
    size_t off = 777, sz = 777;
    CHECK_CU(cuKernelGetParamInfo(kp, i, &off, &sz), CUDA_SUCCESS);
    CHECK(off == expect[i][0]);
    CHECK(sz == expect[i][1]);
  }
  size_t off = 777, sz = 777;
  CHECK_CU(cuKernelGetParamInfo(kp, 5, &off, &sz), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuKernelGetParamInfo(nullptr, 0, &off, &sz), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuKernelGetAttribute matches cuFuncGetAttribute; cuKernelSetAttribute reaches the function",
          "[library][kernel][attribute]") {
  conformance_primary_ctx();
  Library lib(fatbin().data());
  CUkernel k = lib.kernel(kExternC);
  CUfunction f = nullptr;
  REQUIRE_CU(cuKernelGetFunction(&f, k), CUDA_SUCCESS);
  for (int a = 0; a < CU_FUNC_ATTRIBUTE_MAX; ++a) {
    INFO("attribute " << a);
    int v = -7777;
    CHECK_CU(cuKernelGetAttribute(&v, CUfunction_attribute(a), k, 0), CUDA_SUCCESS);
    CHECK(v == fattr(f, a));
  }
  int v = -7777;
  CHECK_CU(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, k, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, -1), CUDA_ERROR_INVALID_DEVICE);
  CHECK_CU(cuKernelGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, nullptr, 0), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536, k, 0), CUDA_SUCCESS);
  CHECK_CU(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 0), CUDA_SUCCESS);
  CHECK(v == 65536);
  CHECK(fattr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 65536);
  CHECK_CU(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449, k, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 8, k, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("a CUkernel cast to CUfunction: launches take it, cuFunc* entries do not", "[library][kernel]") {
  conformance_primary_ctx();
  Library lib(fatbin().data());
  CUkernel k = lib.kernel(kExternC);
  CUfunction as_f = reinterpret_cast<CUfunction>(k);
  const char* name = nullptr;
  CHECK_CU(cuFuncGetName(&name, as_f), CUDA_ERROR_INVALID_HANDLE);
  int v = -7777;
  CHECK_CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, as_f), CUDA_ERROR_INVALID_HANDLE);
  CHECK(v == -7777);
  size_t off = 777, sz = 777;
  CHECK_CU(cuFuncGetParamInfo(as_f, 1, &off, &sz), CUDA_ERROR_INVALID_HANDLE);
  CUmodule m = nullptr;
  CHECK_CU(cuFuncGetModule(&m, as_f), CUDA_ERROR_INVALID_HANDLE);
  CUfunctionLoadingState st{};
  CHECK_CU(cuFuncIsLoaded(&st, as_f), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuFuncSetAttribute(as_f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0), CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuFuncSetCacheConfig(as_f, CU_FUNC_CACHE_PREFER_NONE), CUDA_ERROR_INVALID_HANDLE);
}

// ---- launches ------------------------------------------------------------------------------

TEST_CASE("cuLaunchKernel runs a kernel", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1), kLaunched);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
#if CUDA_SHIM_REAL_BACKEND
  CHECK(fx.out0() == 1234);
#endif
  CHECK_CU(fx.launch(1, 1, 1, 1024, 1, 1), kLaunched);
  CHECK_CU(fx.launch(1, 1, 1, 32, 32, 1), kLaunched);
  CHECK_CU(fx.launch(1, 1, 1, 1, 1024, 1), kLaunched);
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 64), kLaunched);
  CHECK_CU(fx.launch(1, 65535, 1, 1, 1, 1), kLaunched);
  CHECK_CU(fx.launch(1, 1, 65535, 1, 1, 1), kLaunched);
  context_still_works();
}

TEST_CASE("cuLaunchKernel checks the launch configuration", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  struct {
    const char* what;
    unsigned g[3], b[3];
    CUresult expected;
  } cases[] = {
      {"block 1025", {1, 1, 1}, {1025, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"block 2048", {1, 1, 1}, {2048, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"block 32x33", {1, 1, 1}, {32, 33, 1}, CUDA_ERROR_INVALID_VALUE},
      {"block y 1025", {1, 1, 1}, {1, 1025, 1}, CUDA_ERROR_INVALID_VALUE},
      {"block z 65", {1, 1, 1}, {1, 1, 65}, CUDA_ERROR_INVALID_VALUE},
      {"block x 0", {1, 1, 1}, {0, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"block y 0", {1, 1, 1}, {1, 0, 1}, CUDA_ERROR_INVALID_VALUE},
      {"block z 0", {1, 1, 1}, {1, 1, 0}, CUDA_ERROR_INVALID_VALUE},
      {"grid x 0", {0, 1, 1}, {1, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"grid y 0", {1, 0, 1}, {1, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"grid z 0", {1, 1, 0}, {1, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"grid y 65536", {1, 65536, 1}, {1, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"grid z 65536", {1, 1, 65536}, {1, 1, 1}, CUDA_ERROR_INVALID_VALUE},
      {"grid x 2^31", {0x80000000u, 1, 1}, {1, 1, 1}, CUDA_ERROR_INVALID_VALUE},
  };
  for (auto& c : cases) {
    INFO(c.what);
    CHECK_CU(fx.launch(c.g[0], c.g[1], c.g[2], c.b[0], c.b[1], c.b[2]), c.expected);
    context_still_works();
  }
}

TEST_CASE("cuLaunchKernel checks dynamic shared memory against the function's maximum", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1, 49152), kLaunched);
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1, 49153), CUDA_ERROR_INVALID_VALUE);
  context_still_works();
  CUfunction fs = fx.mod.fn(kShared);
  void* sargs[] = {&fx.buf};
  CHECK_CU(cuLaunchKernel(fs, 1, 1, 1, 32, 1, 1, 49152 - 4096, nullptr, sargs, nullptr), kLaunched);
  CHECK_CU(cuLaunchKernel(fs, 1, 1, 1, 32, 1, 1, 49152 - 4095, nullptr, sargs, nullptr), CUDA_ERROR_INVALID_VALUE);
  REQUIRE_CU(cuFuncSetAttribute(fx.ext, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536), CUDA_SUCCESS);
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1, 65536), kLaunched);
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1, 65537), CUDA_ERROR_INVALID_VALUE);
  REQUIRE_CU(cuFuncSetAttribute(fx.ext, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448), CUDA_SUCCESS);
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1, 232448), kLaunched);
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1, 232449), CUDA_ERROR_INVALID_VALUE);
  context_still_works();
}

TEST_CASE("cuLaunchKernel: a __launch_bounds__(256) kernel takes at most 256 threads", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CUfunction f = fx.mod.fn(kBounded);
  void* bargs[] = {&fx.buf};
  CHECK_CU(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, nullptr, bargs, nullptr), kLaunched);
  CHECK_CU(cuLaunchKernel(f, 1, 1, 1, 16, 16, 1, 0, nullptr, bargs, nullptr), kLaunched);
  CHECK_CU(cuLaunchKernel(f, 1, 1, 1, 257, 1, 1, 0, nullptr, bargs, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLaunchKernel(f, 1, 1, 1, 512, 1, 1, 0, nullptr, bargs, nullptr), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuLaunchKernel(f, 1, 1, 1, 16, 17, 1, 0, nullptr, bargs, nullptr), CUDA_ERROR_INVALID_VALUE);
  context_still_works();
}

TEST_CASE("cuLaunchKernel: function handles and parameters", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CHECK_CU(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, fx.args, nullptr), CUDA_ERROR_INVALID_HANDLE);
  context_still_works();
  // A kernel without parameters needs none.
  CHECK_CU(cuLaunchKernel(fx.mod.fn(kEmpty), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), kLaunched);
  // The parameter buffer through `extra`.
  struct {
    CUdeviceptr p;
    int n;
    int pad;
  } pb = {fx.buf, 777, 0};
  size_t pbsz = 12;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_BUFFER_SIZE, &pbsz, CU_LAUNCH_PARAM_END};
  CHECK_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra), kLaunched);
#if CUDA_SHIM_REAL_BACKEND
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(fx.out0() == 777);
#endif
  // Both kernelParams and extra.
  CHECK_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, fx.args, extra), CUDA_ERROR_INVALID_VALUE);
  context_still_works();
  // An `extra` of CU_LAUNCH_PARAM_END alone counts as none.
  void* end_only[] = {CU_LAUNCH_PARAM_END};
  CHECK_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, fx.args, end_only), kLaunched);
  CHECK_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, end_only), CUDA_ERROR_INVALID_VALUE);
  // A buffer shorter than the parameters is taken; a longer one does not fit (k_extern_c's
  // parameters take 12 bytes).
  pbsz = 8;
  CHECK_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra), kLaunched);
  pbsz = 16;
  CHECK_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  pbsz = 12;
  void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pb, CU_LAUNCH_PARAM_END};
  CHECK_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, no_size), CUDA_ERROR_INVALID_VALUE);
#if CUDA_SHIM_REAL_BACKEND
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
#endif
  context_still_works();
  // k_plain with every parameter.
  char c = 1;
  int i = 2;
  double d = 3.0;
  S24 s{};
  s.b = 4;
  s.c[0] = 5;
  void* pargs[] = {&c, &i, &d, &s, &fx.buf};
  CHECK_CU(cuLaunchKernel(fx.mod.fn(kPlain), 1, 1, 1, 1, 1, 1, 0, nullptr, pargs, nullptr), kLaunched);
#if CUDA_SHIM_REAL_BACKEND
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(fx.out0() == 15);
#endif
}

TEST_CASE("cuLaunchKernel takes a CUkernel as its function", "[launch][library]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  Library lib(fatbin().data());
  CUkernel k = lib.kernel(kExternC);
  CHECK_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 1, 1, 1, 0, nullptr, fx.args, nullptr), kLaunched);
  CHECK_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 2048, 1, 1, 0, nullptr, fx.args, nullptr),
           CUDA_ERROR_INVALID_VALUE);
#if CUDA_SHIM_REAL_BACKEND
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(fx.out0() == 1234);
#endif
  context_still_works();
}

TEST_CASE("cuLaunchKernel without a current context is CUDA_ERROR_INVALID_CONTEXT", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CUresult r = CUDA_SUCCESS;
  std::thread([&] { r = cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, fx.args, nullptr); }).join();
  CHECK_CU(r, CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("cuLaunchKernelEx with a cluster dimension", "[launch][cluster]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  auto ex = [&](unsigned gx, unsigned bx, unsigned cx, bool with_attr) {
    CUlaunchAttribute at[1] = {};
    at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[0].value.clusterDim.x = cx;
    at[0].value.clusterDim.y = 1;
    at[0].value.clusterDim.z = 1;
    CUlaunchConfig cfg{};
    cfg.gridDimX = gx;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = bx;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.attrs = with_attr ? at : nullptr;
    cfg.numAttrs = with_attr ? 1 : 0;
    return cuLaunchKernelEx(&cfg, fx.ext, fx.args, nullptr);
  };
  CHECK_CU(ex(1, 1, 0, false), kLaunched);
  CHECK_CU(ex(4, 32, 2, true), kLaunched);
  CHECK_CU(ex(8, 32, 8, true), kLaunched);
  CHECK_CU(ex(1, 1, 1, true), kLaunched);
  CHECK_CU(ex(3, 32, 2, true), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  CHECK_CU(ex(16, 32, 16, true), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  CHECK_CU(ex(1, 32, 0, true), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  CHECK_CU(ex(0, 32, 2, true), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(ex(2, 2048, 2, true), CUDA_ERROR_INVALID_VALUE);
  context_still_works();
  REQUIRE_CU(cuFuncSetAttribute(fx.ext, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), CUDA_SUCCESS);
  CHECK_CU(ex(16, 32, 16, true), kLaunched);
  CHECK_CU(ex(32, 32, 32, true), CUDA_ERROR_INVALID_CLUSTER_SIZE);  // 16 at most on an H100
  CHECK_CU(cuLaunchKernelEx(nullptr, fx.ext, fx.args, nullptr), CUDA_ERROR_INVALID_VALUE);
  context_still_works();
}
