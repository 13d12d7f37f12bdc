// Our libnvJitLink.so.13 (emu/nvjitlink/), loaded as cuda.bindings loads it: dlopen from the
// build's lib folder, every entry by dlsym. Result codes are those NVIDIA's nvJitLink 13.0 gives
// for the same calls (measured on it, CPU only), except where the engine's PTX-only linking
// differs (documented in docs/kernels.md, "Linking"). The linked "cubin" must load with
// cuLibraryLoadData and its kernel compute; it is byte for byte what cuLinkComplete makes of the
// same inputs (one joining code for both linkers).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda.h"
#include "nvJitLink.h"

namespace {

// Two inputs: a kernel calling a function the other input defines. out[i] = 2*i + 7.
const char* kKernelPtx = R"(.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 ret) twice_plus7(.param .b32 x);
.visible .entry fill(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  {
  .param .b32 a;
  .param .b32 r;
  st.param.b32 [a], %r5;
  call.uni (r), twice_plus7, (a);
  ld.param.b32 %r6, [r];
  }
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd2, %rd2, %rd3;
  st.global.u32 [%rd2], %r6;
DONE:
  ret;
}
)";

const char* kFuncPtx = R"(.version 8.3
.target sm_90
.address_size 64
.visible .func (.param .b32 ret) twice_plus7(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  shl.b32 %r2, %r1, 1;
  add.s32 %r2, %r2, 7;
  st.param.b32 [ret], %r2;
  ret;
}
)";

struct Api {
  void* lib = nullptr;
  decltype(&nvJitLinkCreate) create = nullptr;
  decltype(&nvJitLinkDestroy) destroy = nullptr;
  decltype(&nvJitLinkAddData) add_data = nullptr;
  decltype(&nvJitLinkAddFile) add_file = nullptr;
  decltype(&nvJitLinkComplete) complete = nullptr;
  decltype(&nvJitLinkGetLinkedCubinSize) cubin_size = nullptr;
  decltype(&nvJitLinkGetLinkedCubin) cubin = nullptr;
  decltype(&nvJitLinkGetLinkedPtxSize) ptx_size = nullptr;
  decltype(&nvJitLinkGetLinkedPtx) ptx = nullptr;
  decltype(&nvJitLinkGetLinkedLTOIRSize) ltoir_size = nullptr;
  decltype(&nvJitLinkGetErrorLogSize) error_log_size = nullptr;
  decltype(&nvJitLinkGetErrorLog) error_log = nullptr;
  decltype(&nvJitLinkGetInfoLogSize) info_log_size = nullptr;
  decltype(&nvJitLinkGetInfoLog) info_log = nullptr;
  decltype(&nvJitLinkVersion) version = nullptr;

  template <class F>
  void get(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    INFO(name);
    REQUIRE(f);
  }
  Api() {
    // -lto hands LTO-IR to NVIDIA's nvJitLink when one is found: here none, for the refusal.
    setenv("CUDA_SHIM_NVJITLINK_LTO", "", 1);
    lib = dlopen(CUDA_SHIM_LIB_DIR "/libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL);
    INFO(dlerror());
    REQUIRE(lib);
    get(create, "nvJitLinkCreate");
    get(destroy, "nvJitLinkDestroy");
    get(add_data, "nvJitLinkAddData");
    get(add_file, "nvJitLinkAddFile");
    get(complete, "nvJitLinkComplete");
    get(cubin_size, "nvJitLinkGetLinkedCubinSize");
    get(cubin, "nvJitLinkGetLinkedCubin");
    get(ptx_size, "nvJitLinkGetLinkedPtxSize");
    get(ptx, "nvJitLinkGetLinkedPtx");
    get(ltoir_size, "nvJitLinkGetLinkedLTOIRSize");
    get(error_log_size, "nvJitLinkGetErrorLogSize");
    get(error_log, "nvJitLinkGetErrorLog");
    get(info_log_size, "nvJitLinkGetInfoLogSize");
    get(info_log, "nvJitLinkGetInfoLog");
    get(version, "nvJitLinkVersion");
  }

  std::string errors(nvJitLinkHandle h) const {
    size_t n = 0;
    if (error_log_size(h, &n) != NVJITLINK_SUCCESS || n == 0) return "";
    std::string s(n, '\0');
    error_log(h, s.data());
    s.resize(n - 1);
    return s;
  }

  nvJitLinkHandle make(std::vector<const char*> options = {"-arch=sm_90"}) const {
    nvJitLinkHandle h = nullptr;
    REQUIRE(create(&h, static_cast<uint32_t>(options.size()), options.data()) == NVJITLINK_SUCCESS);
    REQUIRE(h);
    return h;
  }
};

const Api& api() {
  static Api a;
  return a;
}

void check_cu(CUresult r, const char* what) {
  INFO(what);
  REQUIRE(r == CUDA_SUCCESS);
}

}  // namespace

