// Launches: cuLaunchKernel and cuLaunchKernelEx, their configuration, shared memory, function
// handles and parameters, a CUkernel as the function, clusters. The images are module_kernels.cu
// built by nvcc (tests/CMakeLists.txt). Modules and functions: test_module.cpp; libraries and
// kernels: test_module_library.cpp.
// Expected codes and outputs are those NVIDIA's driver gave on an H100 (driver 580, CUDA 13.0)
// and an H200: tools/probe/module/, output in probe_module.h200.txt;
// tools/probe/run_module_probe.sh runs this test against the real driver too.
// Launches that run a kernel succeed on both drivers, and what the kernel wrote is checked: the
// emulator runs the fat binary's PTX (emu/exec/).
#include <chrono>
#include <thread>
#include <vector>

#include "module_common.hpp"

// ---- launches ------------------------------------------------------------------------------

TEST_CASE("cuLaunchKernel runs a kernel", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CHECK_CU(fx.launch(1, 1, 1, 1, 1, 1), kLaunched);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(fx.out0() == 1234);
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
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(fx.out0() == 777);
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
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
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
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(fx.out0() == 15);
}

TEST_CASE("cuLaunchKernel takes a CUkernel as its function", "[launch][library]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  Library lib(fatbin().data());
  CUkernel k = lib.kernel(kExternC);
  CHECK_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 1, 1, 1, 0, nullptr, fx.args, nullptr), kLaunched);
  CHECK_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 2048, 1, 1, 0, nullptr, fx.args, nullptr),
           CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  CHECK(fx.out0() == 1234);
  context_still_works();
}

TEST_CASE("cuLaunchKernel without a current context is CUDA_ERROR_INVALID_CONTEXT", "[launch]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CUresult r = CUDA_SUCCESS;
  std::thread([&] { r = cuLaunchKernel(fx.ext, 1, 1, 1, 1, 1, 1, 0, nullptr, fx.args, nullptr); }).join();
  CHECK_CU(r, CUDA_ERROR_INVALID_CONTEXT);
}

// cuMemFree, cuMemFreeHost and cuMemHostUnregister wait for the work in flight before the memory
// goes (cudaFree synchronizes): a kernel queued behind a slow host function still finds its
// buffer. CuPy frees an array right after the launch that fills it (TestAllocatorDisabled).
namespace {
void CUDA_CB sleep_50ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }
}  // namespace

TEST_CASE("cuMemFree of a buffer a queued kernel writes waits for that kernel", "[launch][free]") {
  conformance_primary_ctx();
  LaunchFixture fx;
  CUstream s = nullptr;
  REQUIRE_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  for (int kind = 0; kind < 3; ++kind) {
    INFO("buffer kind " << kind << " (0 cuMemAlloc, 1 cuMemAllocHost, 2 cuMemHostRegister)");
    CUdeviceptr dst = 0;
    void* host = nullptr;
    std::vector<char> plain(4096);
    if (kind == 0) REQUIRE_CU(cuMemAlloc(&dst, 4096), CUDA_SUCCESS);
    if (kind == 1) REQUIRE_CU(cuMemAllocHost(&host, 4096), CUDA_SUCCESS);
    if (kind == 2) {
      host = plain.data();
      REQUIRE_CU(cuMemHostRegister(host, 4096, 0), CUDA_SUCCESS);
    }
    if (host) dst = reinterpret_cast<CUdeviceptr>(host);
    int n = 77 + kind;
    void* args[2] = {&dst, &n};
    REQUIRE_CU(cuLaunchHostFunc(s, sleep_50ms, nullptr), CUDA_SUCCESS);
    REQUIRE_CU(cuLaunchKernel(fx.ext, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr), kLaunched);
    if (kind == 0) CHECK_CU(cuMemFree(dst), CUDA_SUCCESS);
    if (kind == 1) CHECK_CU(cuMemFreeHost(host), CUDA_SUCCESS);
    if (kind == 2) {
      CHECK_CU(cuMemHostUnregister(host), CUDA_SUCCESS);
      CHECK(*reinterpret_cast<int*>(host) == n);
    }
    CHECK_CU(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK_CU(cuCtxSynchronize(), CUDA_SUCCESS);
  }
  CHECK_CU(cuStreamDestroy(s), CUDA_SUCCESS);
  context_still_works();
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
