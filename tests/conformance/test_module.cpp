// Modules and functions: cuModuleLoad*, cuModuleGet*, cuFunc*. The images are module_kernels.cu
// built by nvcc (tests/CMakeLists.txt): a fat binary (sm_90 code + compute_90 PTX), an sm_90
// cubin, an sm_100 cubin and PTX. Libraries and kernels (cuLibrary*, cuKernel*):
// test_module_library.cpp; launches (cuLaunchKernel[Ex]): test_module_launch.cpp.
// Expected codes and outputs are those NVIDIA's driver gave on an H100 (driver 580, CUDA 13.0)
// and an H200: tools/probe/module/, output in probe_module.h200.txt;
// tools/probe/run_module_probe.sh runs this test against the real driver too.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "module_common.hpp"

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

// The JIT's info log (measured on an H200): a successful load writes an empty string and reports
// 0 bytes, whatever the buffer held before.
TEST_CASE("cuModuleLoadDataEx: CU_JIT_INFO_LOG_BUFFER gets an empty string and a size of 0", "[module][jit]") {
  conformance_primary_ctx();
  char log[64];
  std::memset(log, 'x', sizeof log);
  CUjit_option o[2] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* v[2] = {log, reinterpret_cast<void*>(uintptr_t{sizeof log})};
  const char* ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
  CUmodule m = nullptr;
  REQUIRE_CU(cuModuleLoadDataEx(&m, ptx, 2, o, v), CUDA_SUCCESS);
  CHECK(log[0] == '\0');
  CHECK(reinterpret_cast<uintptr_t>(v[1]) == 0);
  CHECK(log[1] == 'x');  // only the terminator is written
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
}

// A PTX kernel's registers, and a JIT register limit (CU_JIT_MAX_REGISTERS) at load and at link.
// NVIDIA's driver reports ptxas's count (an H200: 70 for numba-cuda's 20-accumulator test kernel,
// 56 / 38 under limits 57 / 38, 40 linked under 40, 32 when one input asks 32); the emulator
// estimates it (docs/kernels.md, "Attributes"). Either way: many live values, many registers, and
// never more than a limit.
namespace {
std::string accumulators_ptx(int n) {
  std::string s = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry acc(.param .u64 out, .param .u32 k)\n{\n";
  s += ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .f64 %fd<" + std::to_string(n + 2) + ">;\n.reg .b64 %rd<3>;\n";
  auto fd = [](int i) { return "%fd" + std::to_string(i); };
  for (int i = 0; i < n; ++i) s += "cvt.rn.f64.u32 " + fd(i) + ", " + std::to_string(i + 1) + ";\n";
  s += "ld.param.u32 %r1, [k];\nmov.u32 %r2, 0;\n$L_top:\n";
  for (int i = 0; i < n; ++i) s += "fma.rn.f64 " + fd(i) + ", " + fd(i) + ", " + fd((i + 1) % n) + ", " + fd((i + 7) % n) + ";\n";
  s += "add.s32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, %r1;\n@%p1 bra $L_top;\nmov.f64 " + fd(n) + ", 0d0000000000000000;\n";
  for (int i = 0; i < n; ++i) s += "add.f64 " + fd(n) + ", " + fd(n) + ", " + fd(i) + ";\n";
  s += "ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nst.global.f64 [%rd2], " + fd(n) + ";\nret;\n}\n";
  return s;
}
int regs_loaded(const std::string& ptx, int max_regs) {
  CUjit_option o[1] = {CU_JIT_MAX_REGISTERS};
  void* v[1] = {reinterpret_cast<void*>(static_cast<uintptr_t>(max_regs))};
  CUmodule m = nullptr;
  REQUIRE_CU(cuModuleLoadDataEx(&m, ptx.c_str(), max_regs ? 1 : 0, max_regs ? o : nullptr, max_regs ? v : nullptr),
             CUDA_SUCCESS);
  CUfunction f = nullptr;
  REQUIRE_CU(cuModuleGetFunction(&f, m, "acc"), CUDA_SUCCESS);
  int n = fattr(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  return n;
}
int regs_linked(const std::string& ptx, int state_limit, int input_limit) {
  CUjit_option o[1] = {CU_JIT_MAX_REGISTERS};
  void* sv[1] = {reinterpret_cast<void*>(static_cast<uintptr_t>(state_limit))};
  void* iv[1] = {reinterpret_cast<void*>(static_cast<uintptr_t>(input_limit))};
  CUlinkState ls = nullptr;
  REQUIRE_CU(cuLinkCreate(state_limit ? 1 : 0, state_limit ? o : nullptr, state_limit ? sv : nullptr, &ls), CUDA_SUCCESS);
  REQUIRE_CU(cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1, "acc", input_limit ? 1 : 0,
                           input_limit ? o : nullptr, input_limit ? iv : nullptr), CUDA_SUCCESS);
  void* img = nullptr;
  size_t size = 0;
  REQUIRE_CU(cuLinkComplete(ls, &img, &size), CUDA_SUCCESS);
  CUmodule m = nullptr;
  REQUIRE_CU(cuModuleLoadData(&m, img), CUDA_SUCCESS);
  CUfunction f = nullptr;
  REQUIRE_CU(cuModuleGetFunction(&f, m, "acc"), CUDA_SUCCESS);
  int n = fattr(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
  CHECK_CU(cuModuleUnload(m), CUDA_SUCCESS);
  CHECK_CU(cuLinkDestroy(ls), CUDA_SUCCESS);
  return n;
}
}  // namespace

TEST_CASE("CU_FUNC_ATTRIBUTE_NUM_REGS of PTX kernels, and CU_JIT_MAX_REGISTERS", "[module][function][attribute][jit]") {
  conformance_primary_ctx();
  const std::string many = accumulators_ptx(32), few = accumulators_ptx(2);
  const int unlimited = regs_loaded(many, 0);
  INFO("32 live f64 values: " << unlimited << " registers");
  CHECK(unlimited > 64);
  CHECK(unlimited <= 255);
  CHECK(regs_loaded(few, 0) < 32);
  CHECK(regs_loaded(many, 57) <= 57);
  CHECK(regs_loaded(many, 40) <= 40);
  CHECK(regs_loaded(many, 40) >= 32);
  CHECK(regs_linked(many, 0, 0) > 64);
  CHECK(regs_linked(many, 40, 0) <= 40);
  CHECK(regs_linked(many, 0, 32) <= 32);
  // The block size a launch may use is the device's for a PTX kernel here (an estimate never
  // refuses a launch); NVIDIA's narrows it by ptxas's count: at most 1024 either way.
  Module p(few.c_str());
  CHECK(fattr(p.fn("acc"), CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) <= 1024);
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
