// Emulator-only behaviour of emulated memory: interior-pointer lookup, lazily backed
// device memory, device pointers that fault on host access, and explanations.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_shim_ext.h>

#include <catch2/catch.hpp>

namespace {

void primary() {
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  CUcontext ctx = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS);
  REQUIRE(cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
}

std::string explanation() {
  char buf[1024] = {};
  cuShimGetLastExplanation(buf, sizeof buf);
  return buf;
}

// Resident set size of this process, in bytes.
size_t rss() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("every interior pointer of an allocation resolves to it") {
  primary();
  std::vector<CUdeviceptr> ps;
  for (size_t n : {1, 100, 4096, 65537}) {
    CUdeviceptr p = 0;
    REQUIRE(cuMemAlloc(&p, n) == CUDA_SUCCESS);
    ps.push_back(p);
    for (size_t off : {size_t(0), n / 2, n - 1}) {
      CUdeviceptr base = 0;
      size_t size = 0;
      REQUIRE(cuMemGetAddressRange(&base, &size, p + off) == CUDA_SUCCESS);
      CHECK(base == p);
      CHECK(size == n);
    }
    CUdeviceptr base = 0;
    CHECK(cuMemGetAddressRange(&base, nullptr, p + n) == CUDA_ERROR_NOT_FOUND);
  }
  for (auto p : ps) CHECK(cuMemFree(p) == CUDA_SUCCESS);
}

TEST_CASE("a 100 GiB device allocation costs nothing until it is touched") {
  primary();
  const size_t n = size_t(100) << 30;
  size_t free0 = 0, total = 0;
  REQUIRE(cuMemGetInfo(&free0, &total) == CUDA_SUCCESS);
  size_t before = rss();
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, n) == CUDA_SUCCESS);
  size_t free1 = 0;
  REQUIRE(cuMemGetInfo(&free1, &total) == CUDA_SUCCESS);
  CHECK(free0 - free1 == n);
  // Touch the two ends: only those pages become resident.
  CHECK(cuMemsetD8(p, 1, 4096) == CUDA_SUCCESS);
  CHECK(cuMemsetD8(p + n - 4096, 2, 4096) == CUDA_SUCCESS);
  unsigned char b = 0;
  CHECK(cuMemcpyDtoH(&b, p + n - 1, 1) == CUDA_SUCCESS);
  CHECK(b == 2);
  CHECK(rss() < before + (64u << 20));
  CHECK(cuMemFree(p) == CUDA_SUCCESS);
  size_t free2 = 0;
  REQUIRE(cuMemGetInfo(&free2, &total) == CUDA_SUCCESS);
  CHECK(free2 == free0);
}

TEST_CASE("host code that writes through a device pointer crashes, as on a GPU") {
  primary();
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, 4096) == CUDA_SUCCESS);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGSEGV, SIG_DFL);  // not Catch's handler: the parent judges the crash
    *reinterpret_cast<volatile int*>(p) = 1;
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGSEGV);
  CHECK(cuMemFree(p) == CUDA_SUCCESS);
}

TEST_CASE("pinned host memory is directly usable by host code") {
  primary();
  void* h = nullptr;
  REQUIRE(cuMemAllocHost(&h, 1 << 20) == CUDA_SUCCESS);
  std::memset(h, 0x11, 1 << 20);
  CHECK(cuMemsetD8(reinterpret_cast<CUdeviceptr>(h) + 10, 0x22, 1) == CUDA_SUCCESS);
  CHECK(static_cast<unsigned char*>(h)[10] == 0x22);
  CHECK(cuMemFreeHost(h) == CUDA_SUCCESS);
}

TEST_CASE("refused memory calls leave an explanation naming the rule and the object") {
  primary();
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, 64) == CUDA_SUCCESS);
  CHECK(cuMemFree(p + 8) == CUDA_ERROR_INVALID_VALUE);
  CHECK(explanation().find("8 bytes into") != std::string::npos);
  CHECK(cuShimGetLastExplanationCode() == CUDA_ERROR_INVALID_VALUE);
  std::vector<char> host(256);
  CHECK(cuMemcpyHtoD(p, host.data(), 128) == CUDA_ERROR_INVALID_VALUE);
  CHECK(explanation().find("past the end") != std::string::npos);
  CHECK(cuMemFree(p) == CUDA_SUCCESS);
  CHECK(cuMemFree(p) == CUDA_ERROR_INVALID_VALUE);
  CHECK(explanation().find("not a live allocation") != std::string::npos);
  CHECK(cuMemsetD32(p + 2, 0, 1) != CUDA_SUCCESS);
  CHECK(!explanation().empty());
}

TEST_CASE("a copy from an array handle that names no array is refused, with a reason") {
  primary();
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, 64) == CUDA_SUCCESS);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c.srcArray = reinterpret_cast<CUarray>(0x1000);  // a NULL array is INVALID_VALUE, as on the real driver
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = p;
  c.dstPitch = 64;
  c.WidthInBytes = 8;
  c.Height = 1;
  CHECK(cuMemcpy2D(&c) == CUDA_ERROR_INVALID_HANDLE);  // never dereferenced
  CHECK(explanation().find("not a live CUDA array") != std::string::npos);
  CHECK(cuMemFree(p) == CUDA_SUCCESS);
}

TEST_CASE("a copy queued on a stream keeps freed memory mapped until it has run") {
  primary();
  CUstream s = nullptr;
  REQUIRE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  void* h = nullptr;
  REQUIRE(cuMemAllocHost(&h, 4096) == CUDA_SUCCESS);
  std::memset(h, 0x5c, 4096);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, 4096) == CUDA_SUCCESS);
  CHECK(cuMemcpyHtoDAsync(p, h, 4096, s) == CUDA_SUCCESS);
  CHECK(cuMemFree(p) == CUDA_SUCCESS);  // synchronizes; must not crash the worker either way
  CHECK(cuStreamSynchronize(s) == CUDA_SUCCESS);
  CHECK(cuStreamDestroy(s) == CUDA_SUCCESS);
  CHECK(cuMemFreeHost(h) == CUDA_SUCCESS);
}
