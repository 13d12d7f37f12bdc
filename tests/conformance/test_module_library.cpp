// Libraries and kernels: cuLibrary*, cuKernel*, and a CUkernel where a CUfunction goes. The
// images are module_kernels.cu built by nvcc (tests/CMakeLists.txt): a fat binary (sm_90 code +
// compute_90 PTX), an sm_90 cubin, an sm_100 cubin and PTX. Modules and functions:
// test_module.cpp; launches: test_module_launch.cpp.
// Expected codes and outputs are those NVIDIA's driver gave on an H100 (driver 580, CUDA 13.0)
// and an H200: tools/probe/module/, output in probe_module.h200.txt;
// tools/probe/run_module_probe.sh runs this test against the real driver too.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "module_common.hpp"

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