TEST_CASE("libnvJitLink.so.13 exports the nvJitLink 13 API, plain and versioned", "[nvjitlink]") {
  const Api& a = api();
  unsigned major = 0, minor = 0;
  // 13.0 where NVIDIA's nvJitLink can compile LTO-IR; without it (CUDA_SHIM_NVJITLINK_LTO empty,
  // above) an error, so that numba-cuda leaves link-time optimization off and links PTX.
  CHECK(a.version(&major, &minor) == NVJITLINK_ERROR_INTERNAL);
  CHECK(a.version(nullptr, &minor) == NVJITLINK_ERROR_NULL_INPUT);
  // NVIDIA's header calls the __nvJitLink*_13_0 names; every export sits on node libnvJitLink.so.13.
  for (const char* name : {"__nvJitLinkCreate_13_0", "__nvJitLinkDestroy_13_0", "__nvJitLinkAddData_13_0",
                           "__nvJitLinkAddFile_13_0", "__nvJitLinkComplete_13_0", "__nvJitLinkGetLinkedCubinSize_13_0",
                           "__nvJitLinkGetLinkedCubin_13_0", "__nvJitLinkGetLinkedPtxSize_13_0",
                           "__nvJitLinkGetLinkedPtx_13_0", "__nvJitLinkGetErrorLogSize_13_0",
                           "__nvJitLinkGetErrorLog_13_0", "__nvJitLinkGetInfoLogSize_13_0",
                           "__nvJitLinkGetInfoLog_13_0"}) {
    INFO(name);
    CHECK(dlvsym(a.lib, name, "libnvJitLink.so.13"));
  }
  CHECK(dlvsym(a.lib, "nvJitLinkCreate", "libnvJitLink.so.13"));
  CHECK(dlvsym(a.lib, "nvJitLinkVersion", "libnvJitLink.so.13"));
  CHECK(dlsym(a.lib, "cuShimLinkPtx") == dlsym(RTLD_DEFAULT, "cuShimLinkPtx"));  // from libcuda, not a copy
}

