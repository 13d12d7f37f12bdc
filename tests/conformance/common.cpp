#include <dirent.h>
#include <unistd.h>
#include "common.hpp"
#include "multiprocess.hpp"

#include <string>

const char* cu_name(CUresult r) {
  const char* s = nullptr;
  if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) {
    static thread_local std::string buf;
    buf = "CUresult(" + std::to_string(static_cast<int>(r)) + ")";
    return buf.c_str();
  }
  return s;
}

const char* rt_name(cudaError_t e) { return cudaGetErrorName(e); }

CUcontext conformance_primary_ctx() {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUdevice dev = 0;
  REQUIRE(cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
  return ctx;
}

CUcontext child_primary_ctx(int ordinal) {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
    _exit(99);
  return ctx;
}

// A process that uses device memory: receives a byte count, allocates it on device 0 (in its
// primary context), answers 0 (1 when the allocation fails), and holds it until the parent sends
// anything or closes the channel. For tests of what other processes see (memory info, NVML).
MP_CHILD(device_memory_holder) {
  child_primary_ctx();
  const auto bytes = static_cast<size_t>(ch.recv_int());
  CUdeviceptr p = 0;
  if (cuMemAlloc(&p, bytes) != CUDA_SUCCESS) {
    ch.send_int(1);
    return 1;
  }
  ch.send_int(0);
  ch.recv_int();  // until the parent says so (or EOF)
  cuMemFree(p);
  return 0;
}

size_t open_fds() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}
