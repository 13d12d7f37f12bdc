// Runtime API: error names and strings (exact texts of NVIDIA's libcudart 13.0) and the
// per-thread last-error rules (measured on a real H200, .probe/out/facts.txt).
#include <atomic>
#include <string>
#include <thread>

#include "common.hpp"

namespace {
std::string name(int c) { return cudaGetErrorName(static_cast<cudaError_t>(c)); }
std::string text(int c) { return cudaGetErrorString(static_cast<cudaError_t>(c)); }

int bad_device() {
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  return n + 3;
}
}  // namespace

TEST_CASE("runtime errors: names and strings") {
  CHECK(name(0) == "cudaSuccess");
  CHECK(text(0) == "no error");
  CHECK(name(1) == "cudaErrorInvalidValue");
  CHECK(text(1) == "invalid argument");
  CHECK(name(2) == "cudaErrorMemoryAllocation");
  CHECK(text(2) == "out of memory");
  CHECK(name(12) == "cudaErrorInvalidPitchValue");
  CHECK(text(12) == "invalid pitch argument");
  CHECK(name(21) == "cudaErrorInvalidMemcpyDirection");
  CHECK(text(21) == "invalid copy direction for memcpy");
  CHECK(name(35) == "cudaErrorInsufficientDriver");
  CHECK(text(35) == "CUDA driver version is insufficient for CUDA runtime version");
  CHECK(name(100) == "cudaErrorNoDevice");
  CHECK(text(100) == "no CUDA-capable device is detected");
  CHECK(name(101) == "cudaErrorInvalidDevice");
  CHECK(text(101) == "invalid device ordinal");
  CHECK(name(400) == "cudaErrorInvalidResourceHandle");
  CHECK(text(400) == "invalid resource handle");
  CHECK(name(600) == "cudaErrorNotReady");
  CHECK(text(600) == "device not ready");
  CHECK(name(700) == "cudaErrorIllegalAddress");
  CHECK(text(700) == "an illegal memory access was encountered");
  CHECK(name(709) == "cudaErrorContextIsDestroyed");
  CHECK(text(709) == "context is destroyed");
  CHECK(name(801) == "cudaErrorNotSupported");
  CHECK(text(801) == "operation not supported");
  CHECK(name(999) == "cudaErrorUnknown");
  CHECK(text(999) == "unknown error");
  CHECK(name(10000) == "cudaErrorApiFailureBase");  // measured
  CHECK(text(10000) == "api failure base");
}

TEST_CASE("runtime errors: an unknown code") {
  for (int c : {1099, 1000, 10001, -1, 47}) {
    CHECK(name(c) == "unrecognized error code");
    CHECK(text(c) == "unrecognized error code");
  }
}

TEST_CASE("runtime errors: cudaGetLastError returns and resets, cudaPeekAtLastError only returns") {
  cudaGetLastError();
  CHECK_RT(cudaSetDevice(bad_device()), cudaErrorInvalidDevice);
  CHECK_RT(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  CHECK_RT(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidDevice);
  CHECK_RT(cudaGetLastError(), cudaSuccess);
  CHECK_RT(cudaPeekAtLastError(), cudaSuccess);
}

TEST_CASE("runtime errors: a later successful call keeps the last error") {
  cudaGetLastError();
  CHECK_RT(cudaSetDevice(bad_device()), cudaErrorInvalidDevice);
  void* p = nullptr;
  CHECK_RT(cudaMalloc(&p, 16), cudaSuccess);  // measured: not sticky, and does not clear it
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidDevice);
  CHECK_RT(cudaFree(p), cudaSuccess);
}

TEST_CASE("runtime errors: the last error is per thread") {
  cudaGetLastError();
  CHECK_RT(cudaSetDevice(bad_device()), cudaErrorInvalidDevice);
  cudaError_t other = cudaErrorUnknown;
  std::thread([&] { other = cudaGetLastError(); }).join();
  CHECK_RT(other, cudaSuccess);
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidDevice);
}

TEST_CASE("runtime errors: the newest failure replaces the last error") {
  cudaGetLastError();
  CHECK_RT(cudaSetDevice(bad_device()), cudaErrorInvalidDevice);
  CHECK_RT(cudaStreamDestroy(nullptr), cudaErrorInvalidResourceHandle);  // measured
  CHECK_RT(cudaGetLastError(), cudaErrorInvalidResourceHandle);
}

namespace {
struct Gate {
  std::atomic<bool> open{false};
};
void CUDART_CB wait_gate(void* g) {
  while (!static_cast<Gate*>(g)->open.load()) std::this_thread::yield();
}
}  // namespace

TEST_CASE("runtime errors: cudaErrorNotReady does not become the last error") {
  cudaStream_t s = nullptr;
  REQUIRE_RT(cudaStreamCreate(&s), cudaSuccess);
  cudaEvent_t e = nullptr;
  REQUIRE_RT(cudaEventCreate(&e), cudaSuccess);
  Gate gate;
  REQUIRE_RT(cudaLaunchHostFunc(s, wait_gate, &gate), cudaSuccess);
  REQUIRE_RT(cudaEventRecord(e, s), cudaSuccess);
  cudaGetLastError();
  CHECK_RT(cudaStreamQuery(s), cudaErrorNotReady);
  CHECK_RT(cudaEventQuery(e), cudaErrorNotReady);
  CHECK_RT(cudaGetLastError(), cudaSuccess);
  gate.open = true;
  CHECK_RT(cudaStreamSynchronize(s), cudaSuccess);
  CHECK_RT(cudaEventDestroy(e), cudaSuccess);
  CHECK_RT(cudaStreamDestroy(s), cudaSuccess);
}