TEST_CASE("nvJitLinkCreate: options and their result codes", "[nvjitlink]") {
  const Api& a = api();
  nvJitLinkHandle h = nullptr;
  const char* arch[] = {"-arch=sm_90"};
  CHECK(a.create(nullptr, 1, arch) == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.create(&h, 0, nullptr) == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(h == nullptr);

  // A refused option still makes the handle, which holds the reason (as NVIDIA's library does).
  auto refused = [&](std::vector<const char*> options, nvJitLinkResult want, const char* in_log) {
    nvJitLinkHandle r = nullptr;
    CHECK(a.create(&r, static_cast<uint32_t>(options.size()), options.data()) == want);
    REQUIRE(r);
    std::string log = a.errors(r);
    INFO(log);
    CHECK(log.find(in_log) != std::string::npos);
    CHECK(a.destroy(&r) == NVJITLINK_SUCCESS);
    CHECK(r == nullptr);
  };
  refused({"-O3"}, NVJITLINK_ERROR_MISSING_ARCH, "-arch");
  refused({"-arch=sm_90", "-bogus"}, NVJITLINK_ERROR_UNRECOGNIZED_OPTION, "-bogus");
  refused({"-arch=foo"}, NVJITLINK_ERROR_UNRECOGNIZED_OPTION, "-arch=foo");
  refused({"-arch=sm_999"}, NVJITLINK_ERROR_UNRECOGNIZED_ARCH, "sm_999");
  refused({"-arch=compute_90"}, NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS, "-ptx");
  refused({"-arch=sm_90", "-lto"}, NVJITLINK_ERROR_INVALID_INPUT, "-lto needs NVIDIA's nvJitLink");

  // What numba-cuda and cuda.core pass is taken.
  h = a.make({"-arch=sm_90", "-O3", "-maxrregcount=64", "-lineinfo", "-verbose", "-ftz=true", "-prec-div=false"});
  CHECK(a.destroy(&h) == NVJITLINK_SUCCESS);
  CHECK(a.destroy(&h) == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.destroy(nullptr) == NVJITLINK_ERROR_NULL_INPUT);
}

TEST_CASE("nvJitLinkAddData / AddFile: inputs it refuses, with a log naming why", "[nvjitlink]") {
  const Api& a = api();
  nvJitLinkHandle h = a.make();
  const size_t n = std::strlen(kFuncPtx);
  CHECK(a.add_data(nullptr, NVJITLINK_INPUT_PTX, kFuncPtx, n, "f") == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.add_data(h, NVJITLINK_INPUT_PTX, nullptr, n, "f") == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.add_data(h, NVJITLINK_INPUT_NONE, kFuncPtx, n, "f") == NVJITLINK_ERROR_INCORRECT_INPUT_TYPE);
  CHECK(a.add_data(h, static_cast<nvJitLinkInputType>(42), kFuncPtx, n, "f") ==
        NVJITLINK_ERROR_INCORRECT_INPUT_TYPE);
  CHECK(a.add_data(h, NVJITLINK_INPUT_PTX, "garbage", 7, "g") == NVJITLINK_ERROR_INCORRECT_INPUT_TYPE);
  CHECK(a.add_data(h, NVJITLINK_INPUT_FATBIN, kFuncPtx, n, "f") == NVJITLINK_ERROR_INCORRECT_INPUT_TYPE);
  // Bytes that are not of the type given (NVIDIA's library checks them too).
  CHECK(a.add_data(h, NVJITLINK_INPUT_LTOIR, kFuncPtx, n, "f") == NVJITLINK_ERROR_INCORRECT_INPUT_TYPE);
  CHECK(a.add_data(h, NVJITLINK_INPUT_CUBIN, kFuncPtx, n, "f") == NVJITLINK_ERROR_INCORRECT_INPUT_TYPE);
  CHECK(a.add_data(h, NVJITLINK_INPUT_LTOIR, "\xed\x43\x4e\x7f....", 8, "lto.ltoir") ==
        NVJITLINK_ERROR_LTO_NOT_ENABLED);
  CHECK(a.add_data(h, NVJITLINK_INPUT_CUBIN, "\x7f" "ELF....", 8, "k.cubin") == NVJITLINK_ERROR_INVALID_INPUT);
  CHECK(a.add_data(h, NVJITLINK_INPUT_LIBRARY, "!<arch>\n", 8, "libcudadevrt.a") == NVJITLINK_ERROR_INVALID_INPUT);
  const char* broken = ".version 8.0\n.target sm_90\n.address_size 64\n.entry k( {\n";
  CHECK(a.add_data(h, NVJITLINK_INPUT_PTX, broken, std::strlen(broken), "broken.ptx") == NVJITLINK_ERROR_PTX_COMPILE);
  CHECK(a.add_file(h, NVJITLINK_INPUT_PTX, "/nonexistent/k.ptx") == NVJITLINK_ERROR_INVALID_INPUT);
  const std::string log = a.errors(h);
  INFO(log);
  CHECK(log.find("unsupported input type: f") != std::string::npos);
  CHECK(log.find("lto.ltoir") != std::string::npos);
  CHECK(log.find("LTO-IR") != std::string::npos);
  CHECK(log.find("k.cubin") != std::string::npos);
  CHECK(log.find("PTX only") != std::string::npos);
  CHECK(log.find("broken.ptx") != std::string::npos);
  CHECK(log.find("no such file: /nonexistent/k.ptx") != std::string::npos);
  CHECK(log.find("'f' does not match its type (NVJITLINK_INPUT_LTOIR)") != std::string::npos);

  // Results before nvJitLinkComplete: NVJITLINK_ERROR_INTERNAL, as NVIDIA's library answers.
  size_t size = 0;
  CHECK(a.cubin_size(h, &size) == NVJITLINK_ERROR_INTERNAL);
  CHECK(a.ptx_size(h, &size) == NVJITLINK_ERROR_INTERNAL);
  CHECK(a.cubin_size(h, nullptr) == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.cubin_size(nullptr, &size) == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.error_log_size(nullptr, &size) == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.error_log_size(h, nullptr) == NVJITLINK_ERROR_NULL_INPUT);
  CHECK(a.ltoir_size(h, &size) == NVJITLINK_ERROR_LTO_NOT_ENABLED);
  CHECK(a.complete(nullptr) == NVJITLINK_ERROR_NULL_INPUT);
  // Nothing was accepted: nothing to link.
  CHECK(a.complete(h) == NVJITLINK_ERROR_INVALID_INPUT);
  CHECK(a.destroy(&h) == NVJITLINK_SUCCESS);
}

TEST_CASE("a linked image loads with cuLibraryLoadData and its kernel computes", "[nvjitlink]") {
  const Api& a = api();
  nvJitLinkHandle h = a.make({"-arch=sm_90", "-verbose"});
  REQUIRE(a.add_data(h, NVJITLINK_INPUT_PTX, kKernelPtx, std::strlen(kKernelPtx), "kernel.ptx") == NVJITLINK_SUCCESS);
  // The second input from a file, typed ANY: recognised as PTX.
  char path[] = "/tmp/cuda-shim-nvjitlink-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  FILE* f = fdopen(fd, "w");
  std::fputs(kFuncPtx, f);
  std::fclose(f);
  CHECK(a.add_file(h, NVJITLINK_INPUT_ANY, path) == NVJITLINK_SUCCESS);
  std::remove(path);
  REQUIRE(a.complete(h) == NVJITLINK_SUCCESS);
  CHECK(a.complete(h) == NVJITLINK_ERROR_INTERNAL);
  CHECK(a.add_data(h, NVJITLINK_INPUT_PTX, kFuncPtx, std::strlen(kFuncPtx), "late") == NVJITLINK_ERROR_INTERNAL);

  size_t ptx_size = 0;
  REQUIRE(a.ptx_size(h, &ptx_size) == NVJITLINK_SUCCESS);
  std::string ptx(ptx_size, '\0');
  REQUIRE(a.ptx(h, ptx.data()) == NVJITLINK_SUCCESS);
  CHECK(ptx.back() == '\0');
  CHECK(ptx.find(".version 8.3") == 0);  // the newest of the inputs'
  CHECK(ptx.find(".entry fill") != std::string::npos);
  CHECK(ptx.find(".visible .func (.param .b32 ret) twice_plus7") != std::string::npos);

  size_t size = 0;
  REQUIRE(a.cubin_size(h, &size) == NVJITLINK_SUCCESS);
  std::vector<unsigned char> image(size);
  REQUIRE(a.cubin(h, image.data()) == NVJITLINK_SUCCESS);
  size_t info_size = 0;
  REQUIRE(a.info_log_size(h, &info_size) == NVJITLINK_SUCCESS);
  std::string info(info_size, '\0');
  REQUIRE(a.info_log(h, info.data()) == NVJITLINK_SUCCESS);
  CHECK(info.find("linked 2 PTX input(s) for sm_90") != std::string::npos);
  CHECK(a.destroy(&h) == NVJITLINK_SUCCESS);

  check_cu(cuInit(0), "cuInit");
  CUdevice dev;
  check_cu(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext ctx;
  check_cu(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check_cu(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");

  // The driver's cuLink* makes the same bytes of the same inputs.
  CUlinkState ls;
  check_cu(cuLinkCreate(0, nullptr, nullptr, &ls), "cuLinkCreate");
  check_cu(cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(kKernelPtx), std::strlen(kKernelPtx), "kernel.ptx", 0,
                         nullptr, nullptr), "cuLinkAddData");
  check_cu(cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(kFuncPtx), std::strlen(kFuncPtx), "func.ptx", 0,
                         nullptr, nullptr), "cuLinkAddData");
  void* driver_image = nullptr;
  size_t driver_size = 0;
  check_cu(cuLinkComplete(ls, &driver_image, &driver_size), "cuLinkComplete");
  int major = 0, minor = 0;
  check_cu(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc major");
  check_cu(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc minor");
  if (major * 10 + minor == 90) {
    REQUIRE(driver_size == image.size());
    CHECK(std::memcmp(driver_image, image.data(), image.size()) == 0);
  }
  check_cu(cuLinkDestroy(ls), "cuLinkDestroy");

  CUlibrary lib;
  check_cu(cuLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), "cuLibraryLoadData");
  CUkernel kernel;
  check_cu(cuLibraryGetKernel(&kernel, lib, "fill"), "cuLibraryGetKernel");
  CUfunction fn;
  check_cu(cuKernelGetFunction(&fn, kernel), "cuKernelGetFunction");
  const unsigned n = 1000;
  CUdeviceptr out;
  check_cu(cuMemAlloc(&out, n * sizeof(unsigned)), "cuMemAlloc");
  check_cu(cuMemsetD32(out, 0xDEADBEEF, n), "cuMemsetD32");
  unsigned count = n - 3;  // the last three stay untouched
  void* params[] = {&out, &count};
  check_cu(cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
  check_cu(cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<unsigned> host(n);
  check_cu(cuMemcpyDtoH(host.data(), out, n * sizeof(unsigned)), "cuMemcpyDtoH");
  unsigned bad = 0;
  for (unsigned i = 0; i < n; ++i) {
    unsigned want = i < count ? 2 * i + 7 : 0xDEADBEEF;
    if (host[i] != want && bad++ < 5) FAIL_CHECK("out[" << i << "] = " << host[i] << ", want " << want);
  }
  CHECK(bad == 0);
  check_cu(cuMemFree(out), "cuMemFree");
  check_cu(cuLibraryUnload(lib), "cuLibraryUnload");
  check_cu(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
}
