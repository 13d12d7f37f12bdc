// libFuzzer harness for device code images: the bytes are a file (fat binary, cubin, PTX or
// anything) that cuModuleLoad and cuLibraryLoadFromFile read; what loads is looked into
// (functions, attributes, parameters, variables), launched under the policy and unloaded. The
// file form gives the parser the image's size: cuModuleLoadData has none, so a damaged
// in-memory image may be read past its end, on NVIDIA's driver as here.
// After each input: every failure is a code the entry may give, with its explanation, and no
// module, library or device memory is left behind.
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda.h"
#include "cuda_shim_ext.h"

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_image: invariant broken: %s: %s\n", what, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

// What the driver 580 answers for images (tools/probe/probe_module.h200.txt); NOT_SUPPORTED is
// the launch policy's refusal.
constexpr CUresult kAllowed[] = {CUDA_ERROR_INVALID_VALUE,          CUDA_ERROR_INVALID_HANDLE,
                                 CUDA_ERROR_OUT_OF_MEMORY,          CUDA_ERROR_NOT_FOUND,
                                 CUDA_ERROR_NOT_SUPPORTED,          CUDA_ERROR_INVALID_IMAGE,
                                 CUDA_ERROR_NO_BINARY_FOR_GPU,      CUDA_ERROR_INVALID_PTX,
                                 CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                                 CUDA_ERROR_INVALID_CLUSTER_SIZE};

void check(const char* api, CUresult r) {
  if (r == CUDA_SUCCESS) return;
  if (std::find(std::begin(kAllowed), std::end(kAllowed), r) == std::end(kAllowed))
    die(api, "returned " + std::to_string(r) + ", not a code it may return");
  if (cuShimGetLastExplanationCode() != static_cast<int>(r)) die(api, "failed without an explanation");
}

size_t device_bytes_used() {
  size_t free = 0, total = 0;
  if (cuMemGetInfo(&free, &total) != CUDA_SUCCESS) die("cuMemGetInfo", "failed");
  return total - free;
}

CUcontext g_ctx = nullptr;

void look_into(CUmodule m, FuzzedDataProvider& in) {
  unsigned n = 0;
  check("cuModuleGetFunctionCount", cuModuleGetFunctionCount(&n, m));
  std::vector<CUfunction> fs(n);
  if (n) check("cuModuleEnumerateFunctions", cuModuleEnumerateFunctions(fs.data(), n, m));
  for (CUfunction f : fs) {
    int v = 0;
    check("cuFuncGetAttribute", cuFuncGetAttribute(&v, static_cast<CUfunction_attribute>(in.ConsumeIntegralInRange(0, 16)), f));
    size_t off = 0, sz = 0;
    check("cuFuncGetParamInfo", cuFuncGetParamInfo(f, in.ConsumeIntegralInRange(0, 4), &off, &sz));
    const char* name = nullptr;
    check("cuFuncGetName", cuFuncGetName(&name, f));
    if (!name) die("cuFuncGetName", "no name");
    void* args[8];
    unsigned char buf[8][64] = {};
    for (int i = 0; i < 8; ++i) args[i] = buf[i];
    check("cuLaunchKernel", cuLaunchKernel(f, in.ConsumeIntegralInRange(0, 3), 1, 1, in.ConsumeIntegralInRange(0, 1100), 1, 1,
                                           in.ConsumeIntegralInRange(0, 70000), nullptr, args, nullptr));
  }
  CUdeviceptr d = 0;
  size_t bytes = 0;
  check("cuModuleGetGlobal", cuModuleGetGlobal(&d, &bytes, m, in.ConsumeRandomLengthString(8).c_str()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!g_ctx) {
    // Images, not kernels, are what this harness reads: a launch completes in stream order
    // without running (a fuzzed kernel that faults would leave the context unusable for the
    // inputs after it; the kernel engine has its own harness).
    setenv("CUDA_SHIM_KERNELS", "skip", 0);
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&g_ctx, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(g_ctx) != CUDA_SUCCESS)
      die("setup", "no context");
  }
  FuzzedDataProvider in(data, size);
  // A prefix that gets past the first check of each reader, then the fuzzer's bytes.
  static const unsigned char kFatbin[] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0};
  static const unsigned char kElf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41};
  static const char kPtx[] = ".version 9.0\n.target sm_90\n.address_size 64\n";
  std::string img;
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: img.assign(reinterpret_cast<const char*>(kFatbin), sizeof kFatbin); break;
    case 1: img.assign(reinterpret_cast<const char*>(kElf), sizeof kElf); break;
    case 2: img.assign(kPtx); break;
    default: break;
  }
  const bool as_library = in.ConsumeBool();
  const size_t tail = in.ConsumeIntegralInRange<size_t>(0, in.remaining_bytes());
  img += in.ConsumeBytesAsString(tail);
  const size_t used = device_bytes_used();
  int fd = memfd_create("fuzz-image", MFD_CLOEXEC);
  if (fd < 0) die("memfd_create", "failed");
  if (!img.empty() && ::write(fd, img.data(), img.size()) != static_cast<ssize_t>(img.size())) die("write", "short");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (!as_library) {
    CUmodule m = nullptr;
    CUresult r = cuModuleLoad(&m, path.c_str());
    check("cuModuleLoad", r);
    if (r == CUDA_SUCCESS) {
      look_into(m, in);
      check("cuModuleUnload", cuModuleUnload(m));
    }
  } else {
    CUlibrary l = nullptr;
    CUresult r = cuLibraryLoadFromFile(&l, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    check("cuLibraryLoadFromFile", r);
    if (r == CUDA_SUCCESS) {
      CUmodule m = nullptr;
      r = cuLibraryGetModule(&m, l);
      check("cuLibraryGetModule", r);
      if (r == CUDA_SUCCESS) look_into(m, in);
      CUdeviceptr d = 0;
      size_t bytes = 0;
      check("cuLibraryGetManaged", cuLibraryGetManaged(&d, &bytes, l, in.ConsumeRandomLengthString(8).c_str()));
      check("cuLibraryUnload", cuLibraryUnload(l));
    }
  }
  ::close(fd);
  if (cuCtxSynchronize() != CUDA_SUCCESS) die("cuCtxSynchronize", "failed");
  if (device_bytes_used() != used) die("unload", "device memory of the image's variables was not given back");
  return 0;
}
